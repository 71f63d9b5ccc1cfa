"""The HTTP layer of ``olboost serve``: a Starlette application on uvicorn.

**Why Starlette rather than FastAPI.** FastAPI is Starlette plus pydantic models, dependency
injection and generated OpenAPI pages. None of it would carry its weight here: the bodies are
three small JSON objects whose checks (a feature vector of the schema's width, finite numbers,
labels of the model, clicked labels among those shown by a top-k booster, an impression not yet
answered) need the
model and the log, so they live in :mod:`olboost.serve.service` whatever the framework, with
messages of our own; pydantic would add a second, differently worded layer of validation and its
import and per-request cost on a 2-core machine whose load target is 600 requests a second with
the model learning beside them. Starlette alone is the routing, the request and response objects
and the lifespan hooks, over any ASGI server; uvicorn (with uvloop and httptools when installed)
is the server.

Endpoints (bodies and answers are JSON):

* ``POST /rank`` ``{"features": [...] | {...}, "key"?: int, "ranking"?: bool, "scores"?: bool}``
  -> ``{"impression", "labels", "round", "expires", "ranking"?, "scores"?}`` (``key`` keys a
  top-k booster's exploration draw; a full-feedback model draws nothing, and logs it only);
* ``POST /feedback`` (bearer token) ``{"impression", "clicked": [...], "feedback_id"?, "wait"?}``
  -> ``{"feedback_id", "seq", "duplicate"}``: a top-k booster's ``clicked`` are the relevant
  labels among those it showed (it learns nothing of the others); a full-feedback model's are
  every relevant label, shown or not (it learns the others as irrelevant);
* ``GET /schema`` (bearer token with ``protect_rank``): the algorithm, ``k``, the labels and the
  features (width and names), what a client needs to write the bodies above;
* ``GET /health``, ``GET /metrics`` (Prometheus text), ``GET /series`` (the status page's data),
  ``GET /`` (the status page);
* ``POST /admin/checkpoint`` and ``GET /admin/model`` (bearer token): write a checkpoint now; the
  model's digest after every committed feedback is learned.

:func:`create_app` builds the application (the ASGI app factory: tests and embedding start it
with any ASGI server); :func:`run` serves it with uvicorn on ``127.0.0.1`` by default.

Every request, to any path, passes :class:`_Guard`: a service on a loopback address answers
only a ``Host`` that names this machine (:func:`allowed_hosts`; 421 otherwise, against a web
page's DNS rebinding), and every answer carries :data:`_SECURITY_HEADERS` (the status page's
Content-Security-Policy admits its own inline script and style only, by their hashes).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hmac
import ipaddress
import json
import logging
import os
import re
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from olboost.serve.config import NotText, decode_text
from olboost.serve.page import STATUS_PAGE
from olboost.serve.requests import RequestError, _as_json
from olboost.serve.service import Service

__all__ = [
    "DEFAULT_MAX_BODY",
    "LOOPBACK_NAMES",
    "TOKEN_ENV",
    "allowed_hosts",
    "check_host_name",
    "check_token",
    "create_app",
    "listen",
    "loopback_hosts",
    "read_token_file",
    "run",
]

log = logging.getLogger(__name__)

#: Largest request body accepted, in bytes (a feature vector of some ten thousand numbers).
DEFAULT_MAX_BODY = 256 * 1024

#: The interpreter's thread switch interval in the server (seconds; Python's default is 0.005).
SWITCH_INTERVAL = 0.0001

#: Environment variable holding the bearer token of the write endpoints.
TOKEN_ENV = "OLBOOST_SERVE_TOKEN"

#: Fewer characters than this in a bearer token are warned of (:func:`create_app`).
MIN_TOKEN_CHARS = 16


def _warn_if_others_read(path: Path) -> None:
    """Warn when the token file ``path`` is readable by users other than its owner."""
    if os.name != "posix":
        return
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        log.warning(
            "%s: the bearer token is readable by other users (mode %#o): chmod 600 %s",
            path, mode, path,
        )  # fmt: skip


#: The names a client on this machine reaches a loopback address by: the ``Host`` headers a
#: service bound to one accepts (:func:`loopback_hosts`).
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def _inline_hashes(page: str, tag: str) -> str:
    """The CSP sources (``'sha256-...'``) of ``page``'s inline ``<tag>`` elements."""
    import base64
    import hashlib
    import re

    digests = [
        hashlib.sha256(b.encode()).digest()
        for b in re.findall(rf"<{tag}>(.*?)</{tag}>", page, re.S)
    ]
    return " ".join(f"'sha256-{base64.b64encode(d).decode()}'" for d in digests)


#: Headers of every answer: the status page may run no script, style, frame or form but its own
#: (hashed), nor be framed; no answer is sniffed as another type, nor sends a referrer.
_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'none'; connect-src 'self'; img-src data:; "
        f"script-src {_inline_hashes(STATUS_PAGE, 'script')}; "
        f"style-src {_inline_hashes(STATUS_PAGE, 'style')}; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
}


def loopback_hosts(host: str) -> tuple[str, ...] | None:
    """The ``Host`` names a service bound to ``host`` accepts: those of :data:`LOOPBACK_NAMES`
    and ``host`` itself for a loopback address or ``localhost``, ``None`` (any) otherwise.

    A web page the operator opens can make the browser resolve a name of its own to
    127.0.0.1 (DNS rebinding) and then read ``/health`` and ``/metrics`` and write impressions
    through ``/rank``, as that page's own origin; its requests carry its name as ``Host``,
    which no client of this machine sends."""
    name = _host_name(host)
    try:
        address = ipaddress.ip_address(name)
        # ::ffff:127.0.0.1 is 127.0.0.1 (is_loopback says no for it before Python 3.13)
        mapped = getattr(address, "ipv4_mapped", None)
        loopback = (mapped or address).is_loopback
    except ValueError:
        loopback = name == "localhost"
    return tuple(dict.fromkeys((*LOOPBACK_NAMES, name))) if loopback else None


def allowed_hosts(bound: str, extra: Iterable[str] = ()) -> tuple[str, ...] | None:
    """The ``Host`` names a service bound to address ``bound`` accepts (``None``: any):
    :func:`loopback_hosts`, with the names of ``extra`` (``--allowed-host``, such as the public
    name a reverse proxy passes on) added; beyond loopback, none but this machine's, ``bound``
    and ``extra`` if ``extra`` is given (a page's rebinding never sends a name of this
    machine), any otherwise."""
    names = [_host_name(name) for name in extra]
    own = loopback_hosts(bound)
    if not names:
        return own
    if own is None:
        own = (*LOOPBACK_NAMES, _host_name(bound))
    return tuple(dict.fromkeys((*own, *names)))


def check_host_name(name: str, where: str) -> str:
    """``name`` if it can be a ``Host`` header's host name (a name or an address, with no port
    or scheme); a ``ValueError`` naming ``where`` otherwise: such a name never matched."""
    host = _host_name(name)
    try:
        ipaddress.ip_address(host)
        valid = "%" not in host  # a zone id: no Host header carries one as given
    except ValueError:
        valid = bool(host) and all(c.isascii() and (c.isalnum() or c in "-._") for c in host)
    if not valid:
        raise ValueError(
            f"{where} {name!r}: a host name or address as a Host header gives it, without "
            "port, scheme or zone (e.g. ranker.example.com)"
        )
    return name


def _host_name(host: str) -> str:
    """``host`` (a name or an address, IPv6 ones bracketed or not, with no port) as
    :func:`_request_host` gives it: lowercase, without a final dot, an IPv6 address compressed."""
    name = host.strip().strip("[]").lower().rstrip(".")
    try:
        return ipaddress.ip_address(name).compressed
    except ValueError:
        pass
    if not name.isascii():  # an internationalised name, as clients send it (punycode)
        try:
            return name.encode("idna").decode("ascii")
        except UnicodeError:
            return name
    return name


def _request_host(header: str) -> str | None:
    """The host name of a ``Host`` header (``None`` if it has none): ``localhost.`` is
    ``localhost``, ``[0:0:0:0:0:0:0:1]:80`` is ``::1``."""
    if not _HOST_HEADER.fullmatch(header):  # userinfo, a path, a port not a number...
        return None
    try:
        name = urlsplit(f"//{header}").hostname
    except ValueError:
        return None
    return None if not name else _host_name(name)


#: A ``Host`` header (RFC 9110: a host name or an IP literal, and an optional port).
_HOST_HEADER = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::[0-9]{1,5})?")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (send finite numbers)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json keeps the last of repeated keys: {"features": a, "features": b} would be ranked on b
    # and logged as the client's request, and a feature named twice in a dict silently given
    # one value; RFC 8259 leaves such objects' meaning undefined, so they are refused
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"the key {_as_json(key)} is given twice in one object")
            seen.add(key)
    return obj


async def _body(request: Request, limit: int) -> Any:
    """The request's JSON body, read up to ``limit`` bytes: 415 if it does not say it is JSON,
    413 past the limit (declared or streamed), 400 if it is not JSON."""
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() != "application/json":
        raise RequestError(
            415, f"send JSON with Content-Type: application/json, not {_as_json(content_type)}"
        )
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise RequestError(400, f"bad Content-Length {_as_json(declared)}")
        if int(declared) > limit:
            raise RequestError(413, f"the body is {declared} bytes; the limit is {limit}")
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise RequestError(413, f"the body exceeds the limit of {limit} bytes")
            chunks.append(chunk)
    except ClientDisconnect:
        # no one to answer, but a request ended, not an error of the service (it was logged
        # as an unhandled exception, with a traceback)
        raise RequestError(400, "the client disconnected before its body was read") from None
    return _parse_json(b"".join(chunks))


def _parse_json(data: bytes) -> Any:
    """A request's body read as JSON, or a 400 saying why it is not."""
    try:
        return json.loads(data, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except (ValueError, UnicodeDecodeError) as err:
        if "int_max_str_digits" in str(err):
            # Python's own words tell the client to call sys.set_int_max_str_digits()
            limit = sys.get_int_max_str_digits()
            raise RequestError(400, f"malformed JSON: an integer of over {limit} digits") from None
        raise RequestError(400, f"malformed JSON: {err}") from None
    except RecursionError:
        # json's decoder recurses once per nesting level: a body of ``[[[[...`` within the size
        # limit reaches Python's recursion limit
        raise RequestError(400, "malformed JSON: nested too deeply") from None


def _error(err: RequestError) -> JSONResponse:
    headers = {"WWW-Authenticate": 'Bearer realm="olboost"'} if err.status == 401 else {}
    if err.retry_after is not None:
        headers["Retry-After"] = str(err.retry_after)
    return JSONResponse({"error": err.message}, status_code=err.status, headers=headers or None)


def create_app(
    service: Service,
    *,
    token: str,
    max_body: int = DEFAULT_MAX_BODY,
    protect_rank: bool = False,
    allowed_hosts: Collection[str] | None = None,
    on_ready: Callable[[], None] | None = None,
    on_stop: Callable[[], None] | None = None,
) -> Starlette:
    """The ASGI application serving ``service``.

    The service is started (recovered from its store) when the server starts the application
    (its lifespan), before the first request, and closed (every committed feedback learned, a
    last checkpoint) when the server stops.

    Parameters
    ----------
    service
        The service, not started yet.
    token
        The bearer token of ``/feedback`` and ``/admin/*`` (and ``/rank`` and ``/schema`` with
        ``protect_rank``), compared in constant time.
    max_body
        Largest request body in bytes (413 beyond).
    protect_rank
        Whether ``/rank`` (it writes the log, not the model) and ``/schema`` (the label and
        feature names) also need the token.
    allowed_hosts
        The host names (without port) a request's ``Host`` header may give; others get 421.
        ``None``: any. :func:`run` gives :func:`allowed_hosts` of its address.
    on_ready
        Called once the service has started, before the first request is served.
    on_stop
        Called when the server stops, before the service is closed.
    """
    if not token:
        raise ValueError("the bearer token must not be empty")
    expected = check_token(token, "token").encode()
    if len(token) < MIN_TOKEN_CHARS:
        # no refusal (a test's or a demo's token), but wrong guesses are not slowed down
        log.warning(
            "the bearer token has %d characters: a short one is guessed by trying (give %d or "
            "more, e.g. openssl rand -hex 16)", len(token), MIN_TOKEN_CHARS,
        )  # fmt: skip

    def authorise(request: Request) -> None:
        header = request.headers.get("authorization")
        if header is None:
            raise RequestError(
                401, "this endpoint needs a bearer token (Authorization: Bearer ...)"
            )
        scheme, _, given = header.partition(" ")
        # compare_digest: the time taken does not tell how much of a guess was right
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), expected):
            raise RequestError(401, "invalid bearer token")

    failed: set[tuple[str, type]] = set()  # (endpoint, error type) of the tracebacks logged

    def endpoint(
        name: str, handler: Callable[[Request], Awaitable[Response]], write: bool = False
    ) -> Callable[[Request], Awaitable[Response]]:
        async def wrapped(request: Request) -> Response:
            try:
                if write:
                    authorise(request)
                response = await handler(request)
            except RequestError as err:
                response = _error(err)
            except Exception as err:
                # a defect of the service, not of the request: counted as a 500 (an operator
                # alerting on 5xx saw none of them) and logged naming the endpoint, with its
                # traceback the first time for each kind of error (not once per request)
                kind = (name, type(err))
                log.error("%s failed: %s: %s", name, type(err).__name__, err,
                           exc_info=kind not in failed)  # fmt: skip
                failed.add(kind)
                response = JSONResponse(
                    {"error": f"internal error ({type(err).__name__}); see the service's log"},
                    status_code=500,
                )
            service.stats.request(name, response.status_code)
            return response

        return wrapped

    async def rank(request: Request) -> Response:
        body = await _body(request, max_body)
        shown = service.rank(body, block=False)
        if shown is None:
            # The learner holds the model for one example (about 1.5 ms with 100 trees, the GIL
            # released): rank on a worker thread instead of stalling every other connection.
            shown = await asyncio.to_thread(service.rank, body)
        response, logged = shown
        await asyncio.wrap_future(logged)
        return JSONResponse(response)

    async def feedback(request: Request) -> Response:
        try:
            body = await _body(request, max_body)
            logged = service.feedback(body)
        except RequestError as err:
            # refused before the log writer, which counts the refusals it makes itself
            service.stats.reject(err.status)
            raise
        # committed, then learned if asked to wait, or within reach of a lagging learner
        # (backpressure): Service.feedback's future says when
        return JSONResponse(await asyncio.wrap_future(logged))

    async def health(request: Request) -> Response:
        # 503 once stopped on an error: a probe that reads the status code alone (a load
        # balancer's, Kubernetes') restarts the service, which refuses every request until then
        answer = service.health()
        return JSONResponse(answer, status_code=503 if answer["status"] == "error" else 200)

    # rendered once: the settings never change while the service runs, and at 20,000 labels
    # the answer is some 190 kB of JSON
    schema_body = JSONResponse(service.schema()).body

    async def schema(request: Request) -> Response:
        return Response(schema_body, media_type="application/json")

    async def metrics(request: Request) -> Response:
        return PlainTextResponse(service.metrics(), media_type="text/plain; version=0.0.4")

    async def series(request: Request) -> Response:
        return JSONResponse(service.series())

    async def status_page(request: Request) -> Response:
        return HTMLResponse(STATUS_PAGE)

    async def checkpoint(request: Request) -> Response:
        seq = await asyncio.wrap_future(service.checkpoint_now())
        return JSONResponse({"checkpoint_seq": seq})

    async def model_digest(request: Request) -> Response:
        # digesting pickles the whole model: off the event loop
        return JSONResponse(await asyncio.to_thread(service.model_digest))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if not service.started:  # run() starts it before the server, to report its errors
            await asyncio.to_thread(service.start)
        if on_ready is not None:
            on_ready()
        try:
            yield
        finally:
            if on_stop is not None:
                on_stop()
            await asyncio.to_thread(service.close)

    routes = [  # the two busy endpoints first: Starlette tries the routes in order
        Route("/rank", endpoint("/rank", rank, write=protect_rank), methods=["POST"]),
        Route("/feedback", endpoint("/feedback", feedback, write=True), methods=["POST"]),
        Route("/", endpoint("/", status_page), methods=["GET"]),
        Route("/health", endpoint("/health", health), methods=["GET"]),
        # the label and feature names: behind the token where the rankings are
        Route("/schema", endpoint("/schema", schema, write=protect_rank), methods=["GET"]),
        Route("/metrics", endpoint("/metrics", metrics), methods=["GET"]),
        Route("/series", endpoint("/series", series), methods=["GET"]),
        Route(
            "/admin/checkpoint", endpoint("/admin/checkpoint", checkpoint, True), methods=["POST"]
        ),
        Route("/admin/model", endpoint("/admin/model", model_digest, True), methods=["GET"]),
    ]
    hosts = None if allowed_hosts is None else frozenset(map(_host_name, allowed_hosts))
    endpoints = {(r.path, m) for r in routes for m in r.methods or ()}
    guard = Middleware(_Guard, hosts=hosts, stats=service.stats, endpoints=endpoints)

    async def internal_error(request: Request, exc: Exception) -> Response:
        # Starlette's outermost layer answers an error that escaped the app, past _Guard: with
        # the headers of every answer all the same
        return JSONResponse(
            {"error": f"internal error ({type(exc).__name__}); see the service's log"},
            status_code=500, headers=_SECURITY_HEADERS,
        )  # fmt: skip

    async def routing_error(request: Request, exc: HTTPException) -> Response:
        # Starlette's own answers (a path no route takes: 404; a method its route does not:
        # 405, with Allow) were plain text, every other error a JSON object
        allowed = (exc.headers or {}).get("Allow")
        said = f"{exc.detail} (allowed: {allowed})" if allowed else exc.detail
        return JSONResponse({"error": said}, status_code=exc.status_code, headers=exc.headers)

    app = Starlette(
        routes=routes, lifespan=lifespan, middleware=[guard],
        exception_handlers={Exception: internal_error, HTTPException: routing_error},
    )  # fmt: skip
    # /health/ was redirected to /health, the Location built from the request's Host header
    app.router.redirect_slashes = False
    return app


class _Guard:
    """ASGI middleware of every request, unknown paths and methods included: the ``Host``
    check of ``hosts`` (421; ``None``: any) and the headers of :data:`_SECURITY_HEADERS`. A
    421 is counted with the requests of its endpoint, if its path and method name one
    (``endpoints``), as a 405 or a 404 is not."""

    def __init__(
        self, app: Any, hosts: frozenset[str] | None, stats: Any, endpoints: set[tuple[str, str]]
    ):
        self.app, self.hosts, self.stats, self.endpoints = app, hosts, stats, endpoints

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_guarded(message: Any) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).update(_SECURITY_HEADERS)
            await send(message)

        header = Request(scope).headers.get("host")
        # (HTTP/1.0 may send none; a browser always does)
        if self.hosts is not None and header is not None:
            if _request_host(header) not in self.hosts:
                response = _error(RequestError(
                    421, f"Host {_as_json(header)} is not a name of this service "
                    f"({', '.join(sorted(self.hosts))}): a web page's request through a name "
                    "it points at this machine (DNS rebinding), refused; a reverse proxy's "
                    "public name is given with --allowed-host",
                ))  # fmt: skip
                if (scope["path"], scope["method"]) in self.endpoints:
                    self.stats.request(scope["path"], 421)
                await response(scope, receive, send_guarded)
                return
        await self.app(scope, receive, send_guarded)


def check_token(token: str, where: str) -> str:
    """``token`` if it can be a bearer token: printable ASCII (RFC 6750's ``b64token`` is
    ASCII). HTTP header bytes reach the server as Latin-1 text, so a token such as ``tök``
    sent by a client as UTF-8 never matched, and one beyond Latin-1 could not be sent at all;
    a ``ValueError`` naming ``where`` (the option or variable) instead."""
    if not (token.isascii() and token.isprintable()):
        raise ValueError(f"{where}: a bearer token must be printable ASCII (RFC 6750)")
    return token


def read_token_file(token_file: str | os.PathLike[str]) -> str:
    """The bearer token held in ``token_file`` (``--token-file``), surrounding whitespace
    dropped; a ``ValueError`` naming the option if it cannot be read or is empty. The file is
    UTF-8, with or without a byte-order mark, or UTF-16 with one: the forms Windows' editors
    and PowerShell write."""
    try:
        token = decode_text(Path(token_file).read_bytes()).strip()
    except OSError as err:
        raise ValueError(f"--token-file {token_file}: {err.strerror or err}") from None
    except NotText:
        raise ValueError(f"--token-file {token_file}: not a text file") from None
    if not token:
        raise ValueError(f"--token-file {token_file}: the file is empty")
    token = check_token(token, f"--token-file {token_file}")
    _warn_if_others_read(Path(token_file))
    return token


def read_token(store: str | os.PathLike[str]) -> str:
    """The bearer token when no ``--token-file`` is given: :data:`TOKEN_ENV`, else
    ``STORE/token`` (generated on first use, readable by its owner only). Surrounding whitespace
    is dropped."""
    token = os.environ.get(TOKEN_ENV, "").strip()
    if token:
        return check_token(token, TOKEN_ENV)
    path = Path(store) / "token"
    if path.is_symlink() and not path.exists():
        # O_EXCL refuses to create through it (a bare FileExistsError of no file it named)
        raise ValueError(
            f"{path}: a symbolic link to a missing file where the token goes; remove it, or "
            "give --token-file"
        )
    if not path.exists():
        import secrets

        Path(store).mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(32) + "\n")
        print(f"olboost serve: generated a bearer token in {path}", file=sys.stderr)
    else:
        _warn_if_others_read(path)
    return path.read_text().strip()


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host`` and ``port`` (0: a free port) and listening; a
    ``ValueError`` naming ``--host`` or ``--port`` if that is not possible."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        # listening before the (possibly long) recovery: early clients wait in the backlog
        sock.listen(2048)
    except OSError as err:
        sock.close()
        if isinstance(err, socket.gaierror) or err.errno in (
            errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT, errno.EINVAL
        ):  # fmt: skip
            option = f"--host {host}"
        elif err.errno in (errno.EADDRINUSE, errno.EACCES):
            option = f"--port {port}"
        else:
            option = f"--host {host} --port {port}"
        raise ValueError(f"{option}: cannot listen there ({err.strerror or err})") from None
    return sock


class _Stderr(logging.StreamHandler):
    """A handler writing to ``sys.stderr`` as it is when a record comes (bound at the first
    run, a redirected stderr was written to after it had closed)."""

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _log_to_stderr() -> None:
    """Write the service's log records (a stopped thread, a failed checkpoint) on stderr as
    ``olboost serve: ...`` lines, unless the process has said where they go."""
    logger = logging.getLogger("olboost.serve")
    if logger.hasHandlers():  # its own, an ancestor's (olboost's, the root's)
        return
    handler = _Stderr()
    handler.setFormatter(logging.Formatter("olboost serve: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)


def run(
    service: Service,
    *,
    token: str | None,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_body: int = DEFAULT_MAX_BODY,
    protect_rank: bool = False,
    ready_file: str | os.PathLike[str] | None = None,
    sock: socket.socket | None = None,
    extra_hosts: Iterable[str] = (),
) -> None:
    """Serve ``service`` with uvicorn until SIGINT or SIGTERM.

    The socket (``sock``, else :func:`listen` on ``host`` and ``port``; ``port=0`` picks a free
    port) is bound before the service starts; once the service is ready, the address is printed
    on stdout and, with ``ready_file``, written to that file (``http://HOST:PORT``), atomically;
    an earlier service's file there is removed once this one holds the store, and this one's
    when it stops, so that a script waiting for the file never reads a dead address.
    ``token=None``: :func:`read_token` of the store, once the service has started (a token it
    generates is not left in a store that could not be opened). Requests must name the service
    as :func:`allowed_hosts` of its address and ``extra_hosts`` says (``--allowed-host``).
    """
    import uvicorn

    # The learner needs the GIL for a little Python around each compiled learn (which runs
    # without it), while the event loop runs Python nearly all the time; a thread that wants the
    # GIL waits for the holder's switch interval (5 ms by default), a few times per example. A
    # short interval keeps the learner up with the requests: with 100 trees on yeast,
    # benchmarks/serve.py learned 267 feedbacks a second at 0.5 ms and 278 at 0.1 ms.
    sys.setswitchinterval(SWITCH_INTERVAL)
    _log_to_stderr()
    if sock is None:
        sock = listen(host, port)
    bound = sock.getsockname()[1]
    url = f"http://{host if sock.family == socket.AF_INET else f'[{host}]'}:{bound}"

    def ready() -> None:
        print(f"olboost serve: listening on {url} (store {service.path})", flush=True)
        if ready_file is not None:
            from olboost.checkpoint import atomic_write

            atomic_write(ready_file, url.encode())

    def stopped() -> None:
        # in the lifespan's end, not after the server's run: uvicorn raises the SIGTERM it
        # caught again once stopped, which ends the process there
        if ready_file is not None:
            with contextlib.suppress(OSError):
                if Path(ready_file).read_bytes() == url.encode():  # not a later service's
                    os.remove(ready_file)

    # Started here, not in the server's lifespan, so that a store that cannot be opened (a
    # corrupt log, a checkpoint of another store) is the command's error, said in one line,
    # rather than a traceback of the server's startup
    try:
        service.start()
        if token is None:
            token = read_token(service.path)
    except BaseException:
        sock.close()
        raise
    if ready_file is not None:
        with contextlib.suppress(FileNotFoundError):
            os.remove(ready_file)  # a stopped or killed service's address
    inet = sock.family in (socket.AF_INET, socket.AF_INET6)
    address = str(sock.getsockname()[0]) if inet else ""
    hosts = allowed_hosts(address, extra_hosts) if inet else None
    if hosts is not None:  # the URL printed and written to the ready file: its name too
        hosts = tuple(dict.fromkeys((*hosts, _host_name(host))))
    if inet and loopback_hosts(address) is None and not protect_rank:
        log.warning(
            "/rank needs no token and %s is not a loopback address: whoever reaches it gets "
            "rankings and scores and grows the log (--protect-rank; and a reverse proxy with "
            "timeouts in front, see the README)", url,
        )  # fmt: skip
    app = create_app(
        service,
        token=token,
        max_body=max_body,
        protect_rank=protect_rank,
        allowed_hosts=hosts,
        on_ready=ready,
        on_stop=stopped,
    )
    extras: dict[str, Any] = {}
    with contextlib.suppress(ImportError):
        import uvloop  # noqa: F401

        extras["loop"] = "uvloop"
    with contextlib.suppress(ImportError):
        import httptools  # noqa: F401

        extras["http"] = "httptools"
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=10,
        server_header=False, **extras,
    )  # fmt: skip
    uvicorn.Server(config).run(sockets=[sock])
