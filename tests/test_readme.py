"""The README holds to the code and the records: its table of the public API names only what a
user can import where it says, its Python examples run and give the results they show, and the
results it quotes (tables and sentences) are those of the records in ``benchmarks/results/`` it
names, or of the command it gives."""

from __future__ import annotations

import importlib
import json
import re
import types
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _scope(path: str) -> types.ModuleType:
    """The module ``path`` names, or the one holding the attribute it names (which must exist)."""
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError:
        parent, _, name = path.rpartition(".")
        module = importlib.import_module(parent)
        assert hasattr(module, name), f"README: {path} does not exist"
        return module


def test_every_name_of_the_api_table_is_in_a_module_its_row_names():
    rows = [line for line in README.read_text().splitlines() if line.startswith("| `olboost")]
    assert len(rows) > 10  # the table is there
    for row in rows:
        what, description = row.split("|")[1:3]
        scopes = [_scope(path) for path in re.findall(r"`(olboost[\w.]*)`", what)]
        # the other names of the row (classes beside a dotted one, a module's contents): names
        # of code have a capital or an underscore (`N` is a symbol, `checks` River's module)
        names = re.findall(r"`([A-Za-z]\w*(?:[A-Z_])\w*)`", what + description)
        for name in names:
            if name.startswith("olboost"):
                continue
            assert any(hasattr(scope, name) for scope in scopes), (
                f"README row {row[:50]!r}...: {name} is in none of "
                f"{[scope.__name__ for scope in scopes]}"
            )


def _python_blocks() -> list[tuple[int, str]]:
    """The README's ```python blocks, each with the number of its first line."""
    text = README.read_text()
    return [
        (text.count("\n", 0, m.start(1)) + 1, m.group(1))
        for m in re.finditer(r"^```python\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    ]


def _comments(source: str) -> dict[int, str]:
    """The comment of each line of ``source`` that has one, without its ``#``."""
    import io
    import tokenize

    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {t.start[0]: t.string[1:].strip() for t in tokens if t.type == tokenize.COMMENT}


def _check_result(value: object, comment: str, where: str) -> bool:
    """A README line's result beside its expression: a number (``0.2576 (rounded)``) is the
    value rounded to as many decimals; a River metric's (``Accuracy: 87.28%``, or ``81.30%``)
    ends its text. Other values (a fitted estimator, an array) and comments are not results.
    Returns whether the comment was a result."""
    import numbers

    found = re.match(r"[-+]?\d+\.(\d+)", comment)
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and found:
        assert round(float(value), len(found.group(1))) == float(found.group(0)), (
            f"{where}: {value!r}, the README says {comment!r}"
        )
        return True
    if hasattr(value, "works_with") and hasattr(value, "get"):  # a River metric
        said = comment.split(":")[-1].strip() if ":" in comment else comment
        assert str(value).endswith(said), f"{where}: {value}, the README says {comment!r}"
        return True
    return False


def test_every_python_example_runs_and_gives_the_results_it_shows(tmp_path, monkeypatch):
    # The examples had been checked only through tests of the same calls elsewhere: a README
    # example could break (an API renamed, a result moved) with the whole suite passing. Run
    # here as a reader runs them, in order and in one session (the save example saves the
    # model of the one before it), in a scratch directory.
    import ast

    pytest.importorskip("river", reason="the README's River examples need the river extra")
    pytest.importorskip("sklearn", reason="the README's scikit-learn example needs the extra")
    monkeypatch.chdir(tmp_path)
    blocks = _python_blocks()
    assert len(blocks) >= 6  # the blocks are found
    namespace: dict[str, object] = {"__name__": "__readme__"}
    results = []
    for first, source in blocks:
        comments = _comments(source)
        for statement in ast.parse(source).body:
            where = f"README.md line {first + statement.end_lineno - 1}"
            if isinstance(statement, ast.Expr):
                code = compile(ast.Expression(statement.value), where, "eval")
                value = eval(code, namespace)
                if statement.end_lineno in comments:
                    if _check_result(value, comments[statement.end_lineno], where):
                        results.append(where)
            else:
                exec(compile(ast.Module([statement], []), where, "exec"), namespace)
    # the four results the README shows (the River accuracies and F1, the sklearn rank loss)
    assert len(results) == 4, results


RESULTS = README.parent / "benchmarks" / "results"


def _record(name: str) -> dict:
    """The record ``benchmarks/results/NAME.json``."""
    return json.loads((RESULTS / f"{name}.json").read_text())


def _table(header: str) -> dict[str, list[str]]:
    """The README table whose header line starts with ``header``: its rows' cells by the first."""
    lines = README.read_text().splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(header)]
    assert len(starts) == 1, f"README: {len(starts)} tables headed {header!r}"
    rows = {}
    for line in lines[starts[0] + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def _published(value: float | None) -> str:
    """A published number as the top-k table brackets it (``.20``)."""
    return "-" if value is None else f"{value:.2f}".removeprefix("0")


def _sentence(pattern: str) -> re.Match:
    """The README's text matching ``pattern`` (across lines), which must be there once."""
    found = list(re.finditer(pattern, re.sub(r"\s+", " ", README.read_text())))
    assert len(found) == 1, f"README: {len(found)} matches of {pattern!r}: update this test"
    return found[0]


def test_the_label_rankers_losses_the_readme_quotes_are_what_the_command_gives(tmp_path):
    from olboost.cli import main

    said = _sentence(
        r"`(olboost run --algorithm label-ranker --dataset emotions)` \(Update III\) gets rank "
        r"loss ([\d.]+), ([\d.]+) with `--scale standard` and ([\d.]+) with `--scale none`"
    )
    command = said.group(1).split()[1:]
    runs = ([], ["--scale", "standard"], ["--scale", "none"])
    for i, (options, quoted) in enumerate(zip(runs, said.groups()[1:], strict=True)):
        out = tmp_path / f"{i}.json"
        assert main([*command, *options, "--no-progress", "--output", str(out)]) == 0
        loss = json.loads(out.read_text())["rank_loss"]
        assert f"{loss:.4f}" == quoted, (options, loss, quoted)


def test_the_readmes_result_tables_are_its_results_files():
    # The README's tables of reproduced results are copied from the records of the commands it
    # names (benchmarks/results/*.json); a record written again, or a table edited, without
    # the other fails here. The records' numbers are the seeded runs' own (make accuracy reruns
    # them; tests/protocol.py holds the suite's reruns to them).
    mlr = _record("reproduce_mlr")
    table = _table("| data | Ada.OLMR ± sd | published | best BMR ± sd (edge) |")
    expected = {}
    for row in mlr["rows"]:
        ada, gamma = row["ada_olmr"], row["best_bmr_gamma"]
        bmr = row["online_bmr_by_gamma"][str(gamma)]
        expected[row["dataset"]] = [
            f"{ada['rank_loss_mean']:.4f} ± {ada['rank_loss_std']:.4f}",
            f"{row['published_ada_olmr']:.4f}",
            f"{bmr['rank_loss_mean']:.4f} ± {bmr['rank_loss_std']:.4f} ({gamma})",
            f"{row['published_best_bmr']:.4f}",
        ]
    assert table == expected

    topk = _record("reproduce_topk")
    table = _table("| data | TopOpt, uniform | TopAda, uniform |")
    expected = {}
    for data in topk["tables"]["uniform"]:
        published = topk["published"]
        cells = []
        for exploration in ("uniform", "single-swap"):
            cell = topk["tables"][exploration][data]
            said = published[exploration][topk["stand_in"].get(data, data)]
            for i, column in enumerate(("TopOpt", "TopAda")):
                if column not in cell:
                    cells.append("-")
                    continue
                mean = f"{cell[column]['rank_loss_mean']:.4f}"
                edge = f" ({cell[column]['gamma']})" if column == "TopOpt" else ""
                cells.append(f"{mean}{edge} [{_published(said[i])}]")
        full = topk["full"].get(data)
        said = published["uniform"][topk["stand_in"].get(data, data)]
        for i, column in enumerate(("FullOpt", "FullAda"), start=2):
            cells.append(
                "-" if full is None
                else f"{full[column]['rank_loss_mean']:.4f} [{_published(said[i])}]"
            )  # fmt: skip
        expected[data] = cells
    assert table == expected

    multiclass = _record("reproduce_multiclass")
    table = _table("| data | DT (oracle) | Adaboost.OLM | MBBM .3 | MBBM .1 | OvA | AdaOVA |")
    columns = ("DT", "AdaOLM", "MB .3", "MB .1", "OvA", "AdaOVA")
    published = multiclass["published"]["final20"]
    assert table == {
        data: [f"{cells[c]['accuracy_last20']:.3f} ({published[data][c]:.3f})" for c in columns]
        for data, cells in multiclass["results"].items()
    }

    large_k = _record("large_k")["cases"]
    table = _table("| case | ms per example | peak MB | target |")
    assert len(table) == len(large_k) == 8
    for case, cells in table.items():
        booster, k, grown = re.fullmatch(r"([\w.]+), k = ([\d,]+)(, grown)?", case).groups()
        name = f"{booster.replace('.', '')}-k{k.replace(',', '')}{'-grown' if grown else ''}"
        record = large_k[name]
        assert cells[0].split()[0] == f"{record['ms_per_example']:.2f}", case
        if booster == "OnlineBMR":  # its time as a multiple of Ada.OLMR's
            ada = large_k[name.replace("OnlineBMR", "AdaOLMR")]["ms_per_example"]
            assert f"({record['ms_per_example'] / ada:.2f}x Ada.OLMR)" in cells[0], case
        assert cells[1] == f"{record['model_peak_mb']:.0f}", case


def test_the_readmes_speed_table_is_its_benchmarks_records():
    # The table of make bench's speeds: each figure is its record's, as recorded (the records
    # name the machine; speeds move from host to host, the copy must not move from its record).
    ada = _record("ada_olmr")["cases"]
    bmr = _record("online_bmr")["cases"]
    multiclass = _record("multiclass")["cases"]
    cold = ada["cold_start"]
    paired = _record("cold_start_paired")
    shares = {c["booster"]: c["booster_share"] for c in _record("booster_share")["cases"]}
    river = ada["emotions-river"]
    expected = {
        "Ada.OLMR, emotions (593 examples)": [
            f"{ada['emotions-vfdt']['seconds']:.3f} s",
            f"{ada['emotions-vfdt-2threads']['seconds']:.3f} s",
        ],
        "Ada.OLMR, same model on `RiverCommittee`": [f"{river['seconds']:.1f} s"],
        "speed-up of the compiled committee over River": [
            f"{river['speedup_vfdt_over_river']:.0f}x",
            f"{river['speedup_vfdt_2threads_over_river']:.0f}x",
        ],
        "Ada.OLMR, yeast": [
            f"{ada['yeast-vfdt']['seconds']:.2f} s",
            f"{ada['yeast-vfdt-2threads']['seconds']:.2f} s",
        ],
        "Ada.OLMR, tmc2007-500": [
            f"{ada['tmc2007-500-vfdt']['seconds']:.1f} s, "
            f"{ada['tmc2007-500-vfdt']['peak_rss_mb']:.0f} MB",
            f"{ada['tmc2007-500-vfdt-2threads']['seconds']:.1f} s",
        ],
        "OnlineBMR (exact), emotions": [f"{bmr['emotions']['seconds']:.2f} s"],
        "OnlineBMR (exact), mediamill-reduced": [f"{bmr['mediamill-reduced']['seconds']:.2f} s"],
        "OnlineBMR (exact), tmc2007-500": [f"{bmr['tmc2007-500']['seconds']:.2f} s"],
        "OnlineBMR with the authors' Monte Carlo": [
            f"{bmr['emotions-monte-carlo']['seconds']:.1f} s"
        ],
        "Adaboost.OLM, nursery": [f"{multiclass['nursery-vfdt']['seconds']:.2f} s"],
        "Adaboost.OLM, PUC-Rio HAR": [f"{multiclass['har-vfdt']['seconds']:.1f} s"],
        "Adaboost.OLM over River": [
            f"{multiclass['balance-river']['speedup_vfdt_over_river']:.0f}x / "
            f"{multiclass['car-river']['speedup_vfdt_over_river']:.0f}x"
        ],
        "compile on an empty Numba cache": [
            f"{cold['ada-olmr']['cold_compile_seconds']:.1f} s / "
            f"{cold['all']['cold_compile_seconds']:.1f} s"
        ],
        "the same in one process": [
            f"{cold['ada-olmr']['serial_compile_seconds']:.1f} s / "
            f"{cold['all']['serial_compile_seconds']:.1f} s"
        ],
        "first `olboost run": [
            f"{paired['median_cold_cost_seconds']['before']:.1f} s / "
            f"{paired['median_cold_cost_seconds']['after']:.1f} s "
            f"(ratio {paired['ratio_after_to_before']:.2f})"
        ],
        "booster's share of the run": [
            f"{100 * shares['AdaOLMR']:.1f}% / {100 * shares['OnlineBMR']:.1f}%"
        ],
    }
    table = _table("| case | 1 thread (default) | `n_threads=2` | target |")
    assert len(table) == len(expected)
    for start, cells in expected.items():
        (row,) = [row for case, row in table.items() if case.startswith(start)]
        for i, cell in enumerate(cells):
            assert row[i].startswith(cell), (start, i, row[i], cell)


def test_the_potentials_speeds_the_readme_quotes_are_their_record():
    said = _sentence(
        r"Exact potentials against the authors' Monte Carlo estimate \(M = 100\).*?"
        r"per second \(`benchmarks/results/potentials\.json`\): (.*?) \(N = 100\), and the exact "
        r"values agree with brute-force enumeration to ([\d.e-]+)\."
    )
    record = _record("potentials")
    quoted = re.findall(r"k = (\d+): ([\d,]+) vs ([\d,]+)", said.group(1))
    assert len(quoted) == 3
    for k, exact, monte_carlo in quoted:
        timings = record["cases"][f"k{k}-N100"]["timings"]
        assert exact == f"{timings['exact']['cost_vectors_per_s']:,.0f}", k
        assert monte_carlo == f"{timings['monte_carlo']['cost_vectors_per_s']:,.0f}", k
    assert record["brute_force"]["max_abs_difference"] <= float(said.group(2))


def test_the_readmes_prose_results_are_their_records():
    # Results quoted in sentences rather than tables, each beside the record it names.
    # the 27 reorderings of the MB columns
    said = _sentence(r"MBBM \.3 / \.1 reach: (.*?)\. On PUC-Rio HAR")
    results = _record("reproduce_multiclass_mbbm")["results"]
    quoted = re.findall(r"(\w+) ([\d.]+) / ([\d.]+)", said.group(1))
    assert {data for data, *_ in quoted} == set(results)
    for data, mb3, mb1 in quoted:
        assert mb3 == f"{results[data]['MB .3']['accuracy_last20']:.3f}", data
        assert mb1 == f"{results[data]['MB .1']['accuracy_last20']:.3f}", data

    # the movement data set
    said = _sentence(
        r"Adaboost\.OLM reaches ([\d.]+) \(paper [\d.]+\), MBBM \.1 ([\d.]+) \([\d.]+\) and "
        r"MBBM \.05 ([\d.]+) \([\d.]+\)"
    )
    results = _record("reproduce_multiclass_movement")["results"]["movement"]
    for column, quoted in zip(("AdaOLM", "MB .1", "MB .05"), said.groups(), strict=True):
        assert quoted == f"{results[column]['accuracy_last20']:.3f}", column

    # the top-k runs against the paper's Table 4
    cases = _record("topk")["cases"]
    for column in ("TopOpt", "TopAda"):
        said = _sentence(rf"{column}: (emotions [^;]*?\)), scene .*? mediamill-reduced ([^)]*\))")
        quoted = re.findall(
            r"(emotions|scene|yeast|mediamill-reduced) ([\d.]+) s \(([\d,]+) s(?: published)?, "
            r"([\d,]+)x\)",
            said.group(0),
        )
        assert len(quoted) == 4, said.group(0)
        for data, seconds, paper, speedup in quoted:
            case = cases[f"{data}-{column}"]
            assert seconds == f"{case['seconds']:.2f}", (column, data)
            assert paper == f"{case['paper_seconds']:,.0f}", (column, data)
            assert speedup == f"{case['speedup']:,.0f}", (column, data)


def test_the_readmes_service_and_sweep_figures_are_their_records():
    serve = _record("serve")
    said = _sentence(
        r"load average [\d.]+ before it\): (\d+) rank \+ feedback pairs per second sustained for "
        r"the (\d+) s, .*? `/rank` p50 ([\d.]+) ms, p90 ([\d.]+) ms and p99 ([\d.]+) ms, "
        r"`/feedback` p99 ([\d.]+) ms; the server used ([\d.]+) cores \(([\d.]+) ms of CPU per "
        r"pair\) and the client ([\d.]+)\."
    )
    rank, feedback = serve["rank_latency_ms"], serve["feedback_latency_ms"]
    seconds = serve["seconds"]
    assert list(said.groups()) == [
        f"{serve['pairs_per_second']:.0f}",
        f"{serve['targets']['seconds']:.0f}",
        f"{rank['p50']:.1f}",
        f"{rank['p90']:.1f}",
        f"{rank['p99']:.1f}",
        f"{feedback['p99']:.1f}",
        f"{serve['server_cpu_seconds'] / seconds:.2f}",
        f"{1000 * serve['server_cpu_seconds'] / serve['pairs']:.1f}",
        f"{serve['client_cpu_seconds'] / seconds:.2f}",
    ]

    learning = _record("serve_learning")
    said = _sentence(
        r"served ([\d.]+) \+- ([\d.]+), in process ([\d.]+) \+- ([\d.]+) \(mean \+- standard "
        r"deviation over the seeds\); per-seed difference (-?[\d.]+) \+- ([\d.]+), paired t = "
        r"(-?[\d.]+),"
    )
    served, in_process, difference = (
        learning["served"], learning["in_process"], learning["difference"]
    )  # fmt: skip
    assert list(said.groups()) == [
        f"{served['mean']:.4f}",
        f"{served['std']:.4f}",
        f"{in_process['mean']:.4f}",
        f"{in_process['std']:.4f}",
        f"{difference['mean']:.4f}",
        f"{difference['std']:.4f}",
        f"{difference['paired_t']:.2f}",
    ]

    sweep = _record("sweep")
    said = _sentence(
        r"2 workers took ([\d.]+) s and ([\d.]+) s, 1 worker ([\d.]+) s and ([\d.]+) s: 2 workers "
        r"were ([\d.]+)x faster than 1 .*? compiled (\d+) kernels that the cache lacked, timed "
        r"apart: ([\d.]+) s\."
    )
    runs = {1: [], 2: []}
    for run in sweep["runs"]:
        runs[run["workers"]].append(f"{run['seconds']:.1f}")
    first = sweep["runs"][0]
    assert list(said.groups()) == [
        *runs[2], *runs[1], f"{sweep['speedup']:.2f}",
        str(first["warm_up_compiled"][0]), f"{first['warm_up_seconds'][0]:.1f}",
    ]  # fmt: skip
