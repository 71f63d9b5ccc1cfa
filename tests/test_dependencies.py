"""The dependency floors of ``pyproject.toml`` are the ones ``make mindeps`` runs the suite on:
``.ci/lower-bounds.txt`` pins each bound's first release (or names why a package is not
there), so that a bound raised or lowered in one place and not the other fails here."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PINS = ROOT / ".ci" / "lower-bounds.txt"


def _bounds() -> dict[str, list[tuple[str, Version]]]:
    """Each package's lower bounds in pyproject.toml, with the group that states each."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    groups = {"dependencies": project["dependencies"], **project["optional-dependencies"]}
    bounds: dict[str, list[tuple[str, Version]]] = {}
    for group, lines in groups.items():
        for line in lines:
            requirement = Requirement(line)
            floors = [Version(s.version) for s in requirement.specifier if s.operator == ">="]
            assert len(floors) == 1, f"{line} ({group}): one lower bound, >=, expected"
            bounds.setdefault(canonicalize_name(requirement.name), []).append((group, floors[0]))
    return bounds


def _pins() -> tuple[dict[str, Version], set[str]]:
    """The file's pins, and the packages it says are not pinned there."""
    if not PINS.exists():
        pytest.skip("needs the checkout's .ci/lower-bounds.txt (not in the sdist)")
    pins: dict[str, Version] = {}
    left_out: set[str] = set()
    for line in PINS.read_text().splitlines():
        if line.startswith("#"):
            left_out |= {canonicalize_name(n) for n in re.findall(r"(\w[\w-]*) \(", line)}
            continue
        requirement = Requirement(line)
        (spec,) = requirement.specifier
        assert spec.operator == "==", line
        pins[canonicalize_name(requirement.name)] = Version(spec.version)
    return pins, left_out


def test_every_floor_is_pinned_at_its_first_release():
    pins, left_out = _pins()
    bounds = _bounds()
    for name, stated in bounds.items():
        floors = {floor for _, floor in stated}
        # an extra and the dev group stating two floors for one package: the library's own
        # would go untested (River's extra said 0.21, where only 0.26 was ever run)
        assert len(floors) == 1, f"{name}: different floors {stated}"
        (floor,) = floors
        if name in left_out:
            assert name not in pins, name
            continue
        assert name in pins, f"{name} >= {floor} is in no pin of {PINS.name} nor said left out"
        pin = pins[name]
        assert pin >= floor and pin.release[: len(floor.release)] == floor.release, (
            f"{name}: pinned {pin}, the floor is {floor}"
        )
    assert set(pins) <= set(bounds), f"pinned but not a dependency: {set(pins) - set(bounds)}"


def test_the_file_is_what_make_mindeps_installs():
    makefile = (ROOT / "Makefile").read_text()
    assert "pip install --quiet -r .ci/lower-bounds.txt" in makefile
    assert re.search(r"^mindeps:", makefile, re.MULTILINE)


def test_a_hung_test_fails_by_name_within_the_suites_limit(pytestconfig, tmp_path):
    # pytest-timeout, set in pyproject.toml: without it a hung test (a browser driver that
    # never answered did, 20 minutes) holds the CI until the CI is killed, naming nothing
    import subprocess
    import sys

    assert pytestconfig.pluginmanager.hasplugin("timeout")
    assert float(pytestconfig.getini("timeout")) == 300
    (tmp_path / "test_hangs.py").write_text(
        "import threading\n\ndef test_hangs():\n    threading.Event().wait()\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "timeout=2",
         "test_hangs.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout
    # "Timeout >2.0s" from pytest-timeout 2.2.0 (the floor), "Timeout (>2.0s)" from 2.4.0
    assert re.search(r"FAILED test_hangs\.py::test_hangs - Failed: Timeout \(?>2\.0s", done.stdout)
