"""olboost's version, and a digest of its code for what the version does not tell apart."""

from __future__ import annotations

import functools
import hashlib
import os

__version__ = "0.1.0"


@functools.cache
def source_digest() -> str:
    """SHA-256 (hex) of every Python file of the installed olboost package, path and contents.

    Stored results (a sweep's records, a reproduce suite's cells) carry it beside
    :data:`__version__` and are reused only by the same code: between releases the version stays
    the same while the code changes (a development install, an edited checkout), and results
    computed by the old code were reused as the new code's."""
    package = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                relative = os.path.relpath(path, package).replace(os.sep, "/")
                with open(path, "rb") as f:
                    digest.update(relative.encode() + b"\0" + f.read() + b"\0")
    return digest.hexdigest()
