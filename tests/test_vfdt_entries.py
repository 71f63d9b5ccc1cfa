"""The label-sparse leaves of :class:`olboost.weak.vfdt.VFDTCommittee` (issue #11): a leaf's
class statistics are entries, one per class it met, in its tree's entry rows
(:mod:`olboost.weak._vfdt_kernels`, "Layout"). Their results are the dense rows' bit for bit
(``tests/test_vfdt.py`` checks the trees against a reference; the pinned scores hold); here, the
layout's own invariants, compaction, the bound that keeps every write inside the rows, and
committees pickled with the dense rows."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from olboost import AdaOLMR
from olboost.datasets import make_label_stream
from olboost.weak import _vfdt_kernels as K
from olboost.weak._vfdt_storage import entries_needed
from olboost.weak.vfdt import VFDTCommittee

DATA = Path(__file__).parent / "data"


def check_entries(c: VFDTCommittee) -> int:
    """Assert the layout's invariants; returns the live entries."""
    width = c.entry_label_.shape[1]
    live = 0
    for i in range(c.n_learners_):
        top = int(c.entry_top_[i])
        assert top <= width, (i, top, width)  # no allocation ran past the rows
        spans = []
        for slot in c._live_slots(i).tolist():
            start, room = int(c.leaf_start_[slot]), int(c.leaf_room_[slot])
            n = int(c.leaf_n_present_[slot])
            assert 0 <= n <= room and start + room <= top, (i, slot)
            assert n <= c.entry_widest_[i]
            order = c.entry_present_[i, start : start + n]
            assert sorted(order.tolist()) == list(range(n))  # a permutation of the positions
            classes = c.entry_label_[i, start + order]
            assert (np.diff(classes) > 0).all() and (classes >= 0).all()
            assert (classes < c.n_labels_).all()
            # an entry is a class the leaf met: some weight, or listed by a split
            weights = c.entry_class_[i, start + order]
            assert ((weights != 0.0) | c.entry_listed_[i, start + order]).all()
            spans.append((start, start + room))
            live += n
        spans.sort()
        # leaves do not overlap
        assert all(a[1] <= b[0] for a, b in zip(spans[:-1], spans[1:], strict=True)), i
    return live


def label_stream(rows, k, seed=0):
    X, Y = make_label_stream(rows, k, 5, 20, seed)
    return X, Y.astype(np.float64)


def learned(k, rows, learned_rows, n, seed):
    """A committee of ``n`` trees (8 features each) that learned the first ``learned_rows`` of a
    ``rows``-row, ``k``-label stream, every tree every relevant label; and the stream."""
    X, Y = label_stream(rows, k, seed=seed)
    c = VFDTCommittee(n_features=8, grace_period=(2.0, 6.0))
    c.start(n, k, X.shape[1], seed=seed + 1)
    for t in range(learned_rows):
        c.learn(X[t], np.tile(Y[t], (n, 1)))
    return c, X, Y


@pytest.mark.parametrize("mode", ["mc", "nba", "weka"])
def test_entries_hold_the_classes_each_leaf_met(mode):
    """After a 400-label stream, every live leaf's entries are the classes it met (some weight,
    or listed), once each, in class order, inside its own room."""
    k = 400
    X, Y = label_stream(300, k)
    params = {"semantics": "weka_port"} if mode == "weka" else {"leaf_prediction": mode}
    c = VFDTCommittee(n_features=10, grace_period=(3.0, 10.0), **params)
    c.start(6, k, X.shape[1], seed=1)
    rng = np.random.default_rng(2)
    for t in range(len(X)):
        # a few labels per tree, relevant ones and others, as a booster weighs them
        w = Y[t] * rng.uniform(0.5, 2.0, size=(6, k))
        w[:, rng.integers(0, k, 3)] = 0.3
        c.learn(X[t], w)
        if t % 50 == 49:
            check_entries(c)
    live = check_entries(c)
    dense = c._dense_leaf_rows()
    # the entries are exactly the dense rows' present classes
    assert live == int(sum(c.leaf_n_present_[c._live_slots(i)].sum() for i in range(6)))
    assert live == int((dense["leaf_class_"] != 0.0).sum() + (
        dense["leaf_listed_"] & (dense["leaf_class_"] == 0.0)).sum())  # fmt: skip


def test_memory_follows_the_labels_that_occur():
    """The same stream with its labels spread over 10 times as many (label ``c`` becomes
    ``10 c``): the same trees, and entry rows of the same size, whatever ``k``. Only rows of
    ``k`` per tree (``work_`` and the kept sums' flags), not per leaf, grow with it."""
    k = 300
    X, Y = label_stream(400, k, seed=1)
    committees = []
    for spread in (1, 10):
        Ys = np.zeros((len(Y), k * spread))
        Ys[:, ::spread] = Y
        c = VFDTCommittee(n_features=10, grace_period=(3.0, 10.0))
        c.start(8, k * spread, X.shape[1], seed=1)
        for t in range(len(X)):
            c.learn(X[t], np.tile(Ys[t], (8, 1)))
        check_entries(c)
        committees.append(c)
    narrow, wide = committees
    assert wide.leaf_counts().sum() > 100
    for name in ("node_kind_", "node_value_", "block_gauss_", "leaf_start_", "leaf_room_"):
        assert np.array_equal(getattr(narrow, name), getattr(wide, name)), name
    for name in narrow._empty_entries(0):
        a, b = getattr(narrow, name), getattr(wide, name)
        assert a.shape == b.shape, name
        if name != "entry_label_":
            assert np.array_equal(a, b), name
    assert np.array_equal(narrow.entry_label_ * 10, wide.entry_label_)


def test_compaction_changes_no_result():
    """Compacting every tree's rows after every example (leaves move, positions stay) gives
    the same predictions and trees, bit for bit, as compacting only when needed."""
    k = 120
    X, Y = label_stream(250, k, seed=3)
    a, b = (VFDTCommittee(n_features=8, grace_period=(2.0, 6.0)) for _ in range(2))
    for c in (a, b):
        c.start(4, k, X.shape[1], seed=5)
    compactions = 0
    for t in range(len(X)):
        w = np.tile(Y[t], (4, 1))
        assert np.array_equal(a.predict(X[t]), b.predict(X[t])), t
        a.learn(X[t], w)
        b.learn(X[t], w)
        before = b.leaf_start_.copy()
        b._compact_entries(0)
        compactions += not np.array_equal(before, b.leaf_start_)
    assert compactions > 20  # the leaves really moved (40 times of 250 here)
    check_entries(b)
    for name in ("node_kind_", "node_value_", "block_gauss_"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    rows_a, rows_b = a._dense_leaf_rows(), b._dense_leaf_rows()
    for name in rows_a:
        assert np.array_equal(rows_a[name], rows_b[name]), name


def test_entries_needed_bounds_every_label(monkeypatch):
    """The room a tree checks for before each label covers the worst label: a new class to the
    leaf, a move, then a split. Checked against its formula, then under stress: weights large
    enough that every label learned passes the grace period, random labels besides the relevant
    ones, and the layout's invariants after every call (an allocation past the rows would leave
    ``entry_top_`` above their width). Calls stopped between labels for room, and resumed."""
    # widest leaf 3: (3 + 1 + MIN_ROOM) entries per leaf, 2 + 2 + 1 leaves per label
    assert entries_needed(3, 2) == (2 + 3) * (3 + 1 + K.MIN_ROOM)
    stops = []
    compact = VFDTCommittee._compact_entries

    def counting(self, needed):
        stops.append(bool(self.progress_.any()))  # some tree learned part of the example
        compact(self, needed)

    monkeypatch.setattr(VFDTCommittee, "_compact_entries", counting)
    k = 60
    X, Y = label_stream(200, k, seed=4)
    c = VFDTCommittee(
        n_features=8, grace_period=(30.0, 30.0), weight_multiplier=(1.0, 1.0),
        split_confidence=(0.9, 0.9), tie_threshold=(0.9, 0.9),
    )  # fmt: skip
    c.start(3, k, X.shape[1], seed=6)
    rng = np.random.default_rng(7)
    most_splits = 0
    for t in range(len(X)):
        w = np.zeros((3, k))
        labels = np.concatenate([np.flatnonzero(Y[t]), rng.choice(k, 3, replace=False)])
        w[:, labels] = rng.uniform(5.0, 50.0, size=(3, len(labels)))
        before = c.leaf_counts()
        c.learn(X[t], w)
        check_entries(c)  # top <= width after every call: nothing was written past the rows
        most_splits = max(most_splits, int((c.leaf_counts() - before).max()))
    # splits happened inside calls; one per call at most here: a new leaf's observers are
    # empty, so its first attempt finds no split
    assert most_splits >= 1 and c.leaf_counts().sum() > 150
    assert any(stops)  # a call stopped after some trees had learned some labels


def _wide(c: VFDTCommittee) -> VFDTCommittee:
    """``c`` with entry rows so wide that no call of the tests below stops for room."""
    c._compact_entries(50_000)
    return c


@pytest.mark.parametrize("n_threads", [1, 2])
def test_a_call_stopped_for_entries_resumes_bit_for_bit(n_threads, monkeypatch):
    """A learn call that stops between labels for entries (some trees done, one part way) and
    resumes after the compaction ends in the trees, statistics and predictions of a call that
    never stopped, bit for bit; on one thread or two (each tree resumes where it stopped)."""
    k, n = 150, 4
    X, Y = label_stream(160, k, seed=11)
    rng = np.random.default_rng(12)
    params = {"n_features": 8, "grace_period": (2.0, 6.0), "n_threads": n_threads}
    stopping, wide = VFDTCommittee(**params), VFDTCommittee(**params)
    for c in (stopping, wide):
        c.start(n, k, X.shape[1], seed=13)
    _wide(wide)
    stops = []
    compact = VFDTCommittee._compact_entries

    def counting(self, needed):
        stops.append(bool(self.progress_.any()))
        compact(self, needed)

    monkeypatch.setattr(VFDTCommittee, "_compact_entries", counting)
    for t in range(len(X)):
        # dozens of labels per example, most new to the leaves: rows short part way through
        w = np.zeros((n, k))
        w[:, np.flatnonzero(Y[t])] = 1.0
        w[:, rng.choice(k, 40, replace=False)] = rng.uniform(0.1, 3.0, size=(n, 40))
        assert np.array_equal(stopping.predict(X[t]), wide.predict(X[t])), t
        stopping.learn(X[t], w)
        wide.learn(X[t], w)
        assert not stopping.progress_.any()  # 0 between calls
    check_entries(stopping)
    assert sum(stops) >= 3  # calls stopped part way (of 10 compactions here)
    for name in ("node_kind_", "node_value_", "node_feature_", "n_nodes_", "block_gauss_"):
        assert np.array_equal(getattr(stopping, name), getattr(wide, name)), name
    rows, wide_rows = stopping._dense_leaf_rows(), wide._dense_leaf_rows()
    for name in rows:
        assert np.array_equal(rows[name], wide_rows[name]), name


def test_rows_follow_the_entries_of_many_label_examples():
    """Trees that never split (max_depth=0) over 300 labels, the examples weighing up to every
    label: each tree's one leaf holds at most 300 entries, and its rows stay within a small
    multiple of that (they were reserved for the worst example, a split at every label, and
    reached 939,624 entries per tree here)."""
    k, n = 300, 3
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(k, 4))
    c = VFDTCommittee(n_features=2, max_depth=0)
    c.start(n, k, X.shape[1], seed=1)
    for t in range(k):
        w = np.zeros((n, k))
        w[:, rng.permutation(k)[: t + 1]] = 1.0
        c.learn(X[t], w)
    assert (c.leaf_counts() == 1).all() and (c.leaf_n_present_[:n] == k).all()
    check_entries(c)
    # the leaf's room (up to 2 k after doubling) and the room of one more label, twice
    # over (_compact_entries), with slack: 16 k
    assert c.entry_label_.shape[1] <= 16 * k, c.entry_label_.shape


def test_a_failed_room_request_abandons_the_example(monkeypatch):
    """A compaction that fails (MemoryError) after a call stopped part way through an example
    leaves no trace of where it stopped: the next call, another example's, learns all of its
    own labels, as a copy of the committee with nothing recorded (a resume point left behind
    would skip labels of the next example)."""
    k, n = 150, 3
    X, _ = label_stream(40, k, seed=14)
    c = VFDTCommittee(n_features=8, grace_period=(2.0, 6.0))
    c.start(n, k, X.shape[1], seed=15)
    rng = np.random.default_rng(16)
    part_way = []

    def no_memory(self, needed):
        part_way.append(bool(self.progress_.any()))
        raise MemoryError(f"{needed} entries")

    twin = None
    for t in range(len(X)):
        w = np.zeros((n, k))
        w[:, rng.choice(k, 60, replace=False)] = 1.0
        if twin is None:
            with monkeypatch.context() as m:
                m.setattr(VFDTCommittee, "_compact_entries", no_memory)
                try:
                    c.learn(X[t], w)
                except MemoryError:
                    if not part_way[-1]:
                        continue  # it stopped before any tree learned: try the next example
                    twin = pickle.loads(pickle.dumps(c))
                    twin.progress_[:] = 0
            continue
        c.learn(X[t], w)
        twin.learn(X[t], w)
    assert twin is not None
    # attribute by attribute (the pickles of the whole differ by NumPy's dtype objects: an
    # unpickled array has its own, which pickle's memo then writes again)
    assert vars(c).keys() == vars(twin).keys()
    for name, value in vars(c).items():
        assert pickle.dumps(value) == pickle.dumps(getattr(twin, name)), name


@pytest.mark.parametrize("mixed", [False, True])
def test_an_interrupt_between_the_calls_of_an_example_leaves_no_resume_point(mixed, monkeypatch):
    """An exception between a learn call that stopped part way and its repetition (here a
    KeyboardInterrupt as the room is made) leaves nothing recorded of where it stopped, in the
    trees and, in a mixed committee, in the mix: the next example is learned from its start."""
    from olboost.weak import LinearCommittee, MixedCommittee

    k, n = 150, 3
    X, _ = label_stream(40, k, seed=17)
    trees = VFDTCommittee(n_features=8, grace_period=(2.0, 6.0))
    c = MixedCommittee([trees, LinearCommittee()], shares=[2, 1]) if mixed else trees
    c.start(n, k, X.shape[1], seed=18)
    tree_part = c.parts_[0] if mixed else c
    rng = np.random.default_rng(19)
    make_room = VFDTCommittee.make_room
    interrupted = []

    def interrupting(self, status, demand):
        if status == K.LEARN_GROW_ENTRIES and self.progress_.any() and not interrupted:
            interrupted.append(True)
            raise KeyboardInterrupt
        make_room(self, status, demand)

    monkeypatch.setattr(VFDTCommittee, "make_room", interrupting)
    for t in range(len(X)):
        w = np.zeros((n, k))
        w[:, rng.choice(k, 60, replace=False)] = 1.0
        try:
            c.learn(X[t], w)
        except KeyboardInterrupt:
            assert not tree_part.progress_.any()
            if mixed:
                assert not c.progress_.any()
    assert interrupted


def test_abandoned_examples_give_back_what_their_trees_were_lent(monkeypatch):
    """An abandoned example (its room request failed part way) gives back the slots and blocks
    lent for it, and the blocks a leaf reset while learning its first labels, as the end of a
    call does: the next call's lending counts on a tree holding one example's share at most
    (after four abandons in a row the free-block stack was written past its end)."""
    compact = VFDTCommittee._compact_entries

    def tight_or_failing(self, needed):
        if self.progress_.any():  # a room request part way through an example fails
            raise MemoryError("no room")
        compact(self, needed)
        used = int(self.entry_top_.max())  # rows with just the room asked for
        for name in self._empty_entries(0):
            setattr(self, name, np.ascontiguousarray(getattr(self, name)[:, : used + needed]))

    monkeypatch.setattr(VFDTCommittee, "_compact_entries", tight_or_failing)
    k, d, categories = 5, 3, 6
    rng = np.random.default_rng(0)
    c = VFDTCommittee(
        n_features=d, grace_period=(10.0, 10.0), weight_multiplier=(1.0, 1.0),
        nominal_attributes={0: categories}, nominal_splits="multiway",
        split_confidence=(0.9, 0.9), tie_threshold=(0.9, 0.9),
    )  # fmt: skip
    c.start(1, k, d, seed=1)

    def x_of(v):
        x = rng.normal(size=d)
        x[0] = v
        return x

    for t in range(60):  # the root splits on the nominal attribute
        w = np.zeros((1, k))
        w[0, 1 + t % categories % 4] = 1.0
        c.learn(x_of(t % categories), w)
    for v in range(categories):  # each leaf meets classes 1..4: four observer blocks each
        for label in range(1, 5):
            w = np.zeros((1, k))
            w[0, label] = 1e-3
            c.learn(x_of(v), w)
    abandoned = 0
    for v in range(categories):
        # the first label passes the grace period (the attempt resets the leaf's observers,
        # its blocks going to the tree's stack); the second finds the rows short, and fails
        c._compact_entries(entries_needed(int(c.entry_widest_[0]), int(c.max_branches_)))
        w = np.zeros((1, k))
        w[0, 0], w[0, 1] = 1e3, 1.0
        try:
            c.learn(x_of(v), w)
        except MemoryError:
            abandoned += 1
        assert not c.progress_.any() and not c.counts_.any()
        assert c.n_free_blocks_[0] <= 1 and c.n_free_slots_[0] <= c.max_branches_ - 1
    assert abandoned == categories


def test_round_trip_through_dense_rows():
    """A committee converted to dense rows and back (as one pickled before the entries is
    loaded) predicts and learns as the original, bit for bit."""
    c, X, Y = learned(80, 300, 150, 4, seed=8)
    state = pickle.loads(pickle.dumps(c)).__dict__
    for name in (*c._empty_entries(0), "leaf_start_", "leaf_room_", "entry_top_", "entry_widest_"):
        del state[name]
    state.update(c._dense_leaf_rows())
    old = VFDTCommittee.__new__(VFDTCommittee)
    old.__setstate__(state)
    check_entries(old)
    # every statistic came across (the listed flags too, which a majority-class leaf rarely reads)
    rows, old_rows = c._dense_leaf_rows(), old._dense_leaf_rows()
    assert rows["leaf_listed_"].any()
    for name in rows:
        assert np.array_equal(rows[name], old_rows[name]), name
    for t in range(150, 300):
        assert np.array_equal(c.predict(X[t]), old.predict(X[t])), t
        c.learn(X[t], np.tile(Y[t], (4, 1)))
        old.learn(X[t], np.tile(Y[t], (4, 1)))
    rows, old_rows = c._dense_leaf_rows(), old._dense_leaf_rows()
    for name in rows:
        assert np.array_equal(rows[name], old_rows[name]), name


@pytest.mark.skipif(
    np.lib.NumpyVersion(np.__version__) < "2.0.0",
    reason="the model was pickled with NumPy 2, whose pickles NumPy 1 cannot read",
)
def test_loads_a_model_pickled_with_dense_rows():
    """An Ada.OLMR model pickled by olboost at 20d9e18 (the last commit with rows of ``k`` per
    leaf slot; ``tests/data/dense_layout_ada_olmr.pkl``, 100 rows learned) loads and scores the
    next 60 rows as that code did (``dense_layout_expected.npz``, written by it)."""
    model = pickle.loads((DATA / "dense_layout_ada_olmr.pkl").read_bytes())
    assert isinstance(model, AdaOLMR) and "leaf_class_" not in model.committee_.__dict__
    check_entries(model.committee_)
    expected = np.load(DATA / "dense_layout_expected.npz")
    X, Y = expected["X"], expected["Y"]
    later = model.score_then_learn(X[100:], Y[100:])
    assert np.array_equal(later, expected["later"])


def test_a_failed_compaction_changes_nothing(monkeypatch):
    """A compaction whose allocation fails (MemoryError) leaves the committee as it was, bit for
    bit, and the committee learns on as if it had never been tried."""
    c, X, Y = learned(40, 120, 60, 3, seed=10)
    before = pickle.dumps(c)

    def no_memory(self, width):
        raise MemoryError(f"{width} entries")

    monkeypatch.setattr(VFDTCommittee, "_empty_entries", no_memory)
    with pytest.raises(MemoryError):
        c._compact_entries(10_000)
    assert pickle.dumps(c) == before
    monkeypatch.undo()
    twin = pickle.loads(before)
    for t in range(60, 120):
        c.learn(X[t], np.tile(Y[t], (3, 1)))
        twin.learn(X[t], np.tile(Y[t], (3, 1)))
    assert pickle.dumps(c) == pickle.dumps(twin)


def _state_arrays(c: VFDTCommittee) -> dict[str, np.ndarray]:
    return {
        name: value
        for name, value in vars(c).items()
        if isinstance(value, np.ndarray) and name != "leaf_bound_"
    }


@pytest.mark.parametrize("semantics", ["river", "weka_port"])
def test_the_bound_of_the_weight_seen_changes_no_attempt(semantics):
    """The grace period's test skips the sum of a leaf's class weights while the leaf's bound
    of it cannot reach the grace (``_vfdt_kernels._BOUND_GROWTH``). A committee whose bounds are
    forgotten before every example (so that each leaf takes the exact sum at its first update
    of the example) ends every example in the same state, bit for bit. Weights of tenths and
    thirds on a grace period of 1 put the sums, in class order, within a rounding of the grace
    period, where a bound that is not one (no slack) skips an attempt the exact test makes."""
    k, n = 60, 4
    X, Y = label_stream(400, k, seed=3)
    rng = np.random.default_rng(4)
    params = {"semantics": semantics, "n_features": 6, "grace_period": (1.0, 1.0)}
    kept, reference = VFDTCommittee(**params), VFDTCommittee(**params)
    kept.start(n, k, X.shape[1], seed=5)
    reference.start(n, k, X.shape[1], seed=5)
    spared = 0
    for t in range(len(X)):
        w = np.zeros((n, k))
        labels = rng.choice(k, size=(n, 6))
        w[np.arange(n)[:, None], labels] = rng.choice([0.1, 0.2, 0.3, 1 / 3, 0.7], size=(n, 6))
        reference.leaf_bound_[:] = np.inf
        kept.learn(X[t], w)
        reference.learn(X[t], w)
        spared += int(np.isfinite(kept.leaf_bound_[np.unique(kept.node_slot_)]).sum())
        a, b = _state_arrays(kept), _state_arrays(reference)
        assert a.keys() == b.keys()
        for name in a:
            np.testing.assert_array_equal(a[name], b[name], err_msg=f"{name} at row {t}")
    assert spared > 0
    assert kept.n_nodes_.max() > 1  # a tree split: attempts were made and decided


def test_an_unstarted_committees_compiled_learn_keeps_its_own_error():
    # the forgetting of an abandoned example found no progress_ and raised AttributeError over
    # the error that abandoned it
    from olboost.weak import LinearCommittee, MixedCommittee

    mix = MixedCommittee([VFDTCommittee(), LinearCommittee()], shares=[1, 1])
    for c in (VFDTCommittee(), mix):
        with pytest.raises(RuntimeError, match="is not started"):
            c.learn_compiled(np.zeros(3), np.zeros((2, 3)))
