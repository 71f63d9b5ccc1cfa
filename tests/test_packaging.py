"""The distributions built from this tree: the wheel holds the package, its data and the licence,
and nothing of the repository around it; the sdist holds the source a packager runs the tests
from, a suite that collects (setuptools' default took the test files without their helpers, data
and conftest.py: 23 files failed to collect)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("build", reason="python -m build (the dev extra) builds the distributions")


def _tracked_files() -> list[str]:
    """The files of the checkout as git sees them (tracked, and new ones not ignored)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout (its file list): an unpacked sdist has none")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True,
    )  # fmt: skip
    return [name for name in listed.stdout.decode().split("\0") if (ROOT / name).is_file()]


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(sdist, wheel)`` built from a copy of the checkout's files (no caches, no build
    directories of the checkout itself), with the environment's setuptools (no download)."""
    tmp = tmp_path_factory.mktemp("dists")
    tree = tmp / "tree"
    for name in _tracked_files():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, tree / name)
    out = tmp / "out"
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(tree)],
        capture_output=True, check=True, timeout=300,
    )  # fmt: skip
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return sdist, wheel


def test_the_wheel_holds_the_package_its_data_and_the_licence_only(dists):
    _, wheel = dists
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
    assert "olboost/py.typed" in names
    assert any(n.startswith("olboost/datasets/data/") and n.endswith(".arff.gz") for n in names)
    assert not [n for n in names if n.split("/")[0] not in ("olboost",) and ".dist-info" not in n]
    assert not [n for n in names if "__pycache__" in n or n.endswith((".nbi", ".nbc", ".pyc"))]


def test_the_sdist_holds_a_test_suite_that_collects(dists, tmp_path):
    sdist, _ = dists
    with tarfile.open(sdist) as tar:
        # extraction filters came with Python 3.11.4 (PEP 706): Debian 12's 3.11.2, which
        # requires-python admits, has none (TypeError); the archive is the one just built
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(tmp_path, **safe)
    (top,) = tmp_path.iterdir()
    for name in ("LICENSE", "conftest.py", "Makefile", "tests/helpers.py", "tests/protocol.py",
                 "tests/serve_support.py", "tests/pinned_scores.json", "examples/sweep.toml",
                 "benchmarks/fingerprints.py"):  # fmt: skip
        assert (top / name).is_file(), name
    assert not list(top.rglob("__pycache__")) and not list(top.rglob("*.nbi"))
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "tests"],
        cwd=top, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    assert " errors" not in collected.stdout and "tests collected" in collected.stdout


def test_the_type_hints_take_what_the_docs_pass():
    # olboost ships py.typed, so a user's type checker reads these hints: Mapping[Hashable, ...]
    # (invariant in its key) refused a dict[str, bool], a set of label names was no
    # Collection[int], and clone / set_params gave a bare Estimator (no learn_one)
    import collections.abc as abc
    import typing

    from olboost import AdaOLMR
    from olboost.base import Estimator
    from olboost.metrics import RankLoss, rank_loss

    def args(hint, origin):
        return [typing.get_args(a) for a in typing.get_args(hint) if typing.get_origin(a) is origin]

    for function in (rank_loss, RankLoss.update):
        hints = typing.get_type_hints(function)
        assert args(hints["scores"], abc.Mapping) == [(typing.Any, float)]
        assert args(hints["relevant"], abc.Mapping) == [(typing.Any, bool)]
        assert args(hints["relevant"], abc.Collection) == [(abc.Hashable,)]
    y = typing.get_type_hints(AdaOLMR.learn_one)["y"]
    assert args(y, abc.Mapping) == [(typing.Any, bool)] and args(y, abc.Set) == [(abc.Hashable,)]
    for method in (Estimator.clone, Estimator.set_params):
        assert typing.get_type_hints(method)["return"] is typing.Self
    sklearn = pytest.importorskip("olboost.sklearn")
    set_params = sklearn.OnlineBoostingRanker.set_params
    assert typing.get_type_hints(set_params)["return"] is typing.Self


def test_the_protocols_and_array_paths_say_what_they_return_for_each_kind():
    # prequential(model, data).accuracy, the classifiers' docstring example, failed a user's
    # type checker (Evaluation | ClassificationEvaluation), as did indexing score_then_learn's
    # scores (np.ndarray | None with return_scores left at True)
    import typing

    import numpy

    from olboost.evaluate import ClassificationEvaluation, Evaluation, prequential, resumable
    from olboost.online import MulticlassLearner, RankingLearner

    names = {"MulticlassLearner": MulticlassLearner}  # imported there for type checkers only
    for protocol in (prequential, resumable):
        hints = [typing.get_type_hints(f, localns=names) for f in typing.get_overloads(protocol)]
        assert [h["return"] for h in hints] == [ClassificationEvaluation, Evaluation]
        assert hints[0]["model"] is MulticlassLearner
    for method in (RankingLearner.score_then_learn, MulticlassLearner.predict_then_learn):
        hints = [typing.get_type_hints(f) for f in typing.get_overloads(method)]
        assert [h["return_scores"] for h in hints] == [
            typing.Literal[True],
            typing.Literal[False],
            bool,
        ]
        assert [h["return"] for h in hints][:2] == [numpy.ndarray, type(None)]
