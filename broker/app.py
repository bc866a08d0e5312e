"""The aiohttp application: one port for the extension link, REST (and MCP), behind one guard.

:func:`make_app` builds the app from a :class:`~broker.daemon.runtime.Runtime`; :func:`serve` binds it
to 127.0.0.1, writes the discovery file and runs until asked to stop. The guard middleware
applies the security model to every request before a handler sees it (its token, its connection
among its credential's, its declared size) and gives its body ``Config.body_timeout`` seconds to
come, and turns every error into ``{"error": {"code", "message"}}`` with the error's status. A
refusal that leaves a body unread (a connection over its credential's cap, a body too large or too
slow) closes the connection once answered, after reading on (and dropping) what the peer still
sends for at most ``Config.linger_time`` seconds, so that the peer reads the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import math
import re
import signal
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import hdrs, web

from . import discovery
from .core.errors import (
    BrokerError,
    Forbidden,
    RateLimited,
    RequestTimedOut,
    RequestTooLarge,
    TooManyConnections,
    UnsupportedEncoding,
    error_to_wire,
)
from .core.limits import connection_caps, descriptors_wanted
from .core.link_auth import pairing_text
from .core.security import check_bearer, check_host, is_allowed_origin
from .daemon.connections import CONNECTIONS, ConnectionGate
from .daemon.hub import Hub
from .daemon.runtime import CLIENT, HUB, RUNTIME, VERSION, Runtime, raise_open_file_limit
from .daemon.views import json_response
from .link.handshake import OPEN_PATHS, issue_code, setup_auth_routes
from .link.websocket import check_extension_request, extension_link
from .mcp.door import setup_mcp
from .rest.routes import call_tool, page_tool_call, setup_rest
from .version import BROKER_HEADER

__all__ = [
    "PORT_RANGE",
    "answer_tool_calls_first",
    "bind_socket",
    "check_body_size",
    "check_no_content_coding",
    "gate_connections",
    "make_app",
    "serve",
]

logger = logging.getLogger(__name__)

# The range the original extension scans for a broker.
PORT_RANGE = range(8765, 8786)

_HTTP_CODES = {
    404: "not_found",
    405: "method_not_allowed",
    413: "request_too_large",
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# Refusals after which the connection is closed: what its peer still sends is not worth reading.
_CLOSING_ERRORS = (RequestTimedOut, RequestTooLarge, TooManyConnections, web.HTTPRequestEntityTooLarge)


def _error_response(status: int, error: dict[str, str], page_text: bool = False) -> web.Response:
    """An error answer; one quoting what a web page wrote names the field, as other answers do."""
    return json_response(
        {"error": error, "untrusted": ["error.message"]} if page_text else {"error": error}, status=status
    )


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        runtime = request.app[RUNTIME]
        _check_request(request, runtime, request.app[CONNECTIONS])
        response = await _within_body_time(request, lambda: handler(request), runtime.settings.limits.body_timeout)
    except Exception as exc:  # noqa: BLE001 - one bad request must not take the broker down
        response = _error_answer(request, exc)
    if request.path == "/" and not isinstance(response, web.WebSocketResponse):
        # An upgrade refused (or a probe's plain GET) leaves the links' bounds: kept alive, its
        # connection would be in no count at all.
        response.force_close()
    return response


async def _within_body_time(
    request: web.Request, answer: Callable[[], Awaitable[web.StreamResponse]], seconds: float
) -> web.StreamResponse:
    """``answer()``, cut off if the request's body has not all come within ``seconds``.

    Raises:
        RequestTimedOut: the body was still coming at the deadline; ``answer()`` was cancelled.
    """
    content = request.content
    if content.is_eof():
        # Most bodies come in the same packets as their headers: no timer for them.
        return await answer()
    deadline = asyncio.timeout(seconds)
    try:
        async with deadline:
            content.on_eof(lambda: _disarm(deadline))
            return await answer()
    except TimeoutError:
        if not deadline.expired():
            raise
        logger.debug("%s %s: its body did not come within %g s", request.method, request.path, seconds)
        raise RequestTimedOut(
            f"the request's body did not all come within {seconds:g} s of its headers: the connection is closed"
        ) from None


def _disarm(deadline: asyncio.Timeout) -> None:
    # The body may end after its handler has answered, when the deadline is left behind.
    with contextlib.suppress(RuntimeError):
        deadline.reschedule(None)


def _check_request(request: web.Request, runtime: Runtime, connections: ConnectionGate) -> None:
    """The security model's checks of a request; sets its ``CLIENT`` (a route that needs a token).

    Raises:
        BrokerError: the request is refused (the error says why).
    """
    settings = runtime.settings
    path = request.path
    headers = request.headers
    if path == "/":
        check_extension_request(request, settings.allowed_extensions, settings.token)
        # A plain GET of / (a probe, answered 426) stays among the connections without a token.
        if headers.get(hdrs.UPGRADE, "").lower() == "websocket":
            connections.link(request)
        return
    check_host(headers.get("Host"))
    origin = headers.get("Origin")
    if origin is not None and not is_allowed_origin(origin, settings.allowed_extensions, runtime.port):
        raise Forbidden(f"requests from web pages are refused (Origin {origin!r})")
    if path not in OPEN_PATHS:
        request[CLIENT] = check_bearer(headers.get("Authorization"), settings.token)
    check_no_content_coding(headers.get("Content-Encoding"))
    check_body_size(request.content_length, settings.limits.frame_limit)
    if path not in OPEN_PATHS:
        # An open path asks for no token: its connection stays among the unproven ones.
        connections.proven(request, request[CLIENT])


def _error_answer(request: web.Request, exc: Exception) -> web.Response:
    """The answer to a request whose check or handler raised ``exc``; a redirect is raised again."""
    if isinstance(exc, _CLOSING_ERRORS):
        error = (
            error_to_wire(exc) if isinstance(exc, BrokerError) else {"code": "request_too_large", "message": exc.reason}
        )
        response = _error_response(exc.status, error)
        # Then aiohttp reads on for at most Config.linger_time, dropping what comes, and closes.
        response.force_close()
        return response
    if isinstance(exc, BrokerError):
        if exc.status >= 500:
            logger.info("%s %s: %s", request.method, request.path, exc.message)
        response = _error_response(exc.status, error_to_wire(exc), exc.page_text)
        if isinstance(exc, RateLimited):
            response.headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after)))
        return response
    if isinstance(exc, web.HTTPException):
        if exc.status < 400:
            raise exc
        code = _HTTP_CODES.get(exc.status, "http_error")
        return _error_response(exc.status, {"code": code, "message": exc.reason})
    return _error_response(500, error_to_wire(exc))


def answer_tool_calls_first(app: web.Application, runner: web.BaseRunner) -> None:
    """Answer page tool calls (``POST /tabs/{tab}/tools/{tool}``) as ``runner`` serves ``app``,
    ahead of aiohttp's router; call once ``runner`` is set up, before it accepts connections.

    They are most of a busy broker's requests, and the router, its middleware chain and the
    response signal cost about as much CPU as the broker's own rules for a call. Such a request
    gets what the application would give it: the same guard, the route's own pattern and the same
    handler (:func:`broker.rest.routes.page_tool_call`), the broker's header. Anything else, and a
    request that expects ``100-continue``, goes through the application as before.
    """
    server = runner.server
    assert server is not None
    routed = server.request_handler
    pattern = _route_pattern(app, call_tool)
    hub, runtime, connections = app[HUB], app[RUNTIME], app[CONNECTIONS]
    body_timeout = runtime.settings.limits.body_timeout

    async def first(request: web.BaseRequest) -> web.StreamResponse:
        # A path with an escape goes through the router, which decodes it as it always has.
        if request.method == "POST" and "%" not in request.raw_path and hdrs.EXPECT not in request.headers:
            found = pattern.fullmatch(request.path)
            if found is not None:
                assert isinstance(request, web.Request)
                try:
                    _check_request(request, runtime, connections)
                    tab, tool = found.group(1, 2)
                    response = await _within_body_time(
                        request, lambda: page_tool_call(request, hub, tab, tool), body_timeout
                    )
                except Exception as exc:  # noqa: BLE001 - as the guard
                    response = _error_answer(request, exc)
                response.headers[BROKER_HEADER] = VERSION
                return response
        return await routed(request)

    server.request_handler = first


def _route_pattern(app: web.Application, handler: Handler) -> re.Pattern[str]:
    """The pattern aiohttp's router matches for ``handler``'s one dynamic route."""
    for route in app.router.routes():
        if route.handler is handler:
            pattern = route.resource.get_info().get("pattern") if route.resource else None
            assert isinstance(pattern, re.Pattern)
            return pattern
    raise LookupError(f"no route for {handler.__name__}")


def check_body_size(declared: int | None, limit: int) -> None:
    """Raises: RequestTooLarge, for a body whose ``Content-Length`` is over ``limit`` bytes.

    Refused before a byte of it is read, on every route: waiting for such a body would only hold
    the connection (and a body sent without a length is still cut off once past the limit).
    """
    if declared is not None and declared > limit:
        raise RequestTooLarge(
            f"the request's body of {declared} bytes is over the limit of {limit} bytes; it is not read,"
            " and the connection is closed"
        )


def check_no_content_coding(coding: str | None) -> None:
    """Raises: UnsupportedEncoding, for a body sent compressed (or in any coding but identity).

    Bodies come over loopback, where compression buys nothing: the broker reads them as sent
    (``auto_decompress`` off), so a body that only claims a coding, one in a coding aiohttp cannot
    read and one that would inflate past the size limit are all refused alike, before reading.
    """
    if coding is not None and coding.strip().lower() not in ("", "identity"):
        raise UnsupportedEncoding(
            f"request bodies are taken uncompressed: drop Content-Encoding: {coding[:40]} and send the body as is"
        )


def make_app(runtime: Runtime) -> web.Application:
    settings = runtime.settings
    hub = Hub(settings.limits)
    # A connection must bring a whole request within header_timeout of opening or of its last
    # answer, or it is closed: a peer trickling header lines cannot hold it open.
    app = web.Application(
        middlewares=[guard],
        client_max_size=settings.limits.frame_limit,
        handler_args={
            "keepalive_timeout": settings.limits.header_timeout,
            "lingering_time": settings.limits.linger_time,
            "auto_decompress": False,
        },
    )
    app[HUB] = hub
    app[RUNTIME] = runtime
    limits = settings.limits
    app[CONNECTIONS] = ConnectionGate(
        connection_caps(limits, runtime.open_files), limits.max_unproven_links, limits.link_proof_timeout
    )

    async def identify(request: web.Request, response: web.StreamResponse) -> None:
        response.headers[BROKER_HEADER] = VERSION

    app.on_response_prepare.append(identify)

    async def websocket(request: web.Request) -> web.StreamResponse:
        return await extension_link(request, hub, runtime)

    app.router.add_get("/", websocket)
    setup_rest(app)
    setup_auth_routes(app)
    setup_mcp(app, hub)

    async def going_away(app: web.Application) -> None:
        await hub.close_all_links("the broker is shutting down")
        hub.stop()

    app.on_shutdown.append(going_away)
    return app


def gate_connections(app: web.Application, runner: web.BaseRunner) -> None:
    """Bound ``app``'s connections that show no token (:mod:`broker.daemon.connections`) as ``runner``
    serves it; call once ``runner`` is set up, before it accepts connections."""
    assert runner.server is not None
    app[CONNECTIONS].watch(runner.server)


def bind_socket(port: int | None) -> socket.socket:
    """Bind 127.0.0.1: ``port`` when given (0 = any), else the first free in 8765-8785, else any.

    Raises:
        OSError: the given port is taken.
    """
    candidates = [port] if port is not None else [*PORT_RANGE, 0]
    last_error: OSError | None = None
    for candidate in candidates:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", candidate))
        except OSError as exc:
            sock.close()
            last_error = exc
            continue
        sock.listen(128)
        sock.setblocking(False)
        return sock
    assert last_error is not None
    raise last_error


def _raise_open_file_limit(runtime: Runtime) -> None:
    """Raise the process's limit of open files toward what the connection caps want, and keep it."""
    wanted = descriptors_wanted(runtime.settings.limits)
    before, after = raise_open_file_limit(wanted)
    runtime.open_files = after
    if after != before:
        logger.info("limit of open files raised from %d to %d", before, after)
    if after < wanted:
        logger.warning(
            "the limit of open files is %d, below the %d the connection caps want: they are lowered to fit"
            " (raise the hard limit: ulimit -Hn, or LimitNOFILE= in a systemd unit)",
            after,
            wanted,
        )


async def serve(
    runtime: Runtime, port: int | None, discovery_dir: Path, announce: Callable[[str], None], pair: bool = False
) -> None:
    """Run a broker until SIGINT, SIGTERM or ``POST /shutdown``; the discovery file goes with it.

    ``pair`` (a first run, whose token is new): a pairing code is issued and announced as well.
    """
    sock = bind_socket(port)
    runtime.port = sock.getsockname()[1]
    _raise_open_file_limit(runtime)
    app = make_app(runtime)
    caps = app[CONNECTIONS].caps
    logger.info(
        "limit of open files %d; open connections at most: %d without a token, %d of the broker's token,"
        " %d of client tokens (%d each)",
        caps.descriptors,
        caps.unproven,
        caps.owner,
        caps.clients,
        caps.per_client,
    )
    # A REST caller that hangs up has its handler cancelled, and so its call called off in the page.
    runner = web.AppRunner(app, access_log=None, handle_signals=False, handler_cancellation=True)
    await runner.setup()
    gate_connections(app, runner)
    answer_tool_calls_first(app, runner)
    site = web.SockSite(runner, sock, shutdown_timeout=2.0)
    await site.start()
    # Everything loaded so far lives as long as the process: keep it out of every collection, or
    # each full collection walks the MCP SDK's hundred thousand objects and stalls all calls. No
    # collection first: the imports leave some 250 unreachable objects, and one costs 40-60 ms of
    # the start.
    gc.freeze()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, runtime.request_stop)
    path = discovery.publish(discovery_dir, runtime.discovery_fields())
    try:
        announce(f"browser-mcp broker {VERSION} listening on http://127.0.0.1:{runtime.port} (discovery file {path})")
        if pair:
            issued = issue_code(runtime)
            announce(
                "A browser extension without the native host must be paired with this broker once.\n"
                + pairing_text(runtime.port, issued["code"], issued["expiresIn"])
                + "\nLater: browser-mcp pair"
            )
        await runtime.stop_requested.wait()
        logger.info("stopping")
    finally:
        discovery.remove(path)
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        await runner.cleanup()
