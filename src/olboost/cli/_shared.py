"""What every ``olboost`` command shares: its output options and JSON record, the checks of
output paths before a run, the cells a ``reproduce`` suite keeps, the help formatting and the
one-line error message (re-exported by :mod:`olboost.cli`); the parser and the load average
of the ``reproduce`` suites kept in their own packages (:mod:`olboost.ranking_experiments`,
:mod:`olboost.topk_experiments`)."""

from __future__ import annotations

import argparse
import errno
import functools
import hashlib
import json
import math
import os
import platform
import re
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from olboost._version import __version__

if TYPE_CHECKING:
    from olboost.checkpoint import CellCache

#: Options that do not change a run's numbers: left out of the key that a checkpoint or a
#: finished cell is matched on.
_NOT_RESULTS = frozenset(
    {
        "func", "command", "suite", "record", "output", "json", "no_progress", "checkpoint",
        "checkpoint_every", "resume", "save_model", "cells", "no_cells", "seeds", "datasets",
        "no_bmr", "given_options",
    }
)  # fmt: skip


def _environment() -> dict[str, Any]:
    import numba

    return {
        "olboost_version": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "machine": platform.machine(),
        "platform": platform.platform(),
    }


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed
        return False


def show_progress(args: argparse.Namespace) -> bool:
    """Whether to draw a progress bar: not ``--no-progress``, and stderr is a terminal (a bar
    redirected into a file is noise)."""
    return not getattr(args, "no_progress", False) and _stderr_is_terminal()


#: File names suggested when a path option names a directory.
_EXAMPLE_NAMES = {"--checkpoint": "run.olb", "--save-model": "model.olb"}


def check_output(
    path: str | os.PathLike[str] | None,
    option: str = "--output",
    reads: Iterable[tuple[str, str | os.PathLike[str] | None]] = (),
) -> Path | None:
    """Check, before a run, that ``path`` can be written: not a directory, in a directory that
    exists and is writable, and none of the files the command reads (``reads``, pairs of an
    option and a path; ``None`` and what is no file are skipped), which the write would replace
    (a ``ValueError``). Raises the ``OSError`` the write would have raised at the end, naming
    ``option``; returns the path (``None`` for ``None``)."""
    if path is None:
        return None
    refuse_overwriting([(option, path)], reads)
    if os.fspath(path) == "-":
        # the usual name of standard output, which a file named '-' in the working directory
        # would have silently replaced
        instead = "; --json prints the record to stdout" if option == "--output" else ""
        raise ValueError(f"{option} -: give a file path (not standard output){instead}")
    from olboost._atomic import followed, special_file

    where = f"{option} {Path(path)}"
    if special_file(path):
        # a device or a pipe (/dev/null, >(...)): written into (atomic_write), nothing created
        # beside it; "cannot create files in /dev" refused --output /dev/null
        if not os.access(path, os.W_OK):
            raise PermissionError(13, "the file is not writable", where)
        return Path(path)
    # where the write goes: a symbolic link's target (atomic_write writes through links)
    target = followed(path)
    # a name longer than the file system takes failed only at the end (after a stat here
    # that said so in Python's words)
    try:
        limit = os.pathconf(target.parent, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        limit = 255
    size = len(os.fsencode(target.name))
    if size > limit:
        raise OSError(
            errno.ENAMETOOLONG, f"file name too long ({size} bytes; at most {limit} here)", where
        )
    if target.is_dir():
        example = target / _EXAMPLE_NAMES.get(option, "results.json")
        raise IsADirectoryError(
            21, f"is a directory; give a file path, e.g. {option} {example}", where
        )
    parent = target.parent
    if not parent.exists():
        raise FileNotFoundError(2, f"no such directory {parent}", where)
    if not parent.is_dir():
        raise NotADirectoryError(20, f"{parent} is not a directory", where)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PermissionError(13, f"cannot create files in {parent}", where)
    if target.exists() and not os.access(target, os.W_OK):
        raise PermissionError(13, "the file is not writable", where)
    # os.access answers from the permission bits, and yes for root: a file system that takes no
    # new files (/proc, a read-only mount) failed only at the end, naming the temporary file the
    # output is written through. A file made and removed there says it before the run.
    from olboost._atomic import _TEMPORARY_SUFFIX, remove_stale_temporaries, temporary_prefix

    remove_stale_temporaries(target)  # a killed writer's of this output

    try:
        # the form of the temporary file the output is written through (which a later
        # remove_stale_temporaries removes if this process is killed before the unlink)
        handle, probe = tempfile.mkstemp(
            prefix=temporary_prefix(target), suffix=_TEMPORARY_SUFFIX, dir=parent
        )
    except OSError as err:
        raise type(err)(
            err.errno, f"cannot create files in {parent} ({err.strerror})", where
        ) from None
    os.close(handle)
    os.unlink(probe)
    return Path(path)


def refuse_overwriting(
    outputs: Iterable[tuple[str, str | os.PathLike[str] | None]],
    reads: Iterable[tuple[str, str | os.PathLike[str] | None]] = (),
) -> None:
    """Refuse outputs (pairs of an option and a path; ``None`` skipped) that name one of the
    files a command reads (``reads``, likewise) or each other's file: the last write would
    replace the others (a data file by the JSON record, a checkpoint by a model)."""
    seen = {
        Path(source).resolve(): option
        for option, source in reads
        if source is not None and Path(source).is_file()
    }
    from olboost._atomic import special_file

    for option, value in outputs:
        if value is None or special_file(value):  # /dev/null takes any number of writes
            continue
        path = Path(value).resolve()
        if path in seen:
            raise ValueError(
                f"{option} {value}: the same file as {seen[path]}; give each output its own path"
            )
        seen[path] = option


def record_json(record: Any) -> str:
    """A record as JSON text (RFC 8259, which has no NaN or infinity): a number that is not
    finite, such as the rank loss of a split without a relevant/irrelevant pair, is ``null``.
    Python's ``json`` would write the bare ``NaN`` that strict parsers (``jq``, JavaScript)
    refuse. Text is Unicode text: a name that Python read from a file name or the command line
    under a locale that is not UTF-8 holds its bytes as lone surrogates (``\\udcc3``), no text
    at all; the bytes are read as UTF-8 (U+FFFD where they are not)."""
    return json.dumps(_strict(record), indent=2, allow_nan=False) + "\n"


def _strict(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dict):
        return {_strict(k): _strict(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_strict(v) for v in value]
    return value


def _text(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        try:
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:  # a surrogate that no byte escapes (from JSON's \\ud800)
            return value.encode("utf-8", "replace").decode("utf-8")
    return value


def write_record(
    args: argparse.Namespace, record: dict[str, Any], path: str | os.PathLike[str] | None = None
) -> None:
    """Write a command's JSON record to ``path`` (default: ``--output``) atomically, and keep it
    for ``--json``, which prints it to stdout when the command is done."""
    target = getattr(args, "output", None) if path is None else path
    if target:
        from olboost.checkpoint import atomic_write

        atomic_write(target, record_json(record).encode())
    args.record = record


def cell_cache(
    args: argparse.Namespace, output: str | os.PathLike[str] | None, suite: str
) -> CellCache:
    """The :class:`~olboost.checkpoint.CellCache` of a ``reproduce`` suite: ``--cells DIR``, or
    ``<output stem>.cells`` beside ``output``; none with ``--no-cells`` or without an output."""
    from olboost.checkpoint import CellCache

    if getattr(args, "no_cells", False):
        return CellCache(None, suite)
    directory = getattr(args, "cells", None)
    given = directory is not None
    if directory is None and output is not None:
        from olboost._atomic import special_file

        if special_file(output):  # /dev/null: no /dev/null.cells
            return CellCache(None, suite)
        directory = Path(output).with_suffix(".cells")
    if directory is not None and output is not None and _same_path(directory, output):
        # the cache would make the output's path a directory, and the record, written last,
        # would fail after the whole run
        raise ValueError(
            f"--output {output}: "
            + ("the same path as --cells" if given else "the path of its own cells directory")
            + ("" if given else " (<output stem>.cells): name the output otherwise, or give "
               "--cells DIR")
        )  # fmt: skip
    return CellCache(directory, suite)


def _same_path(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    return os.path.abspath(os.path.realpath(a)) == os.path.abspath(os.path.realpath(b))


def files_digest(paths: Sequence[Path]) -> str | None:
    """SHA-256 of the bytes of ``paths``, in order (``None`` if one cannot be read: the run
    names it), computed once per process for files whose size and modification time stay."""
    try:
        stamps = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in paths)
    except OSError:
        return None
    return _files_digest(stamps)


@functools.lru_cache(maxsize=16)
def _files_digest(stamps: tuple[tuple[str, int, int], ...]) -> str | None:
    digest = hashlib.sha256()
    try:
        for name, _, _ in stamps:
            with open(name, "rb") as f:
                digest.update(hashlib.file_digest(f, "sha256").digest())
    except OSError:
        return None
    return digest.hexdigest()[:20]


def cell_key(args: argparse.Namespace, **extra: Any) -> dict[str, Any]:
    """What a run's numbers depend on: the options of ``args`` (those of :data:`_NOT_RESULTS`
    aside), ``extra`` and the olboost version."""
    key = {
        name: value
        for name, value in sorted(vars(args).items())
        if name not in _NOT_RESULTS and not callable(value)
    }
    return {**key, **extra, "olboost": __version__}


def add_output_options(
    p: argparse.ArgumentParser,
    *,
    output: str = "write the results as JSON to this file (checked before the run)",
    progress: bool = True,
    cells: bool = False,
) -> None:
    """``--output``, ``--json``, ``--no-progress`` and, for a ``reproduce`` suite, ``--cells``
    and ``--no-cells``."""
    p.add_argument("--output", metavar="PATH", help=output)
    p.add_argument(
        "--json",
        action="store_true",
        help="print the JSON record to stdout (the other messages go to stderr)",
    )
    if progress:
        p.add_argument(
            "--no-progress",
            action="store_true",
            help="no progress bar (one is drawn only when stderr is a terminal)",
        )
    if cells:
        # exclusive: with both, --cells was ignored without a word
        kept = p.add_mutually_exclusive_group()
        kept.add_argument(
            "--cells",
            metavar="DIR",
            help="directory keeping each finished cell, so that a rerun skips it (default: "
            "beside the output, <output stem>.cells; none without an output)",
        )
        kept.add_argument(
            "--no-cells", action="store_true", help="neither read nor write finished cells"
        )


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's default in its help, except where there is none to show (``None``, a
    flag's ``False``) or the help says it already."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            "%(default)" in text
            or "default:" in text
            or "(default)" in text
            or not action.option_strings
            or default is None
            or (isinstance(default, list | tuple) and not default)
            or default is False
            or default is argparse.SUPPRESS
        ):
            return text
        if isinstance(default, list | tuple):
            shown = " ".join(str(v) for v in default).replace("%", "%%")
            return f"{text} (default: {shown})"
        return f"{text} (default: %(default)s)"


_ROLE = re.compile(r":[a-z]+:`(~?)([^`<]+?)(?:\s*<[^`]*>)?`")


def plain_text(text: str) -> str:
    """reStructuredText inline markup removed, for help texts written as docstrings:
    ``:class:`~a.B``` -> ``B``, ``:func:`a.f``` -> ``a.f``, double back-quotes, ``**bold**``
    and ``*emphasis*`` -> their text.

    >>> plain_text("Top-k BBM (:class:`olboost.TopkBBM`), ``k = 3``, the *shown* ranking")
    'Top-k BBM (olboost.TopkBBM), k = 3, the shown ranking'
    """
    text = _ROLE.sub(lambda m: m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2), text)
    text = re.sub(r"``(.+?)``", r"\1", text, flags=re.S)
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text, flags=re.S)
    return re.sub(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])", r"\1", text, flags=re.S)


def error_line(err: BaseException) -> str:
    """An exception as one line: ``<file>: <reason>`` for an ``OSError`` with a file name."""
    if isinstance(err, OSError) and err.strerror:
        text = err.strerror if err.filename is None else f"{err.filename}: {err.strerror}"
        if err.filename2 is not None:
            text += f" (and {err.filename2})"
    else:
        text = str(err) or type(err).__name__
    return " ".join(text.split())


# ------------------------------------------------ the reproduce suites kept in their own packages


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
    return sub.add_parser(
        name,
        help=help_text,
        description=plain_text(doc.split("\n\n")[paragraph]),
        formatter_class=HelpFormatter,
    )


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, or ``None`` where the platform keeps none
    (Windows)."""
    try:
        return list(os.getloadavg())
    except (AttributeError, OSError):
        return None
