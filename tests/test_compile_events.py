"""benchmarks/compile_events.py: its report of the compile events the workers wrote. (Recording
them is the plugin's job over a whole fresh-clone suite: minutes of CPU.)"""

from __future__ import annotations

import json

from helpers import load_benchmark


def test_the_report_totals_repeats_and_ranks_functions_and_tests(monkeypatch, tmp_path, capsys):
    events = load_benchmark(monkeypatch, "compile_events")

    def event(function, signature, seconds, test):
        return {"function": function, "signature": signature, "seconds": seconds, "test": test}

    (tmp_path / "gw0-1.json").write_text(
        json.dumps(
            [event("m.drive", "a", 3.0, "t.py::one"), event("m.learn", "b", 1.5, "t.py::one")]
        )
    )
    (tmp_path / "gw1-2.json").write_text(
        json.dumps([event("m.drive", "a", 2.0, "t.py::two"), event("m.drive", "c", 0.25, None)])
    )
    events.report(tmp_path, top=5)
    lines = capsys.readouterr().out.splitlines()
    # the second worker's compile of (m.drive, a) repeats the first's
    assert lines[0] == "4 compiles, 6.8 s; 2.0 s of them repeated"
    assert lines[1] == "by function"
    assert [line.split() for line in lines[2:4]] == [
        ["5.2", "s", "3", "m.drive"],
        ["1.5", "s", "1", "m.learn"],
    ]
    assert lines[4] == "by test"
    assert [line.split() for line in lines[5:]] == [
        ["4.5", "s", "2", "t.py::one"],
        ["2.0", "s", "1", "t.py::two"],
        ["0.2", "s", "1", "(no", "test)"],
    ]
