"""What the ``olboost reproduce`` suites kept in their own packages share: the parser of a suite,
described by a paragraph of its docstring, and the load average their records note
(:mod:`olboost.ranking_experiments`, :mod:`olboost.topk_experiments`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_suite_parser(
    sub: Any, name: str, help_text: str, doc: str, paragraph: int
) -> argparse.ArgumentParser:
    """Add the suite ``name`` to the ``olboost reproduce`` subparsers ``sub``: ``help_text`` in
    the list of suites, paragraph ``paragraph`` (0-based) of the docstring ``doc``, its markup
    removed, as the description.

    Returns
    -------
    argparse.ArgumentParser
        The suite's parser, for its options.
    """
    from olboost.cli import HelpFormatter, plain_text

    return sub.add_parser(
        name,
        help=help_text,
        description=plain_text(doc.split("\n\n")[paragraph]),
        formatter_class=HelpFormatter,
    )


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, or ``None`` where ``/proc/loadavg`` is unreadable."""
    try:
        return [float(v) for v in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return None
