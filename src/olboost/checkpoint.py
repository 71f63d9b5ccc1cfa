"""Saving and loading models, checkpoints of long runs, and caches of finished cells.

:func:`save` writes a model to a file and :func:`load` reads it back::

    olboost.save(model, "model.olb")
    model = olboost.load("model.olb")

**The file.** An olboost file is a magic header (:data:`MAGIC`), a JSON header (the format
version :data:`FORMAT_VERSION`, the olboost version that wrote it, the kind of content, the
payload's length), the payload (a pickle) and a SHA-256 digest of everything before it. A file
that is not olboost's, or is truncated or corrupt, or of another format version, is refused with a
``ValueError`` that says which (naming both versions for a format mismatch) before anything is
unpickled. A file written by another olboost version of the same format loads with a
``UserWarning`` naming both versions: its pickle may describe classes that have changed since.

**Canonical bytes.** The payload is a pickle in which NumPy arrays, scalars and dtypes are
written by value (:func:`dumps`). The standard pickle of an array also records which arrays share
one dtype *object*, and an array read back from a pickle carries a copy of its dtype; so a model
that was checkpointed and resumed would pickle to different bytes from the same model trained
without a break, although every number is the same; and it writes a set's members in the order
of their hashes (a string's changes with ``PYTHONHASHSEED``) and of their history. Here a set of
two or more members is written as a persistent id holding its members in the order of their own
bytes, which :func:`loads` turns back into the set: the bytes depend on the values only, and two
equal models give byte-identical files. (Models on a ``RiverCommittee`` are the exception:
River's Gaussian estimators each hold an unseeded random generator, used only to sample, which
olboost never does.)

**Atomic writes.** Every file is written to a temporary file in the same directory, flushed,
``fsync``-ed and renamed over the target, and the directory is ``fsync``-ed
(:func:`atomic_write`): a crash or a ``SIGKILL`` at any moment leaves either the old file or the
new one, never a mixture. A temporary file left by a killed process is removed by the next
:func:`remove_stale_temporaries` (``olboost run --checkpoint`` calls it).

**Runs and cells.** ``olboost run --checkpoint`` writes a *run* file (:func:`save_run`): the
model together with the evaluation's progress, so that ``--resume`` continues bit for bit;
:func:`load` on it returns the model. ``olboost reproduce`` keeps each finished cell of a table
in a :class:`CellCache`, one small JSON file per cell, so that a rerun skips the cells done.

.. warning::
   Loading a file unpickles it, and unpickling can run arbitrary code. Load only files you
   trust, as with any pickle: the digest detects corruption, not tampering.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import platform
import struct
import sys
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from olboost._atomic import atomic_write, remove_stale_temporaries, remove_stale_temporaries_in
from olboost._version import __version__, source_digest

__all__ = [
    "FORMAT_VERSION",
    "MAGIC",
    "CellCache",
    "atomic_write",
    "dumps",
    "load",
    "load_run",
    "loads",
    "remove_stale_temporaries",
    "save",
    "save_run",
]

#: The first bytes of every olboost file (as PNG's: a non-ASCII byte, the name, and the line
#: endings that a text-mode copy would change).
MAGIC = b"\x89OLBOOST\r\n\x1a\n"

#: Version of the file layout and of the payload's encoding. A reader refuses other versions.
FORMAT_VERSION = 1

#: Pickle protocol of the payload (part of the format).
PICKLE_PROTOCOL = 5

#: What a file holds: a model (:func:`save`) or a run checkpoint (:func:`save_run`).
KINDS = ("model", "run")

_LENGTH = struct.Struct(">I")  # length of the JSON header
_DIGEST_BYTES = hashlib.sha256().digest_size

#: Opcode of a pickle's protocol marker: how a bare pickle is recognised.
_PICKLE_START = b"\x80"


# --------------------------------------------------------------------------- canonical pickle


def _array(data: bytes, dtype: str, shape: tuple[int, ...], order: str) -> np.ndarray:
    """An array rebuilt from :func:`dumps`: a writable array owning its data, in the layout it
    had (C or Fortran order)."""
    flat = np.frombuffer(data, dtype=np.dtype(dtype))
    return flat.reshape(shape, order=order).copy(order=order)


def _object_array(items: list[Any], shape: tuple[int, ...], order: str) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape, order=order).copy(order=order)


def _scalar(dtype: str, data: bytes) -> np.generic:
    return np.frombuffer(data, dtype=np.dtype(dtype))[0]


def _simple(dtype: np.dtype) -> bool:
    """A dtype fully described by its ``str`` (no fields, no sub-array, not object)."""
    return dtype.fields is None and dtype.subdtype is None and dtype.kind not in "OV"


#: First item of the persistent id a set is written as (see :class:`_Pickler`).
_SET_ID = "olboost.checkpoint.set"


class _Pickler(pickle.Pickler):
    """Writes NumPy arrays, scalars and dtypes by value, and sets of two or more members as a
    persistent id holding them in the order of their bytes (see the module docstring)."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=PICKLE_PROTOCOL)
        # one id per set object, so that a set held in two places is one set when read back;
        # the set is kept too, so that its id() is not reused by another object meanwhile
        self._set_ids: dict[int, tuple[tuple[str, bool, list[Any]], Any]] = {}

    def persistent_id(self, obj: Any) -> Any:
        # the C pickler writes a set or frozenset itself, never asking reducer_override
        kind = type(obj)
        if (kind is not set and kind is not frozenset) or len(obj) < 2:
            return None
        known = self._set_ids.get(id(obj))
        if known is None:
            known = (_SET_ID, kind is frozenset, sorted(obj, key=dumps)), obj
            self._set_ids[id(obj)] = known
        return known[0]

    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        if kind is np.ndarray:
            order = "F" if obj.flags.f_contiguous and not obj.flags.c_contiguous else "C"
            if _simple(obj.dtype):
                spec = sys.intern(obj.dtype.str)
                return _array, (obj.tobytes(order=order), spec, obj.shape, order)
            if obj.dtype.kind == "O":
                return _object_array, (list(obj.ravel(order=order)), obj.shape, order)
        elif isinstance(obj, np.generic) and _simple(obj.dtype):
            return _scalar, (sys.intern(obj.dtype.str), obj.tobytes())
        elif isinstance(obj, np.dtype) and _simple(obj):
            return np.dtype, (sys.intern(obj.str),)
        return NotImplemented


def dumps(obj: Any) -> bytes:
    """The pickle :func:`save` writes: NumPy arrays, scalars and dtypes by value and sets'
    members in a canonical order, so that equal objects give equal bytes whatever their history
    and the process's hash seed (see the module docstring).

    :func:`loads` reads it (with olboost importable), as does ``pickle.loads`` when ``obj``
    holds no set of two or more members.

    Examples
    --------
    >>> import pickle
    >>> import numpy as np
    >>> from olboost.checkpoint import dumps
    >>> a = np.arange(3.0)
    >>> b = pickle.loads(pickle.dumps(a))  # b's dtype is a copy, not np.float64's own object
    >>> pickle.dumps([a, a + 1]) == pickle.dumps([b, a + 1])
    False
    >>> dumps([a, a + 1]) == dumps([b, a + 1])
    True
    """
    buffer = io.BytesIO()
    _Pickler(buffer).dump(obj)
    return buffer.getvalue()


class _Unpickler(pickle.Unpickler):
    """Reads :func:`dumps`'s pickles: a set's persistent id becomes the set again."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file)
        self._sets: dict[int, tuple[Any, Any]] = {}

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and len(pid) == 3 and pid[0] == _SET_ID):
            raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")
        # the same id object (memoized) stands for the same set
        known = self._sets.get(id(pid))
        if known is None:
            known = (frozenset if pid[1] else set)(pid[2]), pid
            self._sets[id(pid)] = known
        return known[0]


def loads(data: bytes) -> Any:
    """The object of a :func:`dumps` pickle (``pickle.loads`` reads those that hold no set of
    two or more members).

    Examples
    --------
    >>> from olboost.checkpoint import dumps, loads
    >>> a, b = {8, 16}, {16, 8}  # equal sets whose members iterate in different orders
    >>> list(a) == list(b), dumps(a) == dumps(b)
    (False, True)
    >>> loads(dumps([a, a])) == [a, a]
    True
    """
    return _Unpickler(io.BytesIO(data)).load()


# --------------------------------------------------------------------------- the file format


def _encode(obj: Any, kind: str, what: str, run: Any = None) -> bytes:
    try:
        payload = dumps(obj)
    except (pickle.PicklingError, TypeError, AttributeError) as err:
        raise TypeError(f"cannot save {what}: it does not pickle ({err})") from None
    header = {
        "format": FORMAT_VERSION,
        "olboost": __version__,
        "kind": kind,
        "class": f"{type(obj).__module__}.{type(obj).__qualname__}",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pickle_protocol": PICKLE_PROTOCOL,
        "payload_bytes": len(payload),
    }
    if run is not None:
        # a run's options, readable without unpickling the model (read_run_options)
        header["run"] = run
    head = json.dumps(header, sort_keys=True).encode()
    body = MAGIC + _LENGTH.pack(len(head)) + head + payload
    return body + hashlib.sha256(body).digest()


def _check_path(path: Any, model: Any = None) -> None:
    """A ``TypeError`` naming ``path`` unless it is a path (pathlib said only "expected str,
    bytes or os.PathLike object, not AdaBoostOLM"), with a hint when ``model`` (what
    :func:`save` got first) is the path instead."""
    if not isinstance(path, str | os.PathLike):
        swapped = isinstance(model, str | os.PathLike)
        raise TypeError(
            f"path must be a path (str or os.PathLike), got {type(path).__name__}"
            + ("; the arguments are save(model, path)" if swapped else "")
        )


def _decode(
    path: str | os.PathLike[str], before: Callable[[dict[str, Any]], None] | None = None
) -> tuple[dict[str, Any], Any]:
    """The header and the unpickled payload of an olboost file; ``ValueError`` for anything
    but an intact file of this format. ``before`` is called with the header before the payload
    is unpickled (and may refuse the file)."""
    header, payload = _verified(path)
    if before is not None:
        before(header)
    writer, where = header.get("olboost", "unknown"), Path(path)
    try:
        obj = loads(payload)
    except Exception as err:  # a pickle of classes this olboost does not have, or lacks
        # NumPy 1 cannot read NumPy 2's pickles (No module named 'numpy._core'): say which
        numpy = header.get("numpy")
        numpy = f", NumPy {numpy} read by NumPy {np.__version__}" if numpy != np.__version__ else ""
        raise ValueError(
            f"{where}: cannot rebuild the saved {header.get('class', 'object')} (written by "
            f"olboost {writer}, read by olboost {__version__}{numpy}): "
            f"{type(err).__name__}: {err}"
        ) from None
    if header["kind"] == "run" and not (isinstance(obj, dict) and "model" in obj):
        raise ValueError(f"{where}: not a run checkpoint (its content holds no model)")
    return header, obj


def _verified(path: str | os.PathLike[str], warn: bool = True) -> tuple[dict[str, Any], bytes]:
    """The header and the payload (still pickled) of an intact olboost file of this format;
    ``ValueError`` for anything else. ``warn``: that another olboost version wrote it (whose
    classes the payload, once unpickled, may describe as they were)."""
    _check_path(path)
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(21, "is a directory, not an olboost file", str(path))
    data = path.read_bytes()
    where = f"{path}"
    if not data.startswith(MAGIC):
        if MAGIC.startswith(data):
            raise ValueError(f"{where}: truncated olboost file ({len(data)} bytes, no header)")
        if data.startswith(_PICKLE_START):
            raise ValueError(
                f"{where}: a bare pickle, not an olboost file: olboost.load reads only files "
                "written by olboost.save (load a pickle you trust with pickle.load)"
            )
        raise ValueError(f"{where}: not an olboost file (it does not start with olboost's header)")
    start = len(MAGIC) + _LENGTH.size
    if len(data) < start:
        raise ValueError(f"{where}: truncated olboost file ({len(data)} bytes)")
    (length,) = _LENGTH.unpack_from(data, len(MAGIC))
    if len(data) < start + length:
        raise ValueError(
            f"{where}: truncated olboost file ({len(data)} bytes, the header alone needs "
            f"{start + length})"
        )
    # the digest first: a header is trusted (a format version, a length) only in an intact file
    intact = len(data) >= start + length + _DIGEST_BYTES and (
        hashlib.sha256(data[:-_DIGEST_BYTES]).digest() == data[-_DIGEST_BYTES:]
    )
    try:
        header = json.loads(data[start : start + length])
        version = header["format"]
    except (ValueError, KeyError, TypeError, RecursionError):
        raise ValueError(f"{where}: corrupt olboost file (unreadable header)") from None
    writer = header.get("olboost", "unknown") if isinstance(header, dict) else "unknown"
    if type(version) is not int or version != FORMAT_VERSION:
        if not intact:
            raise ValueError(
                f"{where}: corrupt olboost file (SHA-256 digest mismatch; its header, which may "
                f"be the corrupt part, gives format {version!r}, written by olboost {writer})"
            )
        raise ValueError(
            f"{where}: olboost file format {version!r} (written by olboost {writer}) cannot be "
            f"read by olboost {__version__}, which reads format {FORMAT_VERSION}; load it with "
            f"olboost {writer}"
        )
    size = header.get("payload_bytes")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError(f"{where}: corrupt olboost file (unreadable header)")
    expected = start + length + size + _DIGEST_BYTES
    if len(data) < expected:
        # (a cut file, most likely; its digest cannot tell it from a header whose length is
        # corrupt)
        raise ValueError(
            f"{where}: truncated olboost file ({len(data)} of {expected} bytes"
            f"{'' if intact else ', or a corrupt header'})"
        )
    if len(data) > expected:
        raise ValueError(
            f"{where}: corrupt olboost file ({len(data) - expected} bytes after its end)"
        )
    if not intact:
        raise ValueError(f"{where}: corrupt olboost file (SHA-256 digest mismatch)")
    body = data[:-_DIGEST_BYTES]
    if header.get("kind") not in KINDS:
        raise ValueError(f"{where}: corrupt olboost file (unknown kind {header.get('kind')!r})")
    if warn and writer != __version__:
        warnings.warn(
            f"{where} was written by olboost {writer}; this is olboost {__version__} (same "
            f"file format {FORMAT_VERSION}): its classes may have changed since",
            UserWarning,
            stacklevel=4,
        )
    return header, body[start + length :]


def save(model: Any, path: str | os.PathLike[str]) -> None:
    """Save ``model`` to the file ``path``, atomically.

    The file holds the format version, the olboost version and a digest of its content besides
    the model (see :mod:`olboost.checkpoint`). Equal models give byte-identical files.

    Parameters
    ----------
    model
        Any olboost estimator, fitted or not (any object that pickles).
    path
        The file to write (replaced if it exists; its directory must exist).

    Raises
    ------
    TypeError
        If ``model`` does not pickle; nothing is written.
    OSError
        If the file cannot be written (``IsADirectoryError`` for a directory); ``path`` is left
        as it was.

    Warnings
    --------
    :func:`load` unpickles the file: load only files you trust.

    Examples
    --------
    >>> import os, pickle, tempfile
    >>> import olboost
    >>> from olboost import AdaOLMR, VFDTCommittee
    >>> from olboost.datasets import load as load_data
    >>> data = load_data("emotions").train
    >>> model = AdaOLMR(VFDTCommittee(n_features=5), learners=4, seed=1)
    >>> _ = model.score_then_learn(data.X[:100], data.Y[:100])
    >>> path = os.path.join(tempfile.mkdtemp(), "model.olb")
    >>> olboost.save(model, path)
    >>> again = olboost.load(path)
    >>> bool((again.score(data.X[100:]) == model.score(data.X[100:])).all())
    True
    """
    _check_path(path, model)
    atomic_write(path, _encode(model, "model", f"a {type(model).__name__}"))


def load(path: str | os.PathLike[str]) -> Any:
    """Load the model saved in ``path`` by :func:`save` (or the model of a run checkpoint).

    Parameters
    ----------
    path
        A file written by :func:`save`, or by ``olboost run --checkpoint``.

    Returns
    -------
    The model, as it was saved.

    Raises
    ------
    ValueError
        If the file is not an olboost file (a bare pickle, say), is truncated or corrupt (its
        digest does not match), or has another format version (the message names both format
        versions and the olboost version that wrote it). Nothing is unpickled then.
    OSError
        If the file cannot be read (``IsADirectoryError`` for a directory).

    Warns
    -----
    UserWarning
        If another olboost version wrote the file (same format).

    Warnings
    --------
    Unpickling can run arbitrary code: load only files you trust.

    Examples
    --------
    >>> import os, tempfile
    >>> import olboost
    >>> from olboost import AdaOLMR
    >>> path = os.path.join(tempfile.mkdtemp(), "model.olb")
    >>> olboost.save(AdaOLMR(learners=3, seed=7), path)
    >>> olboost.load(path)
    AdaOLMR(committee=None, learners=3, seed=7, ...)
    >>> with open(path, "r+b") as f:  # one byte changed
    ...     _ = f.seek(-40, 2)
    ...     _ = f.write(b"?")
    >>> olboost.load(path)
    Traceback (most recent call last):
    ...
    ValueError: ...model.olb: corrupt olboost file (SHA-256 digest mismatch)
    """
    header, obj = _decode(path)
    return obj["model"] if header["kind"] == "run" else obj


def save_run(state: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
    """Write a run checkpoint atomically: ``state`` holds ``"model"`` (what :func:`load`
    returns), and whatever else continues the run (``olboost run``: the evaluation's progress
    and the options of the run)."""
    if "model" not in state:
        raise ValueError("a run checkpoint holds a 'model'")
    _check_path(path)
    run = state.get("run")
    try:
        json.dumps(run, sort_keys=True)  # as the header is written
    except (TypeError, ValueError):
        run = None  # kept in the payload only
    atomic_write(path, _encode(dict(state), "run", "the run checkpoint", run))


def read_run_options(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The ``"run"`` entry of the run checkpoint at ``path`` (``olboost run``: its options),
    read from the header of the intact file without unpickling the model, or ``None`` if the
    header holds none (a checkpoint written before the header held them, or a ``"run"`` that
    JSON cannot hold). ``ValueError`` for a bad file or a model file, as :func:`load_run`."""
    header, _ = _verified(path, warn=False)
    return _run_options(path, header)


def _run_options(path: str | os.PathLike[str], header: dict[str, Any]) -> dict[str, Any] | None:
    """The ``"run"`` entry of the header of the run checkpoint ``path`` (``None``: none);
    ``ValueError`` for a file of another kind."""
    if header["kind"] != "run":
        raise ValueError(f"{path}: an olboost {header['kind']} file, not a run checkpoint")
    run = header.get("run")
    return run if isinstance(run, dict) else None


def file_kind(path: str | os.PathLike[str]) -> str | None:
    """What the olboost file at ``path`` says it holds, ``"model"`` or ``"run"``, from its
    header alone (nothing unpickled, the digest unchecked); ``None`` for anything else: a
    file of another kind, unreadable or no file at all."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(MAGIC) + _LENGTH.size)
            if len(head) < len(MAGIC) + _LENGTH.size or not head.startswith(MAGIC):
                return None
            (length,) = _LENGTH.unpack_from(head, len(MAGIC))
            header = json.loads(f.read(min(length, 1 << 20)))
    except (OSError, ValueError, RecursionError):
        return None
    kind = header.get("kind") if isinstance(header, dict) else None
    return kind if kind in KINDS else None


def load_run(
    path: str | os.PathLike[str],
    check_options: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """The state of a run checkpoint written by :func:`save_run` (``ValueError`` for a model
    file or a bad file, as :func:`load`). ``check_options`` is called with the options its
    header holds (:func:`read_run_options`), if it holds any, before the model is unpickled: a
    refusal there costs no unpickling (and no second read of the file)."""

    def before(header: dict[str, Any]) -> None:
        options = _run_options(path, header)
        if check_options is not None and options is not None:
            check_options(options)

    return _decode(path, before)[1]


# --------------------------------------------------------------------------- cell caches


class CellCache:
    """Finished cells of a long computation (one run of a table, say), one JSON file each in
    ``directory``, so that a rerun skips them.

    A cell is named by its key, a JSON-ready mapping of everything its result depends on (the
    algorithm, the data, the seed, the parameters); its file holds the key, the olboost version,
    the digest of olboost's code (:func:`olboost._version.source_digest`), the result and the
    SHA-256 digest of the result, written atomically when the cell is done. :meth:`run` returns
    the stored result of a cell whose file matches the key, the olboost version and its code,
    and otherwise computes it and stores it. A cell file that cannot be read or is not
    such a record (truncated, not JSON, without one of its fields, or a result that does not
    match its digest: damaged, or edited by hand) counts as absent: the cell is computed again
    and its file rewritten. (Files written before the digest existed have none, and are
    trusted as before.) Results go through JSON either way (tuples become lists), so a run and a
    rerun give the same numbers to the last bit. A cache of ``None`` stores nothing.

    A change to olboost's code, its version unchanged (a development install), computes every
    cell again. (Files written before the code's digest was stored have none, and are matched
    on the version alone: delete such a directory after changing olboost.)

    Examples
    --------
    >>> import tempfile
    >>> from olboost.checkpoint import CellCache
    >>> cache = CellCache(tempfile.mkdtemp(), "demo")
    >>> cache.run({"seed": 1}, lambda: {"loss": 0.25})
    {'loss': 0.25}
    >>> cache.run({"seed": 1}, lambda: {"loss": 0.5})  # finished before: not run again
    {'loss': 0.25}
    >>> cache.reused, cache.computed
    (1, 1)
    """

    def __init__(self, directory: str | os.PathLike[str] | None, suite: str):
        self.directory = None if directory is None else Path(directory)
        self.suite = suite
        self.reused = 0
        self.computed = 0
        if self.directory is not None:
            if self.directory.exists() and not self.directory.is_dir():
                raise NotADirectoryError(
                    20, "is not a directory (the cache of finished cells)", str(self.directory)
                )
            self.directory.mkdir(parents=True, exist_ok=True)
            remove_stale_temporaries_in(self.directory)  # of cells whose writer was killed

    def _path(self, key: Mapping[str, Any]) -> Path:
        assert self.directory is not None
        digest = hashlib.sha256(_canonical(key).encode()).hexdigest()[:20]
        return self.directory / f"{self.suite}-{digest}.json"

    def get(self, key: Mapping[str, Any]) -> Any:
        """The stored result of the cell ``key``, or ``None`` (none, or a damaged file; a stored
        ``None`` too: :meth:`run` tells them apart)."""
        found, result = self._lookup(key)
        return result if found else None

    def _lookup(self, key: Mapping[str, Any]) -> tuple[bool, Any]:
        """Whether the cell ``key`` has a stored result, and that result."""
        if self.directory is None:
            return False, None
        path = self._path(key)
        try:
            stored = json.loads(path.read_text())
        except FileNotFoundError:
            return False, None
        except (OSError, ValueError):
            return False, None  # unreadable: computed again and rewritten
        if (
            not isinstance(stored, dict)
            or stored.get("format") != FORMAT_VERSION
            or stored.get("olboost") != __version__
            or ("source" in stored and stored["source"] != source_digest())
            or _canonical(stored.get("key")) != _canonical(key)
            # valid JSON cut short of its result (edited, or written by other code) is as
            # damaged as a truncated file, which is computed again
            or "result" not in stored
            # and so is a result changed since it was stored
            or ("digest" in stored and stored["digest"] != _digest(stored["result"]))
        ):
            return False, None
        return True, stored["result"]

    def put(self, key: Mapping[str, Any], result: Any) -> Any:
        """Store the result of the cell ``key``; return it as a rerun will read it."""
        stored = json.loads(json.dumps(result))  # as a rerun reads it: tuples become lists
        record = {
            "format": FORMAT_VERSION, "olboost": __version__, "source": source_digest(),
            "key": key, "result": stored, "digest": _digest(stored),
        }  # fmt: skip
        if self.directory is not None:
            atomic_write(self._path(key), json.dumps(record, indent=1).encode())
        return stored

    def run(self, key: Mapping[str, Any], compute: Callable[[], Any]) -> Any:
        """The result of the cell ``key``: the stored one, or ``compute()`` stored."""
        found, stored = self._lookup(key)
        if found:
            self.reused += 1
            return stored
        self.computed += 1
        return self.put(key, compute())

    def summary(self) -> str | None:
        """A line saying how many cells were reused from where, or ``None`` if none were."""
        if not self.reused:
            return None
        total = self.reused + self.computed
        return (
            f"{self.reused} of {total} cells finished before, read from {self.directory} "
            "(not run again, their times those of the run that computed them; delete it or "
            "pass --no-cells to recompute them)"
        )


def _canonical(key: Any) -> str:
    return json.dumps(key, sort_keys=True, separators=(",", ":"))


def _digest(result: Any) -> str:
    """The SHA-256 digest of a cell's result as JSON (its keys sorted)."""
    return hashlib.sha256(_canonical(result).encode()).hexdigest()
