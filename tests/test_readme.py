"""The README's table of the public API names only what a user can import where it says."""

from __future__ import annotations

import importlib
import re
import types
from pathlib import Path

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
