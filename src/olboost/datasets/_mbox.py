"""The archives of :mod:`olboost.datasets.enron`: an xz-compressed tar holding one mbox per folder,
``<user>/<folder>.mbox``, read into its members and written from messages, and an mbox split
into its messages."""

from __future__ import annotations

import io
import lzma
import os
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path

_XZ_MAGIC = b"\xfd7zXZ\x00"


def _split_mbox(data: bytes) -> tuple[bytes, list[bytes]]:
    """Split an mbox at its ``From `` lines: (text before the first one, the messages)."""
    data = data.replace(b"\r\n", b"\n")
    pieces = (b"\n" + data).split(b"\nFrom ")
    messages = []
    for piece in pieces[1:]:
        eol = piece.find(b"\n")
        messages.append(piece[eol + 1 :] if eol >= 0 else b"")
    return pieces[0], messages


def _read_archive(path: Path, user: str) -> tuple[list[tuple[str, str, bytes]], list[str]]:
    """The mbox members of an archive, in tar order: ``(member name, folder, mbox bytes)``, and
    notes on the members that were ignored."""
    if not path.is_file():
        raise FileNotFoundError(2, "No such file", str(path))
    raw = path.read_bytes()
    if not raw.startswith(_XZ_MAGIC):
        raise ValueError(
            f"{path}: not an xz file (its content does not start with xz's magic bytes "
            "fd 37 7a 58 5a 00); expected a tar archive compressed with xz"
        )
    try:
        data = lzma.decompress(raw, format=lzma.FORMAT_XZ)
    except (lzma.LZMAError, EOFError) as exc:
        raise ValueError(f"{path}: truncated or corrupt xz data ({exc})") from exc
    members: list[tuple[str, str, bytes]] = []
    ignored: list[tuple[str, str]] = []
    layout = f"not '{user}/<folder>.mbox'"
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            for info in tar:
                if info.isdir():
                    continue
                # tar -C parent -c ./user writes ./user/<folder>.mbox
                name = info.name.removeprefix("./")
                top, _, rest = name.partition("/")
                if top != user or not rest.endswith(".mbox") or "/" in rest:
                    ignored.append((info.name, layout))
                    continue
                if rest == ".mbox":
                    ignored.append((info.name, "an mbox without a folder name"))
                    continue
                if not (info.isfile() or info.islnk() or info.issym()):
                    ignored.append((info.name, "not a regular file"))
                    continue
                try:
                    # a hard link (GNU tar's second copy of a file) or a symlink reads as the
                    # member it names
                    handle = tar.extractfile(info)
                except KeyError:
                    handle = None
                except RecursionError:  # tarfile follows links by recursion, a cycle for ever
                    ignored.append((info.name, f"a link to {info.linkname!r}, in a cycle"))
                    continue
                if handle is None:
                    ignored.append((info.name, f"a link to {info.linkname!r}, not in the archive"))
                    continue
                members.append((info.name, rest[: -len(".mbox")], handle.read()))
            # tarfile ends its iteration, without an error, at a header block that is missing
            # (the data stop at a member boundary) or unreadable; only a block of zeros, the
            # end-of-archive marker, says the archive is complete
            end = data[tar.offset : tar.offset + tarfile.BLOCKSIZE]
            if end != tarfile.NUL * tarfile.BLOCKSIZE:
                what = "ends" if not end else "has no valid header"
                raise ValueError(
                    f"{path}: truncated or corrupt tar archive (it {what} at byte "
                    f"{tar.offset} after {len(members) + len(ignored)} archive members, where "
                    "the next member or the end-of-archive marker should be)"
                )
    except tarfile.TarError as exc:
        raise ValueError(f"{path}: the xz data is not a valid tar archive ({exc})") from exc
    if not members:
        listed = ", ".join(name for name, _ in ignored[:5]) + (", ..." if len(ignored) > 5 else "")
        found = f"its files: {listed}" if ignored else "the archive holds no file"
        raise ValueError(f"{path}: no '{user}/<folder>.mbox' member ({found})")
    notes = [f"ignored member {name!r}: {reason}" for name, reason in ignored]
    return members, notes


def write_foldering_archive(
    path: str | os.PathLike[str], user: str, folders: Mapping[str, Sequence[str | bytes]]
) -> Path:
    """Write an archive of the layout :func:`load_enron_foldering` reads.

    Each message is written after a ``From MAILER-DAEMON`` line, with its body lines that start
    with ``From `` escaped as ``>From ``, as Python's :mod:`mailbox` does.

    Parameters
    ----------
    path : str or path-like
        The file to write (``<user>.mbox.tar.xz`` for the loader to find it).
    user : str
        The top directory inside the tar.
    folders : mapping of str to sequence of str or bytes
        Folder name -> raw messages (header fields, an empty line, the body); ``str`` is written
        as UTF-8. Folders are written in the mapping's order.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:") as tar:
        for folder, messages in folders.items():
            mbox = bytearray()
            for message in messages:
                raw = message.encode("utf-8") if isinstance(message, str) else bytes(message)
                raw = raw.replace(b"\r\n", b"\n")
                end = raw.find(b"\n\n")
                if end >= 0:
                    body = b"\n" + raw[end + 2 :]
                    body = body.replace(b"\nFrom ", b"\n>From ")
                    raw = raw[: end + 2] + body[1:]
                mbox += b"From MAILER-DAEMON Thu Jan  1 00:00:00 1970\n" + raw
                if not raw.endswith(b"\n"):
                    mbox += b"\n"
                mbox += b"\n"
            info = tarfile.TarInfo(f"{user}/{folder}.mbox")
            info.size = len(mbox)
            tar.addfile(info, io.BytesIO(bytes(mbox)))
    target = Path(path)
    target.write_bytes(lzma.compress(out.getvalue(), format=lzma.FORMAT_XZ))
    return target
