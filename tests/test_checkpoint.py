"""``olboost.save`` / ``olboost.load`` and resumable evaluation (issue 14, item 4).

A saved file is refused with a ``ValueError`` saying why (not olboost's, truncated, corrupt, another
format version) before anything is unpickled; equal models give byte-identical files; a resumed
evaluation gives the bits of an uninterrupted one. The kill test of ``olboost run --checkpoint`` is
in ``test_checkpoint_kill.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import warnings

import numpy as np
import pytest

import olboost
from olboost import AdaBoostOLM, AdaOLMR, LabelRanker, TopkAdaptive, TopkBBM, VFDTCommittee
from olboost import checkpoint as ck
from olboost.datasets import load as load_data
from olboost.datasets import load_uci
from olboost.evaluate import Progress, prequential, resumable, train_test


@pytest.fixture(scope="module")
def emotions():
    return load_data("emotions")


def _trained(emotions, rows=150):
    model = AdaOLMR(VFDTCommittee(n_features=5), learners=4, seed=3)
    model.score_then_learn(emotions.X[:rows], emotions.Y[:rows])
    return model


def _parts(data: bytes) -> tuple[dict, bytes]:
    """The header and the payload of a saved file (its layout, as the module documents it)."""
    start = len(ck.MAGIC) + 4
    (length,) = ck._LENGTH.unpack_from(data, len(ck.MAGIC))
    return json.loads(data[start : start + length]), data[start + length : -32]


def _rewrite(path, header: dict, payload: bytes) -> None:
    """A well-formed file (digest recomputed) with the given header and payload."""
    head = json.dumps(header, sort_keys=True).encode()
    body = ck.MAGIC + ck._LENGTH.pack(len(head)) + head + payload
    path.write_bytes(body + hashlib.sha256(body).digest())


# ------------------------------------------------------------------------------ round trips


def test_round_trip_is_bit_identical_and_continues_identically(tmp_path, emotions):
    model = _trained(emotions)
    path = tmp_path / "m.olb"
    olboost.save(model, path)
    again = olboost.load(path)
    assert type(again) is AdaOLMR and ck.dumps(again) == ck.dumps(model)
    # saving again gives the same bytes, and so does saving the copy
    olboost.save(model, tmp_path / "m2.olb")
    olboost.save(again, tmp_path / "m3.olb")
    assert path.read_bytes() == (tmp_path / "m2.olb").read_bytes()
    assert path.read_bytes() == (tmp_path / "m3.olb").read_bytes()
    # both continue alike, to the last bit
    rest = emotions.X[150:], emotions.Y[150:]
    np.testing.assert_array_equal(model.score_then_learn(*rest), again.score_then_learn(*rest))
    assert ck.dumps(model) == ck.dumps(again)
    header, _ = _parts(path.read_bytes())
    assert header["format"] == ck.FORMAT_VERSION and header["olboost"] == olboost.__version__
    assert header["kind"] == "model" and header["class"].endswith("AdaOLMR")


def test_canonical_bytes_do_not_depend_on_the_models_history(emotions):
    # the standard pickle of a model resumed from a pickle differs from that of the same model
    # trained without a break (NumPy dtype objects are shared differently); dumps does not
    straight = _trained(emotions, rows=emotions.n_samples)
    resumed = _trained(emotions, rows=200)
    resumed = pickle.loads(pickle.dumps(resumed))
    resumed.score_then_learn(emotions.X[200:], emotions.Y[200:])
    assert pickle.dumps(straight) != pickle.dumps(resumed)
    assert ck.dumps(straight) == ck.dumps(resumed)
    # and what dumps wrote reads back as a standard pickle, arrays in their layout
    arrays = {"c": np.arange(6.0).reshape(2, 3), "f": np.asfortranarray(np.ones((3, 2), int))}
    arrays["o"] = np.array([None, "a", (1, 2)], dtype=object)
    back = pickle.loads(ck.dumps(arrays))
    for name, value in arrays.items():
        assert back[name].dtype == value.dtype and back[name].flags.writeable
        assert back[name].flags.f_contiguous == value.flags.f_contiguous
        assert back[name].tolist() == value.tolist()
    assert pickle.loads(ck.dumps(np.float32(1.5))) == np.float32(1.5)


def test_canonical_bytes_do_not_depend_on_the_order_of_a_sets_members():
    # pickle writes a set's members in iteration order, which follows their hashes (a string's
    # changes with PYTHONHASHSEED) and the order they were added in: {8, 16} and {16, 8} collide
    # in a table of 8 slots and iterate in the order they were added
    a, b = {8, 16}, {16, 8}
    assert list(a) != list(b)
    assert ck.dumps(a) == ck.dumps(b) and ck.dumps(frozenset(a)) == ck.dumps(frozenset(b))
    nested = {"s": a, "again": a, "f": frozenset({frozenset(a), frozenset({1})}), "one": {3}}
    back = ck.loads(ck.dumps(nested))
    assert back == nested and type(back["s"]) is set and type(back["f"]) is frozenset
    assert back["s"] is back["again"]  # one set held in two places is still one set
    with pytest.raises(pickle.UnpicklingError, match="persistent id"):
        pickle.loads(ck.dumps(a))  # written for loads, not for pickle.loads


_HASH_SEED_CHILD = """
import hashlib, sys, numpy as np, olboost
from olboost.checkpoint import dumps, loads
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3))
classes = [frozenset({"red", "green", "blue"}), frozenset({"cat", "dog", "eel"})]
model = olboost.AdaBoostOLM(olboost.VFDTCommittee(n_features=2), learners=3, seed=1,
                            classes=classes)
for row in X:
    model.learn_one({"f1": row[0], "f2": row[1], "f3": row[2]}, classes[int(row[0] > 0)])
data = dumps(model)
assert dumps(loads(data)) == data
print(hashlib.sha256(data).hexdigest())
"""


def test_canonical_bytes_do_not_depend_on_the_hash_seed():
    # with frozensets of strings as classes, the saved bytes changed with PYTHONHASHSEED
    import subprocess
    import sys

    digests = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", _HASH_SEED_CHILD], env=env, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr[-2000:]
        digests.add(out.stdout.strip())
    assert len(digests) == 1


def test_a_run_checkpoint_loads_as_its_model(tmp_path, emotions):
    model = _trained(emotions)
    path = tmp_path / "run.olb"
    ck.save_run({"model": model, "progress": None, "run": {"seed": 3}}, path)
    assert ck.dumps(olboost.load(path)) == ck.dumps(model)
    assert ck.load_run(path)["run"] == {"seed": 3}
    olboost.save(model, tmp_path / "m.olb")
    with pytest.raises(ValueError, match="an olboost model file, not a run checkpoint"):
        ck.load_run(tmp_path / "m.olb")
    with pytest.raises(ValueError, match="holds a 'model'"):
        ck.save_run({"progress": None}, path)


# ------------------------------------------------------------------------------ refused files


def test_another_format_version_is_refused_naming_both_versions(tmp_path, emotions):
    path = tmp_path / "m.olb"
    olboost.save(_trained(emotions), path)
    header, payload = _parts(path.read_bytes())
    _rewrite(path, {**header, "format": 2, "olboost": "9.0.0"}, payload)
    with pytest.raises(ValueError) as info:
        olboost.load(path)
    message = str(info.value)
    assert "format 2 (written by olboost 9.0.0)" in message
    assert f"olboost {olboost.__version__}, which reads format {ck.FORMAT_VERSION}" in message


def test_another_olboost_version_of_the_same_format_loads_with_a_warning(tmp_path, emotions):
    model = _trained(emotions)
    path = tmp_path / "m.olb"
    olboost.save(model, path)
    header, payload = _parts(path.read_bytes())
    _rewrite(path, {**header, "olboost": "0.0.1"}, payload)
    with pytest.warns(
        UserWarning, match=rf"olboost 0\.0\.1; this is olboost {olboost.__version__}"
    ):
        again = olboost.load(path)
    assert ck.dumps(again) == ck.dumps(model)
    # a pickle naming a class this olboost lacks: a ValueError naming both versions
    _rewrite(path, {**header, "olboost": "0.0.1"}, payload.replace(b"AdaOLMR", b"AdaOLMQ"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(ValueError, match=r"written by olboost 0\.0\.1, read by olboost"):
            olboost.load(path)


def test_a_model_that_does_not_rebuild_names_the_numpy_versions_when_they_differ(
    tmp_path, emotions
):
    # NumPy 1 cannot read NumPy 2's pickles: a bare "No module named 'numpy._core'" said
    # nothing of where the file came from
    path = tmp_path / "m.olb"
    olboost.save(_trained(emotions), path)
    header, payload = _parts(path.read_bytes())
    broken = payload.replace(b"AdaOLMR", b"AdaOLMQ")
    _rewrite(path, {**header, "numpy": "0.9.9"}, broken)
    with pytest.raises(ValueError, match=rf"NumPy 0\.9\.9 read by NumPy {np.__version__}\): "):
        olboost.load(path)
    _rewrite(path, header, broken)  # the same NumPy: not said
    with pytest.raises(ValueError) as info:
        olboost.load(path)
    assert "cannot rebuild" in str(info.value) and "NumPy" not in str(info.value)


def test_a_corrupt_file_is_a_value_error_saying_so(tmp_path, emotions):
    path = tmp_path / "m.olb"
    olboost.save(_trained(emotions), path)
    good = path.read_bytes()
    header, _ = _parts(good)
    for where in (len(good) // 2, len(good) - 33, len(good) - 1):  # payload, its end, digest
        bad = bytearray(good)
        bad[where] ^= 0x01
        path.write_bytes(bytes(bad))
        with pytest.raises(ValueError, match="corrupt olboost file \\(SHA-256 digest mismatch\\)"):
            olboost.load(path)
    path.write_bytes(good + b"\0")
    with pytest.raises(ValueError, match="corrupt olboost file \\(1 bytes after its end\\)"):
        olboost.load(path)
    start = len(ck.MAGIC) + 4
    path.write_bytes(good[:start] + b"#" + good[start + 1 :])
    with pytest.raises(ValueError, match="corrupt olboost file \\(unreadable header\\)"):
        olboost.load(path)
    _rewrite(path, {**header, "payload_bytes": "many"}, _parts(good)[1])
    with pytest.raises(ValueError, match="corrupt olboost file \\(unreadable header\\)"):
        olboost.load(path)


@pytest.mark.parametrize("keep", [0, 5, len(ck.MAGIC) + 2, 40, 0.5, -1])
def test_a_truncated_file_is_a_value_error_saying_so(tmp_path, emotions, keep):
    path = tmp_path / "m.olb"
    olboost.save(_trained(emotions, rows=50), path)
    good = path.read_bytes()
    cut = int(len(good) * keep) if isinstance(keep, float) else keep % len(good)
    path.write_bytes(good[:cut])
    with pytest.raises(ValueError, match="truncated olboost file"):
        olboost.load(path)


def test_a_file_that_is_not_olboosts_is_refused_before_unpickling(tmp_path, emotions):
    path = tmp_path / "m.pkl"
    path.write_bytes(pickle.dumps(_trained(emotions, rows=20)))
    with pytest.raises(ValueError, match="a bare pickle, not an olboost file"):
        olboost.load(path)
    path.write_text("hello")
    with pytest.raises(ValueError, match="not an olboost file"):
        olboost.load(path)


def test_a_directory_is_refused_both_ways(tmp_path, emotions):
    with pytest.raises(IsADirectoryError, match="is a directory"):
        olboost.load(tmp_path)
    with pytest.raises(IsADirectoryError, match="is a directory"):
        olboost.save(_trained(emotions, rows=20), tmp_path)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(FileNotFoundError):
        olboost.load(tmp_path / "nothing.olb")
    # the error names the file asked for, not the temporary file the write would go through
    with pytest.raises(FileNotFoundError, match=r"no such directory.*'.*no/m\.olb'"):
        olboost.save(_trained(emotions, rows=20), tmp_path / "no" / "m.olb")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_save_leaves_the_old_file(tmp_path, emotions):
    path = tmp_path / "m.olb"
    olboost.save(_trained(emotions), path)
    before = path.read_bytes()
    with pytest.raises(TypeError, match="cannot save a function: it does not pickle"):
        olboost.save(lambda x: x, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.olb"]  # no temporary file left


def test_a_save_syncs_its_data_before_the_rename_and_the_directory_after(tmp_path, emotions):
    # atomic: a temporary file, fsync, rename, then the directory's fsync, without which a
    # power loss could undo the rename (README, "Checkpoints")
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        target = os.readlink(f"/proc/self/fd/{fd}")
        events.append(("fsync", "directory" if os.path.isdir(target) else "file"))
        real_fsync(fd)

    def replace(source, target):
        events.append(("replace", os.path.basename(target)))
        real_replace(source, target)

    model = _trained(emotions)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "fsync", fsync)
        patch.setattr(os, "replace", replace)
        olboost.save(model, tmp_path / "model.olb")
    assert events == [("fsync", "file"), ("replace", "model.olb"), ("fsync", "directory")]


def test_files_get_the_usual_permissions_and_stale_temporaries_go(tmp_path, emotions):
    path = tmp_path / "m.olb"
    olboost.save(_trained(emotions, rows=20), path)
    mask = os.umask(0)
    os.umask(mask)
    # as open() would give, but never writable by every user: a model is code when loaded
    assert path.stat().st_mode & 0o777 == 0o664 & ~mask
    # a file replaced keeps its mode (a model kept private stays private; it became 0644),
    # less the write bit for others
    for kept, then in ((0o600, 0o600), (0o640, 0o640), (0o666, 0o664)):
        path.chmod(kept)
        olboost.save(_trained(emotions, rows=20), path)
        assert path.stat().st_mode & 0o777 == then, oct(kept)
    dead = tmp_path / ".m.olb.999999999.x1.olboost-tmp"  # a pid no process has
    alive = tmp_path / f".m.olb.{os.getppid()}.x2.olboost-tmp"  # a running process's
    dead.write_bytes(b"partial")
    alive.write_bytes(b"partial")
    assert ck.remove_stale_temporaries(path) == [dead]
    assert alive.exists() and not dead.exists()


def test_a_file_written_through_a_symbolic_link_is_the_links_target(tmp_path):
    # the rename went over the link: the link became a file of its own, and the target (say
    # on a larger disk) kept its old content
    from olboost._atomic import atomic_write

    disk = tmp_path / "disk"
    disk.mkdir()
    target, link = disk / "model.olb", tmp_path / "model.olb"
    link.symlink_to(target)  # dangling: the first write creates the target, as open() does
    for data in (b"first", b"second"):
        atomic_write(link, data)
        assert link.is_symlink() and target.read_bytes() == data
    stale = disk / ".model.olb.999999999.x1.olboost-tmp"  # a killed writer's, beside the target
    stale.write_bytes(b"partial")
    assert ck.remove_stale_temporaries(link) == [stale]
    assert sorted(p.name for p in disk.iterdir()) == ["model.olb"]


def test_caches_of_cells_and_checked_outputs_remove_their_stale_temporaries(tmp_path):
    # only olboost run and serve removed them: a reproduce killed while writing a cell or its
    # output, or a sweep a record, left theirs for good
    from olboost._atomic import machine_tag, remove_stale_temporaries_in
    from olboost.cli._shared import check_output

    cells = tmp_path / "cells"
    cells.mkdir()
    dead = cells / ".mlr-0123abcd.json.999999999.ab_cd123.olboost-tmp"
    alive = cells / f".mlr-4567.json.{os.getppid()}.x2.olboost-tmp"
    mine = cells / f".mlr-89ab.json.{os.getpid()}.x3.olboost-tmp"  # another thread's, perhaps
    other = cells / ".notes.txt"
    for f in (dead, alive, mine, other):
        f.write_bytes(b"partial")
    ck.CellCache(cells, "mlr")
    assert sorted(p.name for p in cells.iterdir()) == sorted(f.name for f in (alive, mine, other))
    dead.write_bytes(b"partial")
    assert remove_stale_temporaries_in(cells) == [dead]
    # a process id means something only on this machine and in this process-id space: another
    # host's or container's writer of that id may be writing (a run in `unshare --pid` lost its
    # checkpoint's temporary file to another run on the same directory, and failed)
    here = machine_tag()
    elsewhere = "h00000000" if here != "h00000000" else "h11111111"
    ours = cells / f".mlr-cd.json.999999999.{here}.ab_cd123.olboost-tmp"
    theirs = cells / f".mlr-ef.json.999999999.{elsewhere}.ab_cd123.olboost-tmp"
    for f in (ours, theirs):
        f.write_bytes(b"partial")
    assert remove_stale_temporaries_in(cells) == [ours]
    target = cells / "mlr-ef.json"
    assert ck.remove_stale_temporaries(target) == [] and theirs.exists()
    ours = cells / f".mlr-ef.json.999999999.{here}.zz.olboost-tmp"
    ours.write_bytes(b"partial")
    assert ck.remove_stale_temporaries(target) == [ours] and theirs.exists()
    theirs.unlink()
    # and this process's own names carry its tag
    from olboost._atomic import temporary_prefix

    assert temporary_prefix(target) == f".mlr-ef.json.{os.getpid()}.{here}."
    output = tmp_path / "results.json"
    stale = tmp_path / ".results.json.999999999.zz.olboost-tmp"
    stale.write_bytes(b"{")
    check_output(str(output), "--output")
    assert not stale.exists()


# ------------------------------------------------------------------------------ resumable runs


def _interrupted(make, streams, *, loops=1, every, stop_after):
    """Run ``resumable`` until its ``stop_after``-th checkpoint, as a crash would stop it, then
    resume from the saved model and progress in a fresh object; return the result."""
    model = make()
    saved = []

    def checkpoint(progress):
        saved.append(ck.dumps((model, progress)))
        if len(saved) == stop_after:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        resumable(model, *streams, loops=loops, every=every, on_checkpoint=checkpoint)
    model, progress = pickle.loads(saved[-1])
    assert 0 < progress.done < progress.total
    result = resumable(model, *streams, loops=loops, every=every, start=progress)
    return model, result


def _same(a, b) -> None:
    timing = {"seconds", "seconds_train", "seconds_test", "compile_seconds"}
    sa = {k: v for k, v in a.summary().items() if k not in timing}
    sb = {k: v for k, v in b.summary().items() if k not in timing}
    assert json.dumps(sa) == json.dumps(sb)


@pytest.mark.parametrize(
    "make",
    [
        lambda: AdaOLMR(VFDTCommittee(n_features=5), learners=4, seed=2),
        lambda: TopkBBM(VFDTCommittee(n_features=5), learners=4, seed=2, k=3, rho=0.1, gamma=0.2),
        lambda: LabelRanker(update="II", seed=2),
    ],
    ids=["ada-olmr", "topk-bbm", "label-ranker"],
)
def test_a_resumed_train_test_run_equals_an_uninterrupted_one(make, emotions):
    streams = (emotions.train, emotions.test)
    straight = make()
    expected = train_test(straight, *streams, loops=3)
    model, result = _interrupted(make, streams, loops=3, every=97, stop_after=9)
    _same(expected, result)
    np.testing.assert_array_equal(expected.train_losses, result.train_losses)
    np.testing.assert_array_equal(expected.losses_skip, result.losses_skip)
    assert ck.dumps(straight) == ck.dumps(model)


def test_resumed_prequential_runs_equal_uninterrupted_ones(emotions):
    make = lambda: AdaOLMR(VFDTCommittee(n_features=5), learners=4, seed=5)  # noqa: E731
    straight = make()
    expected = prequential(straight, emotions)
    model, result = _interrupted(make, (emotions,), every=64, stop_after=4)
    _same(expected, result)
    assert ck.dumps(straight) == ck.dumps(model)
    car = load_uci("car").shuffled(2)
    make = lambda: AdaBoostOLM(VFDTCommittee(), learners=4, seed=2)  # noqa: E731
    straight = make()
    expected = prequential(straight, car)
    model, result = _interrupted(make, (car,), every=300, stop_after=3)
    _same(expected, result)
    np.testing.assert_array_equal(expected.correct, result.correct)
    assert ck.dumps(straight) == ck.dumps(model)


def test_a_progress_resumes_only_its_model_and_data_and_stays_as_saved(emotions):
    # a fresh model, or the saved one on another train split of the same size, were resumed
    # (rank loss 0.43 against 0.25 uninterrupted); and the caller's progress moved to the end
    train, test = emotions.train._rows(0, 100, "train"), emotions.test._rows(0, 50, "test")
    make = lambda: AdaOLMR(VFDTCommittee(n_features=5), learners=3, seed=1)  # noqa: E731
    saved = []

    def checkpoint(progress):
        saved.append(pickle.dumps((model, progress)))
        if len(saved) == 2:
            raise KeyboardInterrupt

    model = make()
    with pytest.raises(KeyboardInterrupt):
        resumable(model, train, test, every=40, on_checkpoint=checkpoint)
    _, progress = pickle.loads(saved[-1])
    fresh = make()
    with pytest.raises(ValueError, match="goes with a model that had learned 80 examples, this "):
        resumable(fresh, train, test, start=progress)
    assert not fresh._started
    # another kind of model that learned as many examples (probe: it resumed, and the result
    # said top-k feedback for losses a full-feedback model had made), as it was before
    impostor = TopkAdaptive(VFDTCommittee(n_features=5), learners=3, seed=1, k=2)
    impostor.learn(train.X[:80], train.Y[:80])
    before = ck.dumps(impostor)
    with pytest.raises(ValueError, match=r"goes with a model of class olboost\.\S+\.AdaOLMR, "):
        resumable(impostor, train, test, start=progress)
    assert ck.dumps(impostor) == before
    other = emotions.train._rows(100, 200, "other")
    saved_model, progress = pickle.loads(saved[-1])
    with pytest.raises(ValueError, match="made on other data"):
        resumable(saved_model, other, test, start=progress)
    records = progress.records.copy()
    result = resumable(saved_model, train, test, start=progress)
    assert progress.done == 80  # the caller's, as saved, its records too (they were written on)
    np.testing.assert_array_equal(progress.records, records)
    _same(result, train_test(make(), train, test))
    # a retry from the same progress and model resumes the same way
    saved_model, progress = pickle.loads(saved[-1])
    _same(resumable(saved_model, train, test, start=progress), result)


def test_a_progress_whose_records_do_not_fit_its_passes_is_refused_before_any_learning():
    # one record short: the model learned the rest of the stream, then NumPy failed on a shape
    from dataclasses import replace

    data = load_data("emotions")
    train, test = data.train._rows(0, 100, "train"), data.test._rows(0, 50, "test")
    saved = []

    def checkpoint(progress):
        saved.append(pickle.dumps((model, progress)))
        raise KeyboardInterrupt

    model = AdaOLMR(VFDTCommittee(n_features=5), learners=3, seed=1)
    with pytest.raises(KeyboardInterrupt):
        resumable(model, train, test, every=40, on_checkpoint=checkpoint)
    model, progress = pickle.loads(saved[-1])
    before = pickle.dumps(model)
    for bad in (progress.records[:-1], np.append(progress.records, progress.records[:1])):
        with pytest.raises(ValueError, match="the progress to resume"):
            resumable(model, train, test, start=replace(progress, records=bad))
        assert pickle.dumps(model) == before


def test_a_progress_resumes_only_on_data_of_its_names():
    # the same values under other class (label) names are other examples: their (x, y) pairs
    # differ, and a model of named outputs reads the codes by name; they were resumed (a data
    # set probe, session 31), and a train split of no rows failed in the digest
    from dataclasses import replace

    from olboost.datasets import MulticlassDataset, MultiLabelDataset

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    features = ["a", "b", "c"]
    saved = []

    def checkpoint(progress):
        saved.append(pickle.dumps((model, progress)))
        raise KeyboardInterrupt

    model = AdaBoostOLM(VFDTCommittee(n_features=3), learners=2, seed=1, classes=[0, 1])
    data = MulticlassDataset("d", X, y, features, [0, 1])
    with pytest.raises(KeyboardInterrupt):
        resumable(model, data, every=20, on_checkpoint=checkpoint)
    swapped = MulticlassDataset("d", X, y, features, [1, 0])
    saved_model, progress = pickle.loads(saved[-1])
    before = pickle.dumps(saved_model)
    with pytest.raises(ValueError, match="data of other class names"):
        resumable(saved_model, swapped, start=progress)
    assert pickle.dumps(saved_model) == before
    # equal names of other types are the same names
    same = MulticlassDataset("d", X, y, features, [np.int64(0), np.int64(1)])
    resumed = resumable(saved_model, same, start=progress)
    fresh = AdaBoostOLM(VFDTCommittee(n_features=3), learners=2, seed=1, classes=[0, 1])
    np.testing.assert_array_equal(resumed.correct, prequential(fresh, data).correct)
    # 1.0 is the name 1; a bool is not
    floats = MulticlassDataset("d", X, y, features, [0.0, 1.0])
    saved_model, progress = pickle.loads(saved[-1])
    assert resumable(saved_model, floats, start=progress).n_test == 60
    from olboost.evaluate._resumable import _name_key

    assert _name_key(False) != _name_key(0) and _name_key(np.True_) == _name_key(True)
    assert _name_key(frozenset("ab")) == _name_key({"b", "a"})
    # a progress saved before the names were kept is checked by its values only
    saved_model, progress = pickle.loads(saved[-1])
    model, kept = saved_model, []
    resumable(model, swapped, every=20, start=replace(progress, names_digest=None),
              on_checkpoint=kept.append)  # fmt: skip
    assert kept and all(p.names_digest is not None for p in kept)  # and kept from now on

    # tuple classes (equal ones of other member types alike), resumed as run straight
    pairs = MulticlassDataset("t", X, y, features, [(0, "a"), (1, "b")])
    model = AdaBoostOLM(VFDTCommittee(n_features=3), learners=2, seed=1)
    with pytest.raises(KeyboardInterrupt):
        resumable(model, pairs, every=20, on_checkpoint=checkpoint)
    saved_model, progress = pickle.loads(saved[-1])
    alike = MulticlassDataset("t", X, y, features, [(np.int64(0), "a"), (np.int64(1), "b")])
    resumed = resumable(saved_model, alike, start=progress)
    straight = prequential(AdaBoostOLM(VFDTCommittee(n_features=3), learners=2, seed=1), pairs)
    np.testing.assert_array_equal(resumed.correct, straight.correct)

    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0, X[:, 2] > 0])
    ranked = MultiLabelDataset("m", X, Y, features, ["x", "y", "z"], n_train=0)
    model = AdaOLMR(VFDTCommittee(n_features=3), learners=2, seed=1)
    with pytest.raises(KeyboardInterrupt):
        resumable(model, ranked.train, ranked.test, every=20, on_checkpoint=checkpoint)
    other = MultiLabelDataset("m", X, Y, features, ["z", "y", "x"], n_train=0)
    saved_model, progress = pickle.loads(saved[-1])
    with pytest.raises(ValueError, match="data of other label names"):
        resumable(saved_model, other.train, other.test, start=progress)
    result = resumable(saved_model, ranked.train, ranked.test, start=progress)
    expected = train_test(AdaOLMR(VFDTCommittee(n_features=3), learners=2, seed=1), ranked.train,
                          ranked.test)  # fmt: skip
    np.testing.assert_array_equal(result.losses, expected.losses)


def test_a_progress_that_does_not_fit_is_refused(emotions):
    model = AdaOLMR(VFDTCommittee(n_features=5), learners=2, seed=1)
    wrong = Progress("train_test", (391, 202), 10, np.zeros(593))
    with pytest.raises(ValueError, match="does not fit this evaluation"):
        resumable(model, emotions.train, emotions.test, loops=2, start=wrong)
    with pytest.raises(ValueError, match="every must be an integer >= 1"):
        resumable(model, emotions.train, emotions.test, every=0)
    with pytest.raises(TypeError, match="needs data sets"):
        resumable(model, list(emotions.train), emotions.test)
    with pytest.raises(ValueError, match="needs a test split"):
        resumable(model, emotions, loops=2)


def test_a_corrupt_header_is_not_taken_for_another_version_or_a_truncation(tmp_path, emotions):
    # the header was trusted before the digest: one flipped bit of "format": 1 said "format 3
    # ... load it with olboost <this version>", one of payload_bytes said "truncated"
    path = tmp_path / "m.olb"
    olboost.save(_trained(emotions, rows=30), path)
    good = path.read_bytes()
    at = good.index(b'"format": 1') + len(b'"format": ')
    flipped = bytearray(good)
    flipped[at] ^= 0x02  # "1" -> "3"
    path.write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match=r"corrupt olboost file \(SHA-256 digest mismatch; its"):
        olboost.load(path)
    header, payload = _parts(good)
    for odd in (True, 1.0):  # JSON's true and 1.0 are no format 1
        _rewrite(path, {**header, "format": odd}, payload)
        with pytest.raises(ValueError, match=f"olboost file format {odd!r}"):
            olboost.load(path)
    digits = str(header["payload_bytes"]).encode()
    at = good.index(b'"payload_bytes": ' + digits) + len(b'"payload_bytes": ')
    path.write_bytes(good[:at] + b"9" * len(digits) + good[at + len(digits) :])
    with pytest.raises(ValueError, match=r"truncated olboost file \(.*, or a corrupt header\)"):
        olboost.load(path)


def test_hand_made_files_with_a_valid_digest_are_value_errors(tmp_path):
    path = tmp_path / "x.olb"
    payload = pickle.dumps([1, 2])
    header = {
        "format": 1,
        "kind": "run",
        "olboost": olboost.__version__,
        "payload_bytes": len(payload),
    }
    _rewrite(path, header, payload)
    for read in (olboost.load, ck.load_run):
        with pytest.raises(ValueError, match="not a run checkpoint .*holds no model"):
            read(path)
    nested = b"[" * 100_000 + b"]" * 100_000
    body = ck.MAGIC + ck._LENGTH.pack(len(nested)) + nested + payload
    path.write_bytes(body + hashlib.sha256(body).digest())
    with pytest.raises(ValueError, match=r"unreadable header"):
        olboost.load(path)


def test_stale_temporaries_of_names_with_glob_characters(tmp_path):
    from olboost._atomic import remove_stale_temporaries

    dead = 2**22 + 12345  # above Linux's default pid_max: no such process
    for name in ("run[1].olb", "run*.olb"):
        stale = tmp_path / f".{name}.{dead}.abcd1234.olboost-tmp"
        stale.write_bytes(b"")
        # a live writer's temporary of another target that the pattern run*.olb matched
        live = tmp_path / f".runAB.olb.{os.getpid()}.abcd1234.olboost-tmp"
        other = tmp_path / f".runAB.olb.{dead}.abcd1234.olboost-tmp"
        live.write_bytes(b"")
        other.write_bytes(b"")
        assert remove_stale_temporaries(tmp_path / name) == [stale]
        assert live.exists() and other.exists()
    # "run.olb" is no prefix of "run.olb.1.olb": its stale temporary is not run.olb's
    longer = tmp_path / f".run.olb.1.olb.{dead}.abcd1234.olboost-tmp"
    longer.write_bytes(b"")
    assert remove_stale_temporaries(tmp_path / "run.olb") == []
    assert remove_stale_temporaries(tmp_path / "run.olb.1.olb") == [longer]


def test_long_file_names_are_written_or_refused_before_the_run(tmp_path, emotions):
    from olboost._atomic import remove_stale_temporaries
    from olboost.cli._shared import check_output

    model = _trained(emotions, rows=20)
    long = tmp_path / ("m" * 240 + ".olb")  # legal; its temporary's name was not
    assert check_output(long) == long
    olboost.save(model, long)
    assert ck.dumps(olboost.load(long)) == ck.dumps(model)
    assert sorted(p.name for p in tmp_path.iterdir()) == [long.name]
    stale = tmp_path / f".{ck_stem(long.name)}.{2**22 + 1}.abcd1234.olboost-tmp"
    stale.write_bytes(b"")
    assert remove_stale_temporaries(long) == [stale]
    too_long = tmp_path / ("m" * 300 + ".olb")
    with pytest.raises(OSError, match="file name too long") as info:
        check_output(too_long, "--save-model")
    assert info.value.filename == f"--save-model {too_long}"


def ck_stem(name: str) -> str:
    from olboost._atomic import short_name

    return short_name(name)


def test_equal_scikit_learn_adapters_give_equal_files_however_reached(tmp_path, emotions):
    # the adapter pickled its booster with plain pickle, whose bytes record which arrays share
    # a dtype object: a resumed adapter saved to other bytes than an uninterrupted one
    sk = pytest.importorskip("olboost.sklearn")
    X, Y = emotions.X[:120], emotions.Y[:120]

    def make():
        return sk.OnlineBoostingRanker(
            AdaOLMR(VFDTCommittee(n_features=5), learners=4), random_state=1
        )

    whole = make().partial_fit(X, Y)
    resumed = make().partial_fit(X[:50], Y[:50])
    olboost.save(resumed, tmp_path / "mid.olb")
    resumed = olboost.load(tmp_path / "mid.olb").partial_fit(X[50:], Y[50:])
    olboost.save(whole, tmp_path / "a.olb")
    olboost.save(resumed, tmp_path / "b.olb")
    assert (tmp_path / "a.olb").read_bytes() == (tmp_path / "b.olb").read_bytes()


def test_a_path_that_is_no_path_is_named(tmp_path, monkeypatch):
    # pathlib said only "expected str, bytes or os.PathLike object, not AdaOLMR", for the
    # arguments of save given the other way round too
    model = AdaOLMR(learners=2, seed=1)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError, match=r"^path must be a path \(str or os.PathLike\), got "
                       r"AdaOLMR; the arguments are save\(model, path\)$"):  # fmt: skip
        olboost.save("m.olb", model)
    for call in (lambda: olboost.save(model, None), lambda: olboost.load(None),
                 lambda: ck.load_run(3), lambda: ck.save_run({"model": model}, None)):  # fmt: skip
        with pytest.raises(TypeError, match=r"^path must be a path \(str or os.PathLike\), got "):
            call()
    assert list(tmp_path.iterdir()) == []


def test_a_run_entry_json_cannot_sort_stays_in_the_payload_only(tmp_path):
    # the header is written with its keys sorted: a "run" of mixed key types, which json.dumps
    # takes unsorted, failed the save (it was saved before the header held the run's options)
    path = tmp_path / "run.olb"
    ck.save_run({"model": olboost.AdaOLMR(learners=2), "run": {1: "a", "b": 2}}, path)
    assert ck.read_run_options(path) is None
    assert ck.load_run(path)["run"] == {1: "a", "b": 2}
    ck.save_run({"model": olboost.AdaOLMR(learners=2), "run": {"b": 2, "a": [1]}}, path)
    assert ck.read_run_options(path) == {"a": [1], "b": 2}


# The tests below come from a mutation campaign of the checkpoints (session 51): each kills a
# one-token change that every other test let through.


def test_dumps_of_a_one_member_set_is_a_plain_pickle():
    # only sets of two or more members need the canonical order, read back by loads; the
    # docstring promises pickle.loads for the rest
    assert pickle.loads(ck.dumps({"a"})) == {"a"}
    assert pickle.loads(ck.dumps([frozenset({1}), set()])) == [frozenset({1}), set()]
    with pytest.raises(pickle.UnpicklingError):
        pickle.loads(ck.dumps({"a", "b"}))
    assert ck.loads(ck.dumps({"a", "b"})) == {"a", "b"}


def test_a_file_of_an_unknown_kind_is_refused_though_its_digest_matches(tmp_path):
    path = tmp_path / "x.olb"
    path.write_bytes(ck._encode({"a": 1}, "weights", "x"))
    with pytest.raises(ValueError, match="unknown kind 'weights'"):
        ck.load(path)


def test_a_run_entry_that_json_cannot_hold_stays_in_the_payload(tmp_path):
    # json.dumps raises ValueError on a circular reference (TypeError on an unsortable key, the
    # case tested elsewhere): either keeps the entry out of the header, not the file
    run: dict = {}
    run["self"] = run
    path = tmp_path / "r.olb"
    ck.save_run({"model": 1, "run": run}, path)
    assert ck.read_run_options(path) is None
    state = ck.load_run(path)
    assert state["run"]["self"] is state["run"]


def test_a_cell_of_another_format_is_computed_again(tmp_path):
    ck.CellCache(tmp_path, "s").run({"k": 1}, lambda: 1)
    (cell,) = tmp_path.glob("s-*.json")
    record = json.loads(cell.read_text())
    assert record["format"] == ck.FORMAT_VERSION
    record["format"] = ck.FORMAT_VERSION + 1
    cell.write_text(json.dumps(record))
    again = ck.CellCache(tmp_path, "s")
    assert again.run({"k": 1}, lambda: 2) == 2 and again.computed == 1


def test_short_name_keeps_names_of_up_to_160_bytes():
    from olboost._atomic import short_name

    assert short_name("a" * 160) == "a" * 160
    cut = short_name("a" * 161)
    assert cut != "a" * 161 and len(cut.encode()) <= 160
    assert short_name("é" * 80) == "é" * 80  # 160 bytes
    assert len(short_name("é" * 81).encode()) <= 160
