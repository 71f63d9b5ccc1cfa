"""The algorithms ``olboost run`` evaluates: how each is built from its committee of weak learners
and the options, and the options themselves (shared with ``olboost reproduce mlr``)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Random features per weak learner when ``--features`` is not given (Jung & Tewari 2018), or all
#: of them on a data set with fewer.
DEFAULT_FEATURES = 20


@dataclass(frozen=True)
class Algorithm:
    """A CLI algorithm: its task (``"ranking"`` or ``"multiclass"``), how to build it, and
    whether it is a booster over a committee of weak learners."""

    task: str
    build: Callable[[Any, argparse.Namespace], Any]
    committee: bool = True


def _booster(name: str, **options: str) -> Callable[[Any, argparse.Namespace], Any]:
    """Factory of the booster ``olboost.boosters.<name>``: each ``options`` item maps one of its
    parameters to the CLI option holding the value (options left unset keep the default)."""

    def build(committee: Any, args: argparse.Namespace) -> Any:
        import olboost.boosters as boosters

        extra = {
            key: getattr(args, attr)
            for key, attr in options.items()
            if getattr(args, attr) is not None
        }
        return getattr(boosters, name)(committee, learners=args.learners, seed=args.seed, **extra)

    return build


def _label_ranker(committee: Any, args: argparse.Namespace) -> Any:
    """A linear label ranker (no committee; see :mod:`olboost.ranking_experiments`)."""
    from olboost import ranking_experiments

    return ranking_experiments.build_ranker(committee, args)


#: CLI algorithm name -> what it solves and how to build it from a committee and the options.
ALGORITHMS: dict[str, Algorithm] = {
    "ada-olmr": Algorithm("ranking", _booster("AdaOLMR", predict_with="predict_with")),
    "online-bmr": Algorithm(
        "ranking", _booster("OnlineBMR", gamma="gamma", loss="bmr_loss", method="method")
    ),
    "online-mbbm": Algorithm(
        "multiclass", _booster("OnlineMBBM", gamma="gamma", method="method", vote="vote")
    ),
    "adaboost-olm": Algorithm("multiclass", _booster("AdaBoostOLM", loss="olm_loss", vote="vote")),
    "best-tree": Algorithm("multiclass", _booster("BestTree")),
    "oza-boost": Algorithm("multiclass", _booster("OzaBoost")),
    "ova-adaboost-ol": Algorithm("multiclass", _booster("OvaAdaBoostOL", loss="olm_loss")),
    "ada-ova": Algorithm("multiclass", _booster("AdaOVA", loss="olm_loss")),
    "topk-bbm": Algorithm(
        "ranking", _booster("TopkBBM", k="k", exploration="exploration", rho="rho", gamma="gamma")
    ),
    "topk-adaptive": Algorithm(
        "ranking", _booster("TopkAdaptive", k="k", exploration="exploration", rho="rho")
    ),
    "label-ranker": Algorithm("ranking", _label_ranker, committee=False),
}


def _features(args: argparse.Namespace) -> int | None:
    """Features per weak learner: ``--features``, or :data:`DEFAULT_FEATURES` when not given
    (``reproduce multiclass``: ``None``, all of them)."""
    features = getattr(args, "features", None)
    return DEFAULT_FEATURES if features is None else features


def _vfdt(args: argparse.Namespace, nominal: dict[int, int]) -> Any:
    from olboost.weak.vfdt import VFDTCommittee

    return VFDTCommittee(n_features=_features(args), nominal_attributes=nominal or None)


def _river(args: argparse.Namespace, nominal: dict[int, int]) -> Any:
    from olboost.weak.river import RiverCommittee

    return RiverCommittee(n_features=_features(args))


#: CLI committee name -> factory(args, nominal cardinalities).
COMMITTEES: dict[str, Callable[[argparse.Namespace, dict[int, int]], Any]] = {
    "vfdt": _vfdt,
    "river": _river,
}


def _add_committee_options(p: argparse.ArgumentParser, committee: bool = True) -> None:
    p.add_argument("--learners", type=int, default=100, help="number N of weak learners")
    if committee:
        p.add_argument(
            "--committee",
            choices=sorted(COMMITTEES),
            default="vfdt",
            help="vfdt: compiled Hoeffding trees (fast); river: River HoeffdingTreeClassifier",
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
        choices=["sampled", "best"],
        default="sampled",
        help="Ada.OLMR: expert chosen by a Hedge draw (paper) or the best Hedge weight",
    )
    if gamma:
        p.add_argument(
            "--gamma", type=float, default=0.1, help="edge of online-bmr/online-mbbm/topk-bbm"
        )
    p.add_argument(
        "--bmr-loss",
        choices=["hinge", "rank", "hinge_no_margin"],
        default="hinge",
        help="loss behind OnlineBMR's potentials",
    )
    p.add_argument(
        "--method",
        choices=["exact", "monte_carlo"],
        default="exact",
        help="potentials of online-bmr/online-mbbm: exact or Monte Carlo (100 draws)",
    )


def _add_multiclass_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--olm-loss",
        choices=["logistic", "exponential", "square_hinge"],
        default="logistic",
        help="surrogate loss of adaboost-olm and the one-vs-all boosters (App. D)",
    )
    p.add_argument(
        "--vote",
        choices=["argmax", "expected_cost", "proba"],
        help="weak predictions of online-mbbm/adaboost-olm: argmax of the learner's distribution "
        "(default), class of least expected cost (the authors' code), or the distribution "
        "(adaboost-olm only)",
    )


def _add_topk_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--k",
        type=int,
        default=3,
        help="topk-bbm/topk-adaptive: labels shown, whose relevance is revealed (2 <= k <= m; "
        "3 with single-swap) (default: %(default)s)",
    )
    p.add_argument(
        "--exploration",
        choices=["uniform", "single-swap"],
        default="uniform",
        help="topk-bbm/topk-adaptive: randomisation of the shown ranking, uniform (Sec. 2.2) or "
        "single-swap (App. B.1) (default: %(default)s)",
    )
    p.add_argument(
        "--rho",
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
