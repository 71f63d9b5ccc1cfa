"""Support of the ``olboost serve`` tests: a real server in a child process, and plain HTTP.

:class:`Server` runs ``olboost serve`` (the command line's own code path, uvicorn on 127.0.0.1
and a free port) in a child process and waits for its ready file. By default the child is
*forked* from a fork server that has imported olboost, Starlette and uvicorn once: a restart
then costs the service's recovery and Numba's cached kernels, not 1.5-3 s of imports, which is
what lets the crash test restart 20 times within the suite's budget. ``fork=False`` executes
``python -m olboost serve`` instead. Either way the server is a separate process, reached over
TCP, killed with a real SIGKILL.

Requests go through :mod:`http.client`, one connection per request, so that a test can send any
bytes and headers it likes.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import http.client
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest

TOKEN = "test-token-0123456789"

#: Seconds a server may take to become ready (recovery of a long log on a loaded machine).
READY_TIMEOUT = 120.0

#: The fork server: a Python that has imported olboost, Starlette and uvicorn and forks a
#: server child for each line ``[argv, token]`` it reads, answering with the child's pid. It never
#: runs a compiled kernel itself: a process that has used GNU OpenMP (Numba's threads) cannot
#: fork safely, which rules out forking the test process. It does fill Numba's target registries
#: (what the first compile or cache load of any process does: importing Numba's NumPy and BLAS
#: support, some 0.5 s), which runs no kernel and which every server child would otherwise repeat
#: (21 times in the crash test).
_ZYGOTE_CODE = """
import json, os, signal, sys
import olboost.cli, olboost.serve.app, olboost.serve.service, olboost.serve.simulate
from numba.core.registry import cpu_target
cpu_target.target_context.refresh()
cpu_target.typing_context.refresh()
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the system
for line in sys.stdin:
    argv, token = json.loads(line)
    pid = os.fork()
    if pid == 0:
        os.setsid()
        os.environ["OLBOOST_SERVE_TOKEN"] = token
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os._exit(olboost.cli.main(argv))
    print(pid, flush=True)
"""

_zygote: subprocess.Popen | None = None


def _fork_server(argv: list[str], token: str) -> int:
    global _zygote
    if _zygote is None or _zygote.poll() is not None:
        _zygote = subprocess.Popen(
            [sys.executable, "-c", _ZYGOTE_CODE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        atexit.register(_zygote.stdin.close)
    _zygote.stdin.write(json.dumps([argv, token]) + "\n")
    _zygote.stdin.flush()
    return int(_zygote.stdout.readline())


class Server:
    """``olboost serve --store STORE ARGS...`` in a child process.

    Parameters
    ----------
    store
        The store directory.
    args
        More command-line options (``--dataset``, ``--learners`` ...).
    fork
        Fork the child from this process (see the module docstring) or execute a new Python.
    """

    def __init__(self, store: Path, *args: str, token: str = TOKEN, fork: bool = True):
        self.store = Path(store)
        self.args = list(args)
        self.token = token
        self.fork = fork
        self.url = ""
        self.process: Any = None
        self.ready_file = self.store.parent / f"{self.store.name}.url"

    def start(self) -> Server:
        self.ready_file.unlink(missing_ok=True)
        argv = ["serve", "--store", str(self.store), "--port", "0"]
        argv += ["--ready-file", str(self.ready_file), *self.args]
        if self.fork:
            self.process = _fork_server(argv, self.token)
        else:
            env = {**os.environ, "OLBOOST_SERVE_TOKEN": self.token}
            self.process = subprocess.Popen(
                [sys.executable, "-m", "olboost", *argv],
                env=env,
                stdout=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + READY_TIMEOUT
        while not self.ready_file.exists():
            if not self.alive():
                raise RuntimeError(f"olboost serve exited with {self.exitcode()} before ready")
            if time.monotonic() > deadline:
                self.kill()
                raise TimeoutError("olboost serve did not become ready")
            time.sleep(0.02)
        self.url = self.ready_file.read_text().strip()
        return self

    @property
    def pid(self) -> int:
        return self.process if self.fork else self.process.pid

    def alive(self) -> bool:
        if self.fork:
            try:
                os.kill(self.process, 0)
            except ProcessLookupError:
                return False
            return True
        return self.process.poll() is None

    def exitcode(self) -> int | None:
        # a forked child is reaped by the fork server: its status is not known here
        return None if self.fork else self.process.returncode

    def _wait(self, timeout: float) -> None:
        if self.fork:
            deadline = time.monotonic() + timeout
            while self.alive() and time.monotonic() < deadline:
                time.sleep(0.01)
        else:
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                pass

    def kill(self) -> None:
        """SIGKILL, and reap the process."""
        if self.process is not None and self.alive():
            os.kill(self.pid, signal.SIGKILL)
        self._wait(30)

    def stop(self) -> int | None:
        """SIGTERM (uvicorn's graceful shutdown: the service learns what it has committed and
        writes a last checkpoint); SIGKILL if it has not exited within a minute."""
        if self.process is not None and self.alive():
            os.kill(self.pid, signal.SIGTERM)
            self._wait(60)
            if self.alive():
                self.kill()
        return self.exitcode()

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ HTTP

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None | bool = True,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 60.0,
    ) -> tuple[int, Any]:
        """``(status, answer)``: the answer parsed as JSON when it is JSON, else its text.
        ``token=True`` sends the server's token, a string sends that one, ``None`` none."""
        parts = urlsplit(self.url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
        try:
            sent = {"Content-Type": "application/json"}
            if token is True:
                sent["Authorization"] = f"Bearer {self.token}"
            elif isinstance(token, str):
                sent["Authorization"] = f"Bearer {token}"
            sent.update(headers or {})
            data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
            conn.request(method, path, body=data, headers=sent)
            response = conn.getresponse()
            payload = response.read()
            kind = response.getheader("content-type", "")
            if kind.startswith("application/json"):
                return response.status, json.loads(payload)
            return response.status, payload.decode()
        finally:
            conn.close()

    def rank(self, x: Any, **extra: Any) -> dict[str, Any]:
        status, answer = self.request("POST", "/rank", {"features": list(x), **extra})
        assert status == 200, answer
        return answer

    def feedback(self, impression: str, clicked: list[str], **extra: Any) -> tuple[int, Any]:
        return self.request(
            "POST", "/feedback", {"impression": impression, "clicked": clicked, **extra}
        )


def features(n: int, seed: int) -> list[float]:
    """A deterministic feature vector of width ``n``."""
    return np.random.default_rng(seed).normal(size=n).round(6).tolist()


@contextlib.contextmanager
def small_disk(path: Path, size: str):
    """A tmpfs of ``size`` mounted at ``path`` for the test (skipped where mount is refused:
    it needs root): a disk that really fills up."""
    path.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"a file system of its own needs mount, refused here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


def fill(disk: Path) -> Path:
    """Fill ``disk`` up with one file (returned), to the last block."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError as err:
            assert err.errno == errno.ENOSPC, err
    return filler


@contextlib.contextmanager
def log_locked(store: Path):
    """The log of ``store`` locked for writing meanwhile, by another connection (as another
    program would: past SQLite's 5 s wait, the service's writes fail with SQLITE_BUSY)."""
    import sqlite3

    blocker = sqlite3.connect(store / "log.sqlite", timeout=0, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()


def refused_for_now(futures: list) -> None:
    """Each of ``futures`` fails with a 503 and ``Retry-After: 1``: a write of the log that
    may succeed later."""
    from olboost.serve.requests import RequestError

    for future in futures:
        with pytest.raises(RequestError) as err:
            future.result(timeout=60)
        assert (err.value.status, err.value.retry_after) == (503, 1), err.value.message


@contextlib.contextmanager
def writer_held(service: Any, store: Path):
    """The log writer of ``service`` (on ``store``) held meanwhile, in a callback of an
    impression it has committed: the requests sent in the block queue up, and go to the log
    in one batch once it ends."""
    import threading

    entered, go = threading.Event(), threading.Event()

    def hold(_: Any) -> None:  # on the log writer's thread, between two batches
        entered.set()
        go.wait(30)

    with log_locked(store):  # the impression is not committed before its callback is set
        held = service.rank({"features": [0.5] * service.config.n_features})[1]
        held.add_done_callback(hold)
    assert entered.wait(30)  # its batch committed: the writer waits in the callback
    try:
        yield
    finally:
        go.set()
        held.result(timeout=60)
