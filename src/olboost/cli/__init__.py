"""Command-line interface: ``olboost run`` and ``olboost reproduce``.

``olboost run --algorithm ada-olmr --dataset emotions --learners 100 --seed 1 --output r.json``
evaluates one algorithm on one data set.

* Multi-label ranking algorithms (``ada-olmr``, ``online-bmr``) take a bundled MULAN name or an ARFF
  path with ``--labels`` (its MULAN XML) and optionally ``--test`` (a separate test split, evaluated
  with the paper's train/test protocol; a single file alone is evaluated prequentially). They
  report rank losses. ``--loops L`` streams the train split ``L`` times first.
* Top-k feedback algorithms (``topk-bbm``, ``topk-adaptive``; Raman et al. 2020) take the same data
  and ``--k``, ``--exploration``, ``--rho`` (and ``--gamma`` for ``topk-bbm``): they show a
  randomised ranking, are scored on it (weighted rank loss of the ranking shown) and learn the
  relevance of its top ``k`` labels only.
* Multiclass algorithms (``online-mbbm``, ``adaboost-olm``, ``best-tree``, ``oza-boost``,
  ``ova-adaboost-ol``, ``ada-ova``) take a bundled UCI name or a path to a UCI file
  (e.g. the PUC-Rio HAR CSV). The stream is reordered with ``--seed`` (the papers' reorderings) and
  evaluated prequentially; they report ``accuracy`` and ``accuracy_last20``.

* The linear label ranker (``label-ranker``: :class:`olboost.rankers.LabelRanker`, ``--update``,
  ``--complexity``, ``--C``, ``--margin``; by default the hyperparameters olboost chose for
  Table 1, which the paper does not give) takes the same MULAN data (``--scale``: its features
  min-max scaled by default), or Enron foldering data
  (an Enron user such as ``sanders-r``, an archive ``<dir>/<user>.mbox.tar.xz`` or a directory
  of them), on which it reports the percentage of online mistakes over each user's chronological
  stream (:mod:`olboost.ranking_experiments`).

A data set with missing feature values (``?`` in an ARFF file) is run as it is, the missing values
as NaN for the trees to handle; ``olboost run`` first prints how many are missing in which
columns, and adds ``missing_values`` and ``missing_by_column`` to the JSON record. UCI data (the
multiclass algorithms) are loaded as the paper handled their missing values (``load_uci``'s
default, e.g. mice's empty cells replaced by 0): ``olboost run`` prints how and records it as
``missing_handling``.

**Checkpoints.** ``olboost run --checkpoint PATH --checkpoint-every N`` writes the model and the
evaluation's progress to ``PATH`` atomically every ``N`` examples and at the end
(:mod:`olboost.checkpoint`); ``--resume`` continues from it, and the run ends with the model and
the record of an uninterrupted run (timings aside). ``--save-model PATH`` saves the trained model
(:func:`olboost.save`).

**Output.** ``--output PATH`` writes the JSON record atomically; the path is checked before the
run starts, so a bad one fails at once. ``--json`` prints the record to stdout (everything else
then goes to stderr). Progress bars are drawn only when stderr is a terminal. An error is one line
on stderr (``olboost: error: ...``) and exit status 2: a bad option, a missing or unreadable file
(any ``OSError``), bad data.

``olboost reproduce mlr --seeds 10`` runs Ada.OLMR and OnlineBMR (best edge per data set, as the
paper did) on the four bundled MULAN sets and prints the mean test rank loss beside the numbers
published by Jung & Tewari (2018, Table 3). ``olboost reproduce topk --seeds 10`` and ``olboost
reproduce topk-curves`` re-run Tables 1, 2, 4 and Fig. 1 of Raman et al. (2020)
(:mod:`olboost.topk_experiments`); ``olboost reproduce label-ranking`` Table 1 of Shalev-Shwartz &
Singer (2007) (:mod:`olboost.ranking_experiments`). Each ``reproduce`` suite keeps every finished
cell (one run of the table) in a directory beside its output (``<output stem>.cells``, or
``--cells DIR``): a rerun reads the cells done instead of running them again, and says so.

**Adding a command.** :data:`COMMANDS` and :data:`REPRODUCE_SUITES` name the functions that add
each subcommand's parser (``add(subparsers)``, the parser's ``func`` default running it); a new
command is one line there. :class:`HelpFormatter`, :func:`add_output_options`,
:func:`check_output`, :func:`write_record` and :func:`cell_cache` give it the shared behaviour.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from olboost._version import __version__

# ``X as X``: names that other modules, the tests and the benchmarks import from olboost.cli,
# where they were defined before the command became this package.
from olboost.cli._algorithms import ALGORITHMS, COMMITTEES
from olboost.cli._algorithms import DEFAULT_FEATURES as DEFAULT_FEATURES
from olboost.cli._algorithms import Algorithm as Algorithm
from olboost.cli._reproduce import PUBLISHED_MLR, bmr_gammas
from olboost.cli._run import DEFAULT_CHECKPOINT_EVERY as DEFAULT_CHECKPOINT_EVERY
from olboost.cli._run import _load as _load
from olboost.cli._run import run_one as run_one
from olboost.cli._shared import (
    HelpFormatter,
    add_output_options,
    cell_cache,
    check_output,
    error_line,
    plain_text,
    write_record,
)
from olboost.cli._shared import _environment as _environment
from olboost.cli._shared import cell_key as cell_key
from olboost.cli._shared import record_json as record_json
from olboost.cli._shared import show_progress as show_progress

__all__ = [
    "ALGORITHMS",
    "COMMANDS",
    "COMMITTEES",
    "PUBLISHED_MLR",
    "REPRODUCE_SUITES",
    "HelpFormatter",
    "add_output_options",
    "bmr_gammas",
    "build_parser",
    "cell_cache",
    "check_output",
    "main",
    "plain_text",
    "write_record",
]

#: ``olboost reproduce`` suites: ``"module:function"`` adding the suite's parser(s) to the
#: ``reproduce`` subparsers, in help order.
REPRODUCE_SUITES: tuple[str, ...] = (
    "olboost.cli._reproduce:_add_mlr",
    "olboost.cli._reproduce:_add_multiclass",
    "olboost.topk_experiments:add_parsers",  # topk and topk-curves
    "olboost.ranking_experiments:add_parser",  # label-ranking
)


def _add_reproduce(sub: Any) -> None:
    rep = sub.add_parser(
        "reproduce",
        help="re-run a table of the papers",
        description="Re-run the tables of the papers beside their published numbers. Each "
        "finished cell is kept beside the output, so that a rerun skips it.",
        formatter_class=HelpFormatter,
    )
    rep_sub = rep.add_subparsers(
        dest="suite", required=True, metavar="SUITE", parser_class=ExactOptionParser
    )
    for name in REPRODUCE_SUITES:
        _resolve(name)(rep_sub)


#: Top-level commands: ``"module:function"`` adding the command's parser to ``olboost``'s
#: subparsers, in help order. A new command is one more line (its module is imported when the
#: parser is built).
COMMANDS: tuple[str, ...] = (
    "olboost.cli._run:_add_run",
    "olboost.cli:_add_reproduce",
    "olboost.plots:add_parsers",  # plot
    "olboost.sweep:add_parsers",  # sweep
    "olboost.serve.commands:add_parsers",  # serve, simulate and backup
)


def _resolve(name: str) -> Callable[[Any], None]:
    module, _, function = name.partition(":")
    return getattr(importlib.import_module(module), function)


_DESCRIPTION = """\
olboost: online boosting for multiclass classification and multi-label ranking. Run
'olboost COMMAND --help' for the options of a command."""


class ExactOptionParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that takes long options only as spelt in full (``allow_abbrev``
    off), its subcommands' parsers too: argparse's prefix matching read ``reproduce mlr --seed
    2`` as ``--seeds 2`` (seeds 1 and 2, where ``run --seed 2`` is the one seed 2) and ``--k``
    as ``--ks``, without a word."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    """The ``olboost`` parser, with every command of :data:`COMMANDS`."""
    parser = ExactOptionParser(
        prog="olboost", description=_DESCRIPTION, formatter_class=HelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"olboost {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=ExactOptionParser
    )
    for name in COMMANDS:
        _resolve(name)(sub)
    return parser


def _drop_stdout() -> None:
    """Point the process's stdout at the null device, so that flushing it at exit does not fail
    again on a closed pipe (only for the real stdout)."""
    if sys.stdout is sys.__stdout__ and sys.stdout is not None:
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``olboost`` command; returns the exit status (2 on an error, said in
    one line on stderr)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    try:
        with _one_line_warnings(), _lenient_stdout():
            return _call(args)
    except KeyboardInterrupt:
        print("olboost: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # stdout closed early (olboost ... --json | head): nothing to say
        _drop_stdout()
        return 141
    except (OSError, ValueError, TypeError, ImportError, MemoryError) as err:
        print(f"olboost: error: {_with_option(error_line(err), argv)}", file=sys.stderr)
        return 2


#: Estimator parameters set by a command-line option of another name.
_OPTION_OF = {"n_features": "features"}


def _with_option(line: str, argv: Sequence[str]) -> str:
    """``line`` led by the option that gave the value it refuses, where an estimator refused it
    under its parameter's name (``AdaOLMR.learners must be ...`` for ``--learners 0``)."""
    # "AdaOLMR.learners must be ..." and "TopkBBM: k=100 must be in [2, m=6] labels"
    match = re.match(r"[A-Z]\w*\.(\w+) ", line) or re.match(r"[A-Z]\w*: (\w+)=", line)
    if match is None:
        return line
    # the committee's features per tree are --features (serve's --n-features is the width of
    # the feature vectors, another number)
    option = "--" + _OPTION_OF.get(match[1], match[1]).replace("_", "-")
    given = any(a == option or a.startswith(option + "=") for a in argv)
    return f"{option}: {line}" if given else line


def _call(args: argparse.Namespace) -> int:
    if not getattr(args, "json", False):
        return args.func(args)
    if sys.stdout is None:
        # a process started with its standard output closed (>&-): the record went nowhere,
        # exit status 0
        raise ValueError("--json: the standard output is closed; give --output PATH instead")
    with contextlib.redirect_stdout(sys.stderr):
        code = args.func(args)
    # a run that ended with errors it counted (olboost simulate's refused requests: exit
    # status 1) has its record too, which says what they were
    if getattr(args, "record", None) is not None:
        try:
            print(record_json(args.record), end="", flush=True)
        except BrokenPipeError:
            raise
        except OSError as err:
            if err.filename is not None or err.errno is None:
                raise
            # "No space left on device" (> /dev/full) said not of what
            raise type(err)(err.errno, f"{err.strerror} (the record, --json)", "stdout") from None
    return code


@contextlib.contextmanager
def _lenient_stdout() -> Iterator[None]:
    """Text the standard output cannot encode (``PYTHONIOENCODING=ascii``, a data file named
    ``données.arff``) written with backslash escapes, as Python writes it to stderr: the report
    of a run whose outputs were written failed with exit status 2, naming neither stdout nor
    the cause."""
    stream = sys.stdout
    errors = getattr(stream, "errors", None)
    if errors != "strict" or not hasattr(stream, "reconfigure"):
        yield
        return
    stream.reconfigure(errors="backslashreplace")
    try:
        yield
    finally:
        stream.reconfigure(errors=errors)


@contextlib.contextmanager
def _one_line_warnings() -> Iterator[None]:
    """Warnings said as errors are, in one line on stderr (``olboost: warning: ...``), not
    with the file and source line Python shows by default."""
    # the format, not the display: warnings recorded (pytest.warns, catch_warnings) stay so
    formatted = warnings.formatwarning

    def one_line(message: Any, category: type[Warning], *_: Any, **__: Any) -> str:
        # a message olboost words for Python's own display starts "olboost: " already
        text = " ".join(str(message).split()).removeprefix("olboost: ")
        return f"olboost: warning: {text} ({category.__name__})\n"

    warnings.formatwarning = one_line
    try:
        yield
    finally:
        warnings.formatwarning = formatted
