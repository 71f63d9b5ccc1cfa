"""Extending olboost as its docstrings say: a booster subclass with a step of its own, a committee
of one's own (``olboost.weak.base.Committee``), and what the boosters check of it."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from olboost import AdaOLMR, OnlineBMR, TopkAdaptive, VFDTCommittee
from olboost.boosters.base import RankingBooster
from olboost.checks import synthetic_multilabel
from olboost.weak.base import Committee


class HalfWeights(AdaOLMR):
    """A step of its own in Python: Ada.OLMR's weights, halved."""

    def _update(self, H, target):
        return 0.5 * super()._update(H, target)


class HalfScores(AdaOLMR):
    def _scores(self, H):
        return 0.5 * super()._scores(H)


def _one_at_a_time(model, X, Y):
    """The scores ``model`` gives each row of ``X`` before it learns it with ``learn_one``."""
    scores = []
    for x, y in zip(X, Y, strict=True):
        scores.append(list(model.score_one(x).values()))
        model.learn_one(x, set(np.flatnonzero(y).tolist()))
    return scores


@pytest.mark.parametrize("cls", ["HalfWeights", "HalfScores", "MixedInHalfScores"])
def test_a_subclass_step_runs_on_the_array_paths_too(cls):
    cls = globals()[cls]
    # the driver ran the compiled step the subclass inherits: learn(X, Y) learned as AdaOLMR
    # while learn_one ran the override
    X, Y = synthetic_multilabel(n=60, k=4)

    def make(c=cls):
        return c(VFDTCommittee(n_features=3), learners=3, seed=1, labels=4)

    one = make()
    scores = _one_at_a_time(one, X, Y)
    arrays = make()
    np.testing.assert_array_equal(arrays.score_then_learn(X, Y), scores)
    assert pickle.dumps(arrays) == pickle.dumps(one)
    if cls is HalfWeights:  # the override is what learned: not Ada.OLMR's weights
        assert pickle.dumps(make(AdaOLMR).learn(X, Y).committee_) != pickle.dumps(one.committee_)


class HalvesScores:
    """A mixin put before the booster it changes."""

    def _scores(self, H):
        return 0.5 * super()._scores(H)


class MixedInHalfScores(HalvesScores, AdaOLMR):
    pass


class FlatPredictions:
    def predict(self, x):
        H = super().predict(x)
        return np.full_like(H, 1.0 / H.shape[1])


class MixedInFlat(FlatPredictions, VFDTCommittee):
    pass


def _public_classes(module_names, base):
    import importlib
    import inspect

    found = set()
    for name in module_names:
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, base) and cls.__module__.startswith("olboost."):
                found.add(cls)
    return found


def test_olboost_own_boosters_and_committees_keep_the_compiled_path():
    # the rule that runs a subclass's own step from Python must not catch olboost's own
    # classes: every one of them would lose its compiled path, many times slower
    from olboost.boosters import base
    from olboost.weak import base as weak

    boosters = _public_classes(
        ["olboost", "olboost.boosters", "olboost.boosters.baselines"], base.Booster
    )
    assert len(boosters) >= 11
    assert not [cls for cls in boosters if base._overrides_the_step(cls)]
    committees = _public_classes(["olboost", "olboost.weak"], Committee)
    compiled = [cls for cls in committees if "compiled" in vars(cls)]
    assert len(compiled) >= 3  # the trees, the linear rankers, the mix
    assert not [cls for cls in compiled if weak._overrides_the_kernels(cls)]
    for cls in (HalfWeights, HalfScores, MixedInHalfScores):
        assert base._overrides_the_step(cls)
    assert weak._overrides_the_kernels(MixedInFlat)


@pytest.mark.parametrize("form", ["subclass", "mixin"])
def test_a_committee_subclass_predicting_otherwise_does_so_on_the_array_paths(form):
    class Flat(VFDTCommittee):
        def predict(self, x):
            H = super().predict(x)
            return np.full_like(H, 1.0 / H.shape[1])

    committee = Flat if form == "subclass" else MixedInFlat
    X, Y = synthetic_multilabel(n=40, k=4)

    def make():
        return AdaOLMR(committee(n_features=3), learners=3, seed=1, labels=4)

    one = make()
    scores = _one_at_a_time(one, X, Y)
    np.testing.assert_array_equal(make().score_then_learn(X, Y), scores)


class ExtraRow(VFDTCommittee):
    def predict(self, x):
        H = super().predict(x)
        return np.vstack([H, H[:1]])


class NaNForLabelOne(VFDTCommittee):
    def predict(self, x):
        H = super().predict(x)
        H[-1, 1] = np.nan
        return H


class AList(VFDTCommittee):
    def predict(self, x):
        return super().predict(x).tolist()


@pytest.mark.parametrize(
    ("committee", "match"),
    [
        (
            ExtraRow,
            r"ExtraRow.predict must return an \(N, k\) = \(3, 4\) array, got shape \(4, 4\)",
        ),
        (NaNForLabelOne, r"NaNForLabelOne.predict: learner 2's prediction for label 1 is nan"),
        (AList, r"AList.predict must return an \(N, k\) = \(3, 4\) array, got list"),
    ],
)
@pytest.mark.parametrize("booster", [AdaOLMR, OnlineBMR, TopkAdaptive])
def test_a_committee_of_ones_own_that_predicts_no_n_by_k_array_is_refused(
    committee, match, booster
):
    # one row too many went unchecked into the compiled steps, which wrote past their arrays
    # (the process aborted: "corrupted size vs. prev_size"); a NaN made every score NaN
    X, Y = synthetic_multilabel(n=30, k=4)
    model = booster(VFDTCommittee(n_features=3), learners=3, seed=1, labels=4)
    model.learn(X[:10], Y[:10])
    model.committee_.__class__ = committee  # the same trees, predicting otherwise
    before = pickle.dumps(model)
    for call in (
        lambda: model.learn_one(X[10], {1}),
        lambda: model.score_one(X[10]),
        lambda: model.learn(X[10:], Y[10:]),
    ):
        with pytest.raises(ValueError, match=match):
            call()
        assert pickle.dumps(model) == before


class NoStep(RankingBooster):
    """A booster that implements neither step."""

    def __init__(self, committee=None, learners=2, seed=None, labels=None):
        self.committee = committee
        self.learners = learners
        self.seed = seed
        self.labels = labels
        self._validate_params()

    def _init_state(self):
        pass


class NoLearners(Committee):
    def __init__(self, n_features=None):
        self.n_features = n_features
        self.grace_period = self.split_confidence = self.tie_threshold = (0.5, 0.5)
        self.weight_multiplier = (1.0, 1.0)

    def predict(self, x):
        return np.full((self.n_learners_, self.n_labels_), 1.0 / self.n_labels_)

    def learn(self, x, weights):
        pass


def test_what_a_class_of_ones_own_lacks_is_said():
    # 'NoneType' object has no attribute 'step', and a bare NotImplementedError()
    X, Y = synthetic_multilabel(n=5, k=3)
    with pytest.raises(NotImplementedError, match=r"NoStep._update: a booster implements its"):
        NoStep(VFDTCommittee(n_features=2), labels=3).learn(X, Y)
    with pytest.raises(NotImplementedError, match="a committee implements _allocate"):
        NoLearners().start(2, 3, 4, 1)


def test_a_part_of_ones_own_in_a_mix_is_checked_by_name():
    # its extra row came out as NumPy's "could not be broadcast", its NaN blamed on the mix
    from olboost import MixedCommittee

    X, Y = synthetic_multilabel(n=30, k=4)
    for part, match in [
        (
            ExtraRow,
            r"ExtraRow.predict must return an \(N, k\) = \(1, 4\) array, got shape \(2, 4\)",
        ),
        (NaNForLabelOne, r"NaNForLabelOne.predict: learner .* for label 1 is nan"),
    ]:
        mix = MixedCommittee([VFDTCommittee(n_features=3), VFDTCommittee(n_features=3)])
        model = AdaOLMR(mix, learners=2, seed=1, labels=4).learn(X[:10], Y[:10])
        model.committee_.parts_[1].__class__ = part
        before = pickle.dumps(model)
        with pytest.raises(ValueError, match=match):
            model.learn_one(X[10], {1})
        assert pickle.dumps(model) == before


def test_a_subclass_constructor_of_any_form_runs_and_a_bad_call_names_the_class_made():
    # the wrapping that names the class in a call that does not fit: it planted a constructor
    # in a class without one (a dataclass then had none of its own), replaced one written with
    # functools.wraps by its parent's, and named the parent under a **kwargs constructor
    import copy
    import dataclasses
    import functools

    from olboost import AdaOLMR
    from olboost.base import Estimator, InstanceOf
    from olboost.checks import check_unknown_params
    from olboost.weak.base import Committee

    @dataclasses.dataclass
    class Thresholds(Estimator):
        low: float = 0.1
        high: float = 0.9

    assert Thresholds(low=0.2, high=0.8).high == 0.8
    # the constructor its decorator wrote, after the class was made, names the class meant too
    # (it said "Thresholds.__init__() got an unexpected keyword argument", failing the check)
    with pytest.raises(TypeError, match=r"^Thresholds\(\) got an unexpected keyword argument "
                       r"'hihg' \(did you mean 'high'\?\)"):  # fmt: skip
        Thresholds(hihg=0.5)
    check_unknown_params(Thresholds())

    @dataclasses.dataclass
    class Narrower(Thresholds):  # its parent's made first: each is wrapped at its own
        width: float = 0.5

    with pytest.raises(TypeError, match=r"^Narrower\(\) got an unexpected keyword argument "
                       r"'widht' \(did you mean 'width'\?\)"):  # fmt: skip
        Narrower(widht=0.5)
    assert copy.deepcopy(Narrower(width=0.25)) == Narrower(width=0.25)  # __new__ with no args

    class Counted(AdaOLMR):
        made = 0

        @functools.wraps(AdaOLMR.__init__)
        def __init__(self, *args, **kwargs):
            type(self).made += 1
            super().__init__(*args, **kwargs)

    assert Counted(learners=5).learners == 5 and Counted.made == 1
    with pytest.raises(TypeError) as said:  # said once (it was said twice, the hint too)
        Counted(lerners=5)
    assert str(said.value).startswith("Counted() got an unexpected keyword argument 'lerners'")
    assert str(said.value).count("did you mean") == 1

    class Typo(AdaOLMR):
        def __init__(self, learners=3, extra=1):
            self.extra = extra
            super().__init__(learners=learners, extr=extra)

    # the caller's call fits: the body's call to AdaOLMR's constructor does not
    with pytest.raises(TypeError, match=r"^AdaOLMR\(\) got an unexpected keyword argument 'extr'"):
        Typo(learners=3)

    class Two(AdaOLMR):
        def __init__(self, a=1, b=2):
            super().__init__()

    # Python's counts include self ("takes from 1 to 3 positional arguments but 4 were given")
    with pytest.raises(TypeError) as said:
        Two(0, 1, 2)
    assert str(said.value) == "Two() too many positional arguments; its parameters are a, b"

    class Forwarding(AdaOLMR):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)

    with pytest.raises(TypeError, match=r"^Forwarding\(\) got an unexpected keyword argument "
                       r"'lerners' \(did you mean 'learners'\?\)"):  # fmt: skip
        Forwarding(lerners=3)

    class Bare(Committee):
        pass

    with pytest.raises(TypeError, match=r"^Bare\(\) takes no arguments"):
        Bare(1)
    with pytest.raises(TypeError, match=r"p must be of type int \| str, got float"):
        InstanceOf(int | str).check("p", 1.5)
