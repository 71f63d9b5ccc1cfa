"""olboost's version, and a digest of its code for what the version does not tell apart."""

from __future__ import annotations

import functools
import hashlib
import os

__version__ = "0.1.0"


def package_sources(package: str) -> dict[str, bytes]:
    """The Python files under the directory ``package``, by path relative to it (``os.sep``
    separated), in a fixed order (directories and files sorted), with their contents."""
    sources: dict[str, bytes] = {}
    for root, dirs, files in os.walk(package):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                with open(path, "rb") as f:
                    sources[os.path.relpath(path, package)] = f.read()
    return sources


@functools.cache
def source_digest() -> str:
    """SHA-256 (hex) of every Python file of the installed olboost package, path and contents.

    Stored results (a sweep's records, a reproduce suite's cells) carry it beside
    :data:`__version__` and are reused only by the same code: between releases the version stays
    the same while the code changes (a development install, an edited checkout), and results
    computed by the old code were reused as the new code's."""
    digest = hashlib.sha256()
    for relative, text in package_sources(os.path.dirname(os.path.abspath(__file__))).items():
        digest.update(relative.replace(os.sep, "/").encode() + b"\0" + text + b"\0")
    return digest.hexdigest()
