"""A lock file held by one process at a time, for the files one run or one service owns.

Two ``olboost run`` on one ``--checkpoint``, or two services on one store, each overwrote what
the other saved. Between processes the lock is a POSIX record lock (``lockf``) on the lock file,
which holds the owner's process id: it belongs to the process, is not inherited by its forked
children, and is free at once when a killed owner's process ends. Within one process, where such
locks do not exclude each other, a set of the files locked. Where the system has no ``fcntl``
(Windows), only the latter.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Callable
from typing import ClassVar

__all__ = ["ProcessLock"]

#: The errors of ``open`` with ``O_NOFOLLOW`` on a symbolic link, by system.
_NOFOLLOW_ERRORS = {errno.ELOOP, errno.EMLINK, getattr(errno, "EFTYPE", errno.ELOOP)}


class ProcessLock:
    """The lock of ``lock_file`` for this process, held until :meth:`release` or the end of
    the process (a kill included).

    Parameters
    ----------
    lock_file
        The lock file, created if absent.
    in_use
        The message of the ``ValueError`` raised when another holds the lock, from the
        holder's process id (``"unknown"`` if it wrote none).
    remove
        Remove the lock file on :meth:`release` (a file beside another one's, which a kept lock
        file would litter); a killed owner leaves it, free, for the next.

    Raises
    ------
    ValueError
        If another process, or another holder in this one, holds the lock.
    """

    _held: ClassVar[set[str]] = set()
    _guard = threading.Lock()

    def __init__(
        self, lock_file: str | os.PathLike[str], in_use: Callable[[str], str], remove: bool = False
    ) -> None:
        self.path = os.fspath(lock_file)
        self.key = os.path.realpath(self.path)
        self.remove = remove
        self.fd: int | None = None
        with ProcessLock._guard:
            if self.key in ProcessLock._held:
                raise ValueError(in_use(str(os.getpid())))
            try:
                import fcntl
            except ImportError:  # pragma: no cover - not on Linux or macOS
                fcntl = None
            if fcntl is not None:
                self.fd = self._take(fcntl, in_use)
            ProcessLock._held.add(self.key)

    def _take(self, fcntl, in_use: Callable[[str], str]) -> int:  # noqa: ANN001
        # never through a link: the file it names (planted there by whoever can write the
        # directory) was truncated and given our process id
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        while True:
            try:
                fd = os.open(self.path, flags, 0o644)
            except OSError as err:
                # O_NOFOLLOW's refusal: ELOOP (Linux, macOS), EMLINK (FreeBSD), EFTYPE (NetBSD);
                # ELOOP also for a loop of links among the parent directories
                if not (err.errno in _NOFOLLOW_ERRORS and os.path.islink(self.path)):
                    raise
                raise ValueError(
                    f"{self.path}: a symbolic link where the lock file goes (a lock is never "
                    "written through one); remove it"
                ) from None
            st = os.fstat(fd)
            regular = stat.S_ISREG(st.st_mode)
            # a hard link too: its other name's content would be truncated to our process id
            if not regular or st.st_nlink > 1:
                os.close(fd)
                what = "a hard link" if regular else "not a regular file"
                raise ValueError(f"{self.path}: {what}, where the lock file goes; remove it")
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
                os.close(fd)
                raise ValueError(in_use(holder or "unknown")) from None
            # a holder that removes its file on release may have done so between our open and
            # our lock: then we hold a lock on a file no one else will open; take the new one
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                try:
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
                except OSError as err:  # a full disk said "No space left on device", of no file
                    os.close(fd)
                    raise OSError(err.errno, err.strerror, str(self.path)) from None
                return fd
            os.close(fd)

    def release(self) -> None:
        """Release the lock (again: nothing)."""
        with ProcessLock._guard:
            if self.key not in ProcessLock._held:
                return
            ProcessLock._held.discard(self.key)
            if self.fd is not None:
                if self.remove:
                    # while still holding it, so that no one locks the file being removed
                    try:
                        os.remove(self.path)
                    except FileNotFoundError:
                        pass
                os.close(self.fd)
                self.fd = None
