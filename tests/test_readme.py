"""The README's table of the public API names only what a user can import where it says."""

from __future__ import annotations

import importlib
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


def test_the_label_rankers_losses_the_readme_quotes_are_what_the_command_gives(tmp_path):
    import json

    from olboost.cli import main

    said = re.search(
        r"`(olboost run --algorithm label-ranker --dataset emotions)` \(Update III\) gets rank "
        r"loss ([\d.]+),\s+([\d.]+) with `--scale standard` and ([\d.]+) with `--scale none`",
        README.read_text(),
    )
    assert said, "the README's sentence on the label ranker's scaling moved: update this test"
    command = said.group(1).split()[1:]
    runs = ([], ["--scale", "standard"], ["--scale", "none"])
    for i, (options, quoted) in enumerate(zip(runs, said.groups()[1:], strict=True)):
        out = tmp_path / f"{i}.json"
        assert main([*command, *options, "--no-progress", "--output", str(out)]) == 0
        loss = json.loads(out.read_text())["rank_loss"]
        assert f"{loss:.4f}" == quoted, (options, loss, quoted)
