"""Atomic file writes: a file is replaced whole or not at all, whatever kills its writer, and
the temporary files of killed writers are removed later. Every file of :mod:`olboost.checkpoint`
is written so (its docstring says why); both public functions are documented and re-exported
there.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import hashlib
import os
import re
import socket
import stat
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["atomic_write", "remove_stale_temporaries"]

_TEMPORARY_SUFFIX = ".olboost-tmp"
# The machine tag's part of a temporary name, optional (names written before it have none); its
# "h" keeps it from being read as a process id.
_TAG = r"(?:(h[0-9a-f]{8})\.)?"
# Bytes of a target's name kept in its temporary files' names: the temporary name adds about 30
# characters, and file systems take names of 255 bytes.
_STEM_BYTES = 160


def short_name(name: str) -> str:
    """What names the target ``name`` in the names of its temporary files and of a run's lock
    file: ``name`` itself, or for a long one its first characters and a digest of the whole."""
    encoded = os.fsencode(name)
    if len(encoded) <= _STEM_BYTES:
        return name
    head = ""
    for char in name:
        if len(os.fsencode(head + char)) > _STEM_BYTES - 17:
            break
        head += char
    return f"{head}~{hashlib.sha256(encoded).hexdigest()[:16]}"


def temporary_prefix(path: Path) -> str:
    """The start of the name of this process's temporary files for the target ``path``: its
    process id and :func:`machine_tag`."""
    return f".{short_name(path.name)}.{os.getpid()}.{machine_tag()}."


@functools.cache
def machine_tag() -> str:
    """``h`` and 8 hex digits that tell this machine and process-id space from the others that
    may share a directory (another host on a network disk, another container on a volume): a
    digest of the boot id and the process-id namespace where Linux shows them, else of the host
    name. A process id means something only where its tag is this process's own: elsewhere
    another process of that id may be writing, and its temporary file is left alone."""
    parts = []
    for read in (
        lambda: Path("/proc/sys/kernel/random/boot_id").read_text().strip(),
        lambda: str(os.stat("/proc/self/ns/pid").st_ino),
    ):
        with contextlib.suppress(OSError):
            parts.append(read())
    if not parts:
        parts.append(socket.gethostname())
    return "h" + hashlib.sha256("\0".join(parts).encode()).hexdigest()[:8]


def _umask() -> int:
    """The process's umask now: from ``/proc/self/status`` where Linux shows it, else by setting
    it and setting it back, once per process (setting it would race with other threads' file
    creations)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return _umask_once()


@functools.cache
def _umask_once() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def _mode(path: Path) -> int:
    """The permission bits of a file written over ``path``: those of the file it replaces, or
    what ``open()`` would give a new one (``0o664`` less the umask); never writable by others."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:  # none yet (or unreadable metadata): a new file's
        mode = 0o664 & ~_umask()
    return mode & ~stat.S_IWOTH & 0o777


def _fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (where the platform can open a directory)."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def followed(path: str | os.PathLike[str]) -> Path:
    """``path``, or where it is a symbolic link, the file it points to (which need not exist):
    a rename over the link would replace the link, and leave its target as it was."""
    path = Path(path)
    try:
        link = path.is_symlink()
    except OSError:  # a name too long: the write names the problem
        return path
    return Path(os.path.realpath(path)) if link else path


def _target(path: str | os.PathLike[str]) -> Path:
    path = followed(path)
    if path.is_dir():
        raise IsADirectoryError(21, "is a directory; give the path of a file inside it", str(path))
    return path


def special_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` (a symbolic link followed) is neither a regular file nor a directory,
    nor missing: a device such as ``/dev/null``, a named pipe, a shell's ``>(...)``."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def atomic_write(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file in the same directory, flushed and
    ``fsync``-ed, renamed over ``path`` (over the file it points to, if it is a symbolic
    link), then the directory ``fsync``-ed. Readers see the old file or the new one, never a
    part; a crash leaves at most a temporary file named ``.<name>.<pid>.<tag>.*.olboost-tmp``
    beside it (see :func:`remove_stale_temporaries`). A device or a pipe
    (:func:`special_file`: ``/dev/null``, a shell's ``>(...)``) is written into, as a shell's
    redirection does, not atomically: a file renamed over it would replace the device itself
    (``/dev/null`` for every process, when run as root).

    Raises ``IsADirectoryError`` if ``path`` is a directory, and any ``OSError`` of creating or
    writing the file (a missing directory: ``FileNotFoundError``); ``path`` is unchanged then.
    """
    if special_file(path):
        try:
            with open(path, "wb") as f:
                f.write(data)
        except OSError as err:
            _raise_named(err, path)
            raise
        return
    path = _target(path)
    directory = path.parent
    if not directory.is_dir():  # named here: mkstemp's error would name its temporary file
        raise FileNotFoundError(2, "no such directory to write in", str(path))
    try:
        fd, temporary = tempfile.mkstemp(
            prefix=temporary_prefix(path), suffix=_TEMPORARY_SUFFIX, dir=directory
        )
    except OSError as err:  # named here: its own message would name the temporary file
        raise type(err)(
            err.errno, f"{err.strerror} (creating a temporary file beside it)", str(path)
        ) from None
    try:
        with os.fdopen(fd, "wb") as f:
            if hasattr(os, "fchmod"):
                # mkstemp's 0600, widened to what open() would give, but never writable by
                # every user whatever the umask: olboost's files are models and runs, code when
                # loaded (unpickled), and a store refuses such a model. A file replaced keeps
                # its own mode (a model kept 0600 stays so), less the write bit for others.
                os.fchmod(f.fileno(), _mode(path))
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(err, OSError):
            _raise_named(err, path)
        raise
    _fsync_directory(directory)


def _raise_named(err: OSError, path: str | os.PathLike[str]) -> None:
    """Raise ``err`` of writing ``path`` again, naming it, if it names no file (a full disk's
    ENOSPC, or EFBIG, EIO, of a write or an fsync, /dev/full's too, named none, and the command
    said "No space left on device" and not of what); else return, for the caller to raise it as
    it is."""
    if err.filename is None and err.errno is not None:
        raise type(err)(err.errno, f"{err.strerror} (writing it)", str(path)) from None


def remove_stale_temporaries(path: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files that :func:`atomic_write` left beside ``path`` when its process
    was killed (those of processes of this machine and process-id space, :func:`machine_tag`, no
    longer running); return them."""
    path = followed(path)
    stem = short_name(path.name)
    # exactly atomic_write's names for this target: ".<stem>.<pid>.<tag>.<mkstemp's
    # letters>.suffix", or without the tag as olboost wrote them before it (a name with glob
    # characters is no pattern; "run.olb" is no prefix of "run.olb.1.olb")
    form = re.compile(
        rf"\.{re.escape(stem)}\.(\d+)\.{_TAG}[A-Za-z0-9_]+{re.escape(_TEMPORARY_SUFFIX)}",
        re.DOTALL,
    )
    return _remove_stale(
        path.parent.glob(f"{glob.escape('.' + stem)}.*{_TEMPORARY_SUFFIX}"), form, mine=True
    )


def remove_stale_temporaries_in(directory: str | os.PathLike[str]) -> list[Path]:
    """:func:`remove_stale_temporaries` for every target in ``directory`` (a cache of cells, a
    sweep's results: many files, each written by :func:`atomic_write`), but this process's
    own, which another of its threads may be writing; return them."""
    form = re.compile(rf"\..+\.(\d+)\.{_TAG}[A-Za-z0-9_]+{re.escape(_TEMPORARY_SUFFIX)}", re.DOTALL)
    return _remove_stale(Path(directory).glob(f".*{_TEMPORARY_SUFFIX}"), form, mine=False)


def _remove_stale(candidates: Iterable[Path], form: re.Pattern[str], mine: bool) -> list[Path]:
    """Remove those of ``candidates`` whose name ``form`` matches with the process id (group
    1) of a process no longer running, or (``mine``) of this one, where the tag (group 2, if
    any) is this process's :func:`machine_tag`."""
    removed = []
    for candidate in candidates:
        match = form.fullmatch(candidate.name)
        if match is None or match.group(2) not in (None, machine_tag()):
            continue
        pid = int(match.group(1))
        if (pid != os.getpid() or not mine) and _running(pid):
            continue
        with contextlib.suppress(OSError):
            candidate.unlink()
            removed.append(candidate)
    return removed


def _running(pid: int) -> bool:
    if sys.platform == "win32":
        # os.kill(pid, 0) is no probe there: signal 0 is CTRL_C_EVENT, sent to every process of
        # the console, this one included. A killed writer's temporary file stays.
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True
