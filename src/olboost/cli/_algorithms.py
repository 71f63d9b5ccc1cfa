"""The algorithms ``olboost run`` evaluates: how each is built from its committee of weak learners
and the options, and the options themselves (shared with ``olboost reproduce mlr``)."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Random features per weak learner when ``--features`` is not given (Jung & Tewari 2018), or all
#: of them on a data set with fewer.
DEFAULT_FEATURES = 20


#: The options of the committee of weak learners: of every booster and of no other algorithm
#: (``--features`` is refused apart, with the data set at hand).
COMMITTEE_OPTIONS = ("learners", "committee")

#: The options of ``label-ranker`` (``--fields``: on Enron foldering data only).
RANKER_OPTIONS = ("update", "complexity", "C", "margin", "scale", "fields")

#: The CLI options (their ``dest``) that set a parameter of some algorithms and not others.
ALGORITHM_OPTIONS = (
    "predict_with", "gamma", "bmr_loss", "method", "olm_loss", "vote", "k", "exploration", "rho",
    *COMMITTEE_OPTIONS, *RANKER_OPTIONS,
)  # fmt: skip


class GivenOption(argparse.Action):
    """``store``, remembering in ``namespace.given_options`` that the option was given, so that
    one the chosen algorithm does not take can be refused rather than ignored."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        setattr(namespace, self.dest, values)
        given = set(getattr(namespace, "given_options", ()))
        given.add(self.dest)
        namespace.given_options = given


@dataclass(frozen=True)
class Algorithm:
    """A CLI algorithm: its task (``"ranking"`` or ``"multiclass"``), how to build it, whether
    it is a booster over a committee of weak learners, and which of :data:`ALGORITHM_OPTIONS` it
    takes."""

    task: str
    build: Callable[[Any, argparse.Namespace], Any]
    committee: bool = True
    options: tuple[str, ...] = ()

    @property
    def takes(self) -> tuple[str, ...]:
        """The options of :data:`ALGORITHM_OPTIONS` it takes."""
        return (*self.options, *(COMMITTEE_OPTIONS if self.committee else ()))

    def check_options(self, name: str, args: argparse.Namespace) -> None:
        """A ``ValueError`` for an option given on the command line that ``name`` does not
        take (it would be ignored)."""
        for dest in sorted(getattr(args, "given_options", ())):
            if dest in ALGORITHM_OPTIONS and dest not in self.takes:
                takes = ", ".join(f"--{o.replace('_', '-')}" for o in self.takes) or "none"
                raise ValueError(
                    f"--{dest.replace('_', '-')}: not an option of {name} (of these options "
                    f"it takes: {takes})"
                )


def _booster(task: str, name: str, **options: str) -> Algorithm:
    """The booster ``olboost.boosters.<name>`` as an algorithm of ``task``: each ``options`` item
    maps one of its parameters to the CLI option holding the value (options left unset keep the
    default); those options are the ones it takes."""

    def build(committee: Any, args: argparse.Namespace) -> Any:
        import olboost.boosters as boosters

        extra = {
            key: getattr(args, attr)
            for key, attr in options.items()
            if getattr(args, attr) is not None
        }
        return getattr(boosters, name)(committee, learners=args.learners, seed=args.seed, **extra)

    return Algorithm(task, build, options=tuple(options.values()))


def _label_ranker(committee: Any, args: argparse.Namespace) -> Any:
    """A linear label ranker (no committee; see :mod:`olboost.ranking_experiments`)."""
    from olboost import ranking_experiments

    return ranking_experiments.build_ranker(committee, args)


_ADAPTIVE_MULTICLASS = {"loss": "olm_loss", "vote": "vote", "predict_with": "predict_with"}
_TOPK = {"k": "k", "exploration": "exploration", "rho": "rho"}

#: CLI algorithm name -> what it solves and how to build it from a committee and the options.
ALGORITHMS: dict[str, Algorithm] = {
    "ada-olmr": _booster("ranking", "AdaOLMR", predict_with="predict_with"),
    "online-bmr": _booster("ranking", "OnlineBMR", gamma="gamma", loss="bmr_loss", method="method"),
    "online-mbbm": _booster(
        "multiclass", "OnlineMBBM", gamma="gamma", method="method", vote="vote"
    ),
    "adaboost-olm": _booster("multiclass", "AdaBoostOLM", **_ADAPTIVE_MULTICLASS),
    "best-tree": _booster("multiclass", "BestTree"),
    "oza-boost": _booster("multiclass", "OzaBoost"),
    "ova-adaboost-ol": _booster("multiclass", "OvaAdaBoostOL", **_ADAPTIVE_MULTICLASS),
    "ada-ova": _booster("multiclass", "AdaOVA", **_ADAPTIVE_MULTICLASS),
    "topk-bbm": _booster(
        "ranking", "TopkBBM", **_TOPK, gamma="gamma", loss="bmr_loss", method="method"
    ),
    "topk-adaptive": _booster("ranking", "TopkAdaptive", **_TOPK, predict_with="predict_with"),
    "label-ranker": Algorithm("ranking", _label_ranker, committee=False, options=RANKER_OPTIONS),
}


def _features(args: argparse.Namespace) -> int | None:
    """Features per weak learner: ``--features``, or :data:`DEFAULT_FEATURES` when not given
    (``reproduce multiclass``: ``None``, all of them)."""
    features = getattr(args, "features", None)
    return DEFAULT_FEATURES if features is None else features


def _vfdt(args: argparse.Namespace, nominal: dict[int, int], **rules: str) -> Any:
    from olboost.weak.vfdt import VFDTCommittee

    return VFDTCommittee(n_features=_features(args), nominal_attributes=nominal or None, **rules)


def _river(args: argparse.Namespace, nominal: dict[int, int]) -> Any:
    from olboost.weak.river import RiverCommittee

    if not nominal:
        return RiverCommittee(n_features=_features(args))
    from river.tree import HoeffdingTreeClassifier

    # the committee's default tree, told which columns (its inputs' keys) are nominal, as
    # --committee vfdt is: without it River split the category codes by thresholds
    tree = HoeffdingTreeClassifier(leaf_prediction="mc", nominal_attributes=sorted(nominal))
    return RiverCommittee(model=tree, n_features=_features(args))


def _linear(args: argparse.Namespace, nominal: dict[int, int]) -> Any:
    from olboost.weak.linear import LinearCommittee

    return LinearCommittee(n_features=_features(args))


def _mixed(args: argparse.Namespace, nominal: dict[int, int]) -> Any:
    from olboost.weak.linear import LinearCommittee
    from olboost.weak.mixed import _DEFAULT_SHARES, MixedCommittee

    # MixedCommittee()'s parts and shares, on --features and the data set's nominal columns
    parts = [
        _vfdt(args, nominal),
        LinearCommittee(n_features=_features(args)),
        LinearCommittee(n_features=_features(args), average=False),
    ]
    return MixedCommittee(parts, shares=list(_DEFAULT_SHARES))


#: CLI committee name -> factory(args, nominal cardinalities).
COMMITTEES: dict[str, Callable[[argparse.Namespace, dict[int, int]], Any]] = {
    "vfdt": _vfdt,
    # the trees of the papers' code, as reproduce topk grows them: the port of Weka's
    # HoeffdingTree, whose nominal splits are multiway only
    "vfdt-weka": functools.partial(_vfdt, semantics="weka_port", nominal_splits="multiway"),
    "river": _river,
    "linear": _linear,
    "mixed": _mixed,
}


def _add_committee_options(p: argparse.ArgumentParser, committee: bool = True) -> None:
    p.add_argument(
        "--learners", type=int, action=GivenOption, default=100, help="number N of weak learners"
    )
    if committee:
        p.add_argument(
            "--committee",
            action=GivenOption,
            choices=sorted(COMMITTEES),
            default="vfdt",
            help="vfdt: compiled Hoeffding trees (fast) with the rules of River's "
            "HoeffdingTreeClassifier; vfdt-weka: the same, with the rules of the port of Weka's "
            "HoeffdingTree that the papers' code used (as reproduce topk); river: River's "
            "HoeffdingTreeClassifier itself; linear: Shalev-Shwartz & Singer's label rankers "
            "(LinearCommittee, Update III; a nominal attribute is read as its code); mixed: "
            "half vfdt trees, half linear rankers (MixedCommittee's default mix)",
        )
    p.add_argument(
        "--features",
        type=int,
        help=f"random features per weak learner (default: {DEFAULT_FEATURES}, or all of a data "
        "set with fewer; more than the data set has is an error)",
    )


def _add_ranking_options(p: argparse.ArgumentParser, gamma: bool = True) -> None:
    p.add_argument(
        "--predict-with",
        action=GivenOption,
        choices=["sampled", "best"],
        default="sampled",
        help="ada-olmr, adaboost-olm, the one-vs-all boosters, topk-adaptive: expert chosen by a "
        "Hedge draw (paper) or the best Hedge weight",
    )
    if gamma:
        p.add_argument(
            "--gamma",
            type=float,
            action=GivenOption,
            default=0.1,
            help="edge of online-bmr/online-mbbm/topk-bbm",
        )
    p.add_argument(
        "--bmr-loss",
        action=GivenOption,
        choices=["hinge", "rank", "hinge_no_margin"],
        default="hinge",
        help="loss behind the potentials of online-bmr and topk-bbm (topk-bbm's rank loss counts a "
        "tie as a whole error, as Raman et al. 2020 define it)",
    )
    p.add_argument(
        "--method",
        action=GivenOption,
        choices=["exact", "monte_carlo"],
        default="exact",
        help="potentials of online-bmr/online-mbbm/topk-bbm: exact or Monte Carlo (100 draws)",
    )


def _add_multiclass_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--olm-loss",
        action=GivenOption,
        choices=["logistic", "exponential", "square_hinge"],
        default="logistic",
        help="surrogate loss of adaboost-olm and the one-vs-all boosters (App. D)",
    )
    p.add_argument(
        "--vote",
        action=GivenOption,
        choices=["argmax", "expected_cost", "proba"],
        default="argmax",
        help="weak predictions of online-mbbm, adaboost-olm and the one-vs-all boosters: argmax "
        "of the learner's distribution (default), class of least expected cost (the authors' "
        "code), or the distribution (not online-mbbm)",
    )


def _add_topk_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--k",
        action=GivenOption,
        type=int,
        default=3,
        help="topk-bbm/topk-adaptive: labels shown, whose relevance is revealed (2 <= k <= m; "
        "k >= 3 with single-swap) (default: %(default)s)",
    )
    p.add_argument(
        "--exploration",
        action=GivenOption,
        choices=["uniform", "single-swap"],
        default="uniform",
        help="topk-bbm/topk-adaptive: randomisation of the shown ranking, uniform (Sec. 2.2) or "
        "single-swap (App. B.1) (default: %(default)s)",
    )
    p.add_argument(
        "--rho",
        action=GivenOption,
        type=float,
        default=0.02,
        help="topk-bbm/topk-adaptive: exploration rate in (0, 1); < 0.25 with single-swap "
        "(default: %(default)s)",
    )
    p.add_argument(
        "--loops",
        type=int,
        default=1,
        help="passes over the train split before the test split (data with a train/test split; "
        "Raman et al. 2020 use up to 20 for the top-k algorithms) (default: %(default)s)",
    )
