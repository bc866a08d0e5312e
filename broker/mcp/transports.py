"""MCP over HTTP on the broker's port: Streamable HTTP at ``/mcp`` and the stdio tunnel.

``/mcp`` serves both protocol eras through the SDK's ASGI handlers (:mod:`broker.mcp.asgi`), routed as
the SDK routes them, by the ``MCP-Protocol-Version`` header:

- 2026-07-28 requests are stateless; one of two SDK session managers serves each one (JSON-only
  where no notification can come, see ``_may_stream``), and
  :class:`~broker.mcp.server.McpSurface` recognises the client by its token or name.
- 2025-11-25 sessions are served by :class:`LegacySessions`, a small manager built from the SDK's
  public pieces instead of its stock one, because the broker must know when a session ends
  (DELETE, idle timeout, or a client that vanished: its GET stream closed and was not reopened
  within ``get_grace``) to end the broker session and withdraw its calls, and because the stock
  manager would advertise ``listChanged: false``.

Every ``tools/list`` answer (both eras, and the tunnel below) carries a placeholder that is
swapped for the session's ready JSON in the bytes sent
(:meth:`~broker.mcp.server.McpSurface.splice_tool_lists`).

``/mcp/stream`` is a WebSocket that carries one MCP connection, one JSON-RPC message per text
frame: ``browser-mcp mcp`` relays its stdio there, so one stdio client is one broker session and
the SDK makes every protocol decision. The security guard in :mod:`broker.app` has already
checked Host, Origin and the bearer token of every request that reaches this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp_types as types
import orjson
from aiohttp import WSCloseCode, WSMsgType, web
from anyio.abc import TaskGroup, TaskStatus
from mcp.server.connection import Connection
from mcp.server.runner import serve_connection
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp.shared.message import SessionMessage
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.responses import JSONResponse

from .. import uploads
from ..core import browser_tools
from ..core.errors import InvalidRequest, TooManySessions
from ..core.sessions import SessionKey, SessionKind
from ..daemon.hub import Hub
from ..daemon.runtime import CLIENT
from .asgi import Message, Scope, serve_asgi
from .roots import WORKDIR
from .server import CONNECTION_KEY, LIST_PLACEHOLDER, REQUEST_CAPS, REQUEST_CLIENT, McpSurface

__all__ = ["LegacySessions", "McpEndpoint", "RunningMcp"]

logger = logging.getLogger(__name__)
LIST_PLACEHOLDER_BYTES = LIST_PLACEHOLDER.encode()


def legacy_key(session_id: str) -> str:
    return str(SessionKey(SessionKind.MCP_HTTP, session_id))


class LegacySessions:
    """2025-11-25 Streamable HTTP sessions, an ASGI application; each session is a broker session."""

    def __init__(self, surface: McpSurface, idle_timeout: float = 1800.0, get_grace: float = 1.0) -> None:
        self.surface = surface
        self.idle_timeout = idle_timeout
        self.get_grace = get_grace
        self.transports: dict[str, StreamableHTTPServerTransport] = {}
        # The client token's name that opened each session (None: the broker's own token).
        self.credentials: dict[str, str | None] = {}
        self.event_streams: dict[str, int] = {}
        self.event_streams_changed = asyncio.Condition()
        self._task_group: TaskGroup | None = None

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        async with anyio.create_task_group() as task_group:
            self._task_group = task_group
            try:
                yield
            finally:
                task_group.cancel_scope.cancel()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        header = MCP_SESSION_ID_HEADER.encode()
        session_id = next((v.decode("latin-1") for k, v in scope["headers"] if k == header), None)
        if session_id is None:
            await self._open(scope, receive, send)
            return
        transport = self.transports.get(session_id)
        if transport is None:
            await _jsonrpc_error(404, "Session not found")(scope, receive, send)
            return
        if REQUEST_CLIENT.get() != self.credentials.get(session_id):
            # A session is bound to the token that opened it: no other may call, listen or DELETE.
            message = "this Mcp-Session-Id was opened with another credential; use the token that opened it"
            await _jsonrpc_error(403, message)(scope, receive, send)
            return
        if scope["method"] != "GET":
            await transport.handle_request(scope, receive, send)
            return
        # The standalone GET stream is an idle client's only sign of life: when it closes and is
        # not reopened soon, the client has gone without a DELETE.
        opened = False

        async def watch(message: Message) -> None:
            nonlocal opened
            await send(message)
            if message["type"] == "http.response.start" and message["status"] == 200:
                # Counted once its headers are out: from here on a notification reaches the client.
                opened = True
                async with self.event_streams_changed:
                    self.event_streams[session_id] = self.event_streams.get(session_id, 0) + 1
                    self.event_streams_changed.notify_all()

        try:
            await transport.handle_request(scope, receive, watch)
        finally:
            if opened:
                self.event_streams[session_id] -= 1
                if self.event_streams[session_id] == 0 and self._task_group is not None:
                    self._task_group.start_soon(self._end_if_gone, session_id)

    async def end_all(self) -> None:
        """End every session: its event streams end with their last chunk, not cut off."""
        for transport in list(self.transports.values()):
            await transport.terminate()

    async def _open(self, scope: Scope, receive: Any, send: Any) -> None:
        session_id = uuid.uuid4().hex
        try:
            # Counted as one of its credential's sessions from here, before its first request.
            self.surface.hub.hold_session(legacy_key(session_id), REQUEST_CLIENT.get())
        except TooManySessions as exc:
            await _jsonrpc_error(429, f"{exc.code}: {exc.message}")(scope, receive, send)
            return
        # Plain JSON answers: the SDK client refuses a server-sent event over 1 MiB, and a tool list
        # of many tabs is larger; notifications travel on the session's GET stream either way.
        transport = StreamableHTTPServerTransport(
            mcp_session_id=session_id, idle_timeout=self.idle_timeout, is_json_response_enabled=True
        )
        self.transports[session_id] = transport
        self.credentials[session_id] = REQUEST_CLIENT.get()
        assert self._task_group is not None
        await self._task_group.start(self._serve, transport)
        statuses: list[int] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                statuses.append(message["status"])
            await send(message)

        await transport.handle_request(scope, receive, watch)
        if not statuses or statuses[0] >= 400:
            await transport.terminate()  # not an initialize that succeeded: nothing was opened

    async def _end_if_gone(self, session_id: str) -> None:
        await anyio.sleep(self.get_grace)
        transport = self.transports.get(session_id)
        if transport is not None and self.event_streams.get(session_id) == 0:
            logger.info("MCP session %s: its event stream closed and was not reopened", session_id)
            await transport.terminate()

    async def _serve(self, transport: StreamableHTTPServerTransport, *, task_status: TaskStatus[None]) -> None:
        session_id = transport.mcp_session_id
        assert session_id is not None
        try:
            async with transport.connect() as (read_stream, write_stream):
                dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(
                    read_stream, write_stream, inline_methods=frozenset({"initialize"})
                )
                connection = Connection.for_loop(dispatcher, session_id=session_id)
                task_status.started()
                with transport.idle_scope or anyio.CancelScope():
                    await serve_connection(
                        self.surface.server,
                        dispatcher,
                        connection=connection,
                        lifespan_state={},
                        init_options=self.surface.init_options,
                    )
        finally:
            self.transports.pop(session_id, None)
            self.credentials.pop(session_id, None)
            self.event_streams.pop(session_id, None)
            with anyio.CancelScope(shield=True):
                await self.surface.end(legacy_key(session_id), "MCP session closed")
                await transport.terminate()
            self.surface.hub.release_session(legacy_key(session_id))


def asked_caps(request: web.Request) -> frozenset[str]:
    """The capability groups the client asked for with the endpoint's ``caps`` query parameter.

    Raises:
        InvalidRequest: a name that is not a group.
    """
    return browser_tools.capabilities(",".join(request.query.getall("caps", [])))


def _jsonrpc_error(status: int, message: str) -> JSONResponse:
    return JSONResponse(
        {"jsonrpc": "2.0", "id": None, "error": {"code": types.INVALID_REQUEST, "message": message}}, status
    )


def _may_stream(body: bytes, whole: bool) -> bool:
    """Whether a 2026-07-28 request may need an event stream for its answer.

    Only a request with a ``progressToken`` hears notifications before its answer (progress while
    the person decides), and ``subscriptions/listen`` is a stream; any other answer is one JSON
    body, which the SDK writes more cheaply when it knows that from the start. A body in several
    chunks, or one that is not a JSON object, goes the streaming way, which answers anything.
    """
    if not whole:
        return True
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return True
    method = message.get("method") if isinstance(message, dict) else None
    if not isinstance(method, str) or method not in _ONE_BODY_METHODS:
        return True
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return not isinstance(meta, dict) or "progressToken" in meta


_ONE_BODY_METHODS = frozenset({"tools/call", "tools/list"})


class McpEndpoint:
    def __init__(self, surface: McpSurface) -> None:
        self.surface = surface
        self.legacy = LegacySessions(surface)
        # Two of the SDK's stateless managers: one that may stream (progress while the person
        # decides; it still answers with one JSON body unless a notification comes first), and a
        # JSON-only one for the requests that cannot hear one (see _may_stream).
        self.modern = StreamableHTTPSessionManager(app=surface.server, stateless=True, json_response=False)
        self.modern_json = StreamableHTTPSessionManager(app=surface.server, stateless=True, json_response=True)
        self.tunnels: set[web.WebSocketResponse] = set()

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        async with self.modern.run(), self.modern_json.run(), self.legacy.run():
            yield

    async def _modern(self, scope: Scope, receive: Any, send: Any) -> None:
        """Hand a 2026-07-28 request to the manager its first body chunk calls for."""
        first: Message = await receive()
        whole = first["type"] == "http.request" and not first.get("more_body", False)
        manager = self.modern if _may_stream(first.get("body", b""), whole) else self.modern_json
        replayed = False

        async def receive_again() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return first
            message: Message = await receive()
            return message

        await manager.handle_request(scope, receive_again, send)

    async def http(self, request: web.Request) -> web.StreamResponse:
        REQUEST_CLIENT.set(request.get(CLIENT))
        try:
            REQUEST_CAPS.set(asked_caps(request))
        except InvalidRequest as exc:
            error = {"code": types.INVALID_PARAMS, "message": exc.message}
            return web.json_response({"jsonrpc": "2.0", "id": None, "error": error}, status=400)
        version = request.headers.get("MCP-Protocol-Version")
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            CONNECTION_KEY.set(None)
            return await serve_asgi(self._modern, request, self.surface.hub.frame_limit, self.surface.splice_tool_lists)
        session_id = request.headers.get(MCP_SESSION_ID_HEADER)
        CONNECTION_KEY.set(legacy_key(session_id) if session_id else None)
        # Only a POST's answer may hold a tool list (one JSON body); the GET stream's headers must
        # go out at once, not wait for a first event to be looked at.
        rewrite = self.surface.splice_tool_lists if request.method == "POST" else None
        return await serve_asgi(self.legacy, request, self.surface.hub.frame_limit, rewrite)

    async def tunnel(self, request: web.Request) -> web.StreamResponse:
        """One WebSocket = one MCP connection (either era; the client's first request decides).

        It counts as one of its credential's sessions from the upgrade on (refused with 429
        ``too_many_sessions`` before it, past the limit). It is closed when it brings no MCP
        message within the header time of opening, and when its peer stops answering the
        broker's WebSocket pings (sent after the link ping interval without a frame): a vanished
        client does not hold its slot. A client that stays quiet but answers pings keeps its
        tunnel and its session, as a person's idle AI client must; the quota bounds how many.

        Raises:
            TooManySessions: the credential holds as many sessions as it may.
            InvalidRequest: its ``caps`` names no capability group.
        """
        hub = self.surface.hub
        REQUEST_CAPS.set(asked_caps(request))
        key = McpSurface.new_connection_key()
        hub.hold_session(key, request.get(CLIENT))
        try:
            return await self._tunnel(request, key, hub.config.header_timeout, hub.config.ping_interval)
        finally:
            hub.release_session(key)

    async def _tunnel(self, request: web.Request, key: str, first_within: float, ping: float) -> web.StreamResponse:
        ws = web.WebSocketResponse(max_msg_size=64 * 1024 * 1024, compress=False, heartbeat=ping)
        await ws.prepare(request)
        CONNECTION_KEY.set(key)
        REQUEST_CLIENT.set(request.get(CLIENT))
        WORKDIR.set(uploads.workdir_of(request.headers.get(uploads.WORKDIR_HEADER)))
        inbound_send, inbound = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        outbound, outbound_receive = anyio.create_memory_object_stream[SessionMessage](16)

        async def pump_in() -> None:
            async with inbound_send:
                waited = False
                while True:
                    try:
                        # A deadline, not a receive timeout: pings do not put it off.
                        async with asyncio.timeout(None if waited else first_within):
                            frame = await ws.receive()
                    except TimeoutError:
                        why = f"no MCP message within {first_within:g} s of opening"
                        logger.info("MCP tunnel %s: %s, closed", key, why)
                        await ws.close(code=WSCloseCode.POLICY_VIOLATION, message=why.encode())
                        break
                    waited = True
                    if frame.type is not WSMsgType.TEXT:
                        break
                    try:
                        message = types.jsonrpc_message_adapter.validate_json(frame.data, by_name=False)
                    except ValueError as exc:  # pydantic's ValidationError: the SDK answers it
                        await inbound_send.send(exc)
                    else:
                        await inbound_send.send(SessionMessage(message))

        async def pump_out() -> None:
            async with outbound_receive:
                async for session_message in outbound_receive:
                    data = session_message.message.model_dump_json(by_alias=True, exclude_unset=True).encode()
                    if LIST_PLACEHOLDER_BYTES in data:
                        data = self.surface.splice_tool_lists(data)
                    try:
                        await ws.send_frame(data, WSMsgType.TEXT)
                    except ConnectionError:
                        return

        self.tunnels.add(ws)
        try:
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(pump_out)
                task_group.start_soon(pump_in)
                await self.surface.server.run(inbound, outbound, self.surface.init_options)
                task_group.cancel_scope.cancel()
        finally:
            self.tunnels.discard(ws)
            await self.surface.end(key, "stdio client disconnected")
            await ws.close()
        return ws


def quiet_sse_shutdown_watcher() -> None:
    """Keep sse_starlette's shutdown watcher from starting on this thread's event loop.

    Every event stream the SDK serves is an sse_starlette ``EventSourceResponse``, and the first
    one starts a task that looks at uvicorn's exit flag twice a second for the life of the loop:
    an idle broker would wake 120 times a minute once any HTTP client had come and gone. The
    broker does not run under uvicorn, so that flag never changes here; it ends its event streams
    itself when it shuts down (:meth:`RunningMcp.going_away`).

    sse_starlette has no public switch for the watcher, so this marks it started in the library's
    per-thread state (3.x: ``_get_shutdown_state().watcher_started``). Where that detail is not
    found, as in another version, nothing is changed and the watcher runs as before.
    """
    try:
        from sse_starlette import sse  # noqa: PLC0415 - only the MCP surface needs it

        state = sse._get_shutdown_state()
    except (ImportError, AttributeError):
        return
    if isinstance(getattr(state, "watcher_started", None), bool) and hasattr(sse, "_shutdown_watcher"):
        state.watcher_started = True


class RunningMcp:
    """The MCP surface and its HTTP endpoint, running until :meth:`stop`."""

    def __init__(self, hub: Hub) -> None:
        self.surface = McpSurface(hub)
        self.endpoint = McpEndpoint(self.surface)
        self._stop = asyncio.Event()
        self._holder: asyncio.Task[None] | None = None

    async def start(self) -> None:
        # anyio task groups must be entered and left by one task, and aiohttp handlers and
        # cleanups run in tasks of their own: a task of its own holds them.
        ready = asyncio.Event()
        quiet_sse_shutdown_watcher()

        async def hold() -> None:
            async with self.endpoint.run():
                ready.set()
                await self._stop.wait()

        self._holder = asyncio.create_task(hold())
        await ready.wait()

    async def going_away(self) -> None:
        for ws in list(self.endpoint.tunnels):
            await ws.close(code=WSCloseCode.GOING_AWAY, message=b"the broker is shutting down")
        # Event streams are ended here, each with its last chunk: nothing else would end them
        # before aiohttp cancels the handlers still running (see quiet_sse_shutdown_watcher).
        await self.surface.end_all()
        await self.endpoint.legacy.end_all()

    async def stop(self) -> None:
        self._stop.set()
        if self._holder is not None:
            await self._holder
