"""Serve one aiohttp request with an ASGI application: how the MCP SDK's HTTP handlers run here.

The SDK's Streamable HTTP handlers are ASGI-only, and the broker is one aiohttp app on one port,
so this bridge turns an aiohttp request into ``scope``/``receive``/``send``:

- the body is streamed to ``receive()``, up to ``body_limit`` bytes: a body declared larger is
  refused with 413 before a byte of it is read, and one that grows past it while streaming is cut
  off and refused the same way; after it, ``receive()`` reports ``http.disconnect`` once the
  client's socket closes (aiohttp has no disconnect event without handler cancellation, so the
  transport is looked at after 50 ms, then less and less often, up to every second) or the
  response is complete;
- a client that hangs up before its answer has the application cancelled (aiohttp cancels the
  handler): for a 2026 client that is how a call is called off, and the SDK's JSON answers watch
  for nothing else. One that hangs up after it does not: what the application does after its
  answer still happens, such as handing on a notification the client heard ``202`` for;
- ``http.response.start`` prepares a ``StreamResponse`` at once (an SSE stream may send no body
  for a long time and the client waits for the headers); body chunks are written as they come;
- once the client has gone, further sends are dropped, as uvicorn does.

It knows nothing of MCP.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

__all__ = ["ASGIApp", "serve_asgi"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]]

_DISCONNECT_POLL = 0.05
_DISCONNECT_POLL_MAX = 1.0
logger = logging.getLogger(__name__)


def _scope(request: web.Request) -> Scope:
    transport = request.transport
    peer = transport.get_extra_info("peername") if transport else None
    own = transport.get_extra_info("sockname") if transport else None
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.raw_path.split("?", 1)[0].encode("latin-1"),
        "query_string": request.query_string.encode("latin-1"),
        "root_path": "",
        # raw_headers keeps repeated headers, which the SDK must see to refuse them.
        "headers": [(name.lower(), value) for name, value in request.raw_headers],
        "client": tuple(peer[:2]) if peer else None,
        "server": tuple(own[:2]) if own else None,
        "state": {},
    }


class _Body:
    """The request body in chunks, refused past ``limit`` bytes."""

    def __init__(self, request: web.Request, limit: int | None) -> None:
        declared = request.content_length
        if limit is not None and declared is not None and declared > limit:
            raise web.HTTPRequestEntityTooLarge(max_size=limit, actual_size=declared)
        self._content = request.content
        self._limit = limit
        self.read = 0
        self.done = False

    @property
    def too_large(self) -> bool:
        return self._limit is not None and self.read > self._limit

    async def next(self) -> Message:
        chunk = await self._content.read(65536)
        self.read += len(chunk)
        if self.too_large:
            # Cut off here: the application hears the client go, and the answer is 413.
            self.done = True
            return {"type": "http.disconnect"}
        self.done = self._content.at_eof()
        return {"type": "http.request", "body": chunk, "more_body": not self.done}

    def refuse(self) -> None:
        """Raises: web.HTTPRequestEntityTooLarge, when the body grew past the limit."""
        if self.too_large:
            assert self._limit is not None
            raise web.HTTPRequestEntityTooLarge(max_size=self._limit, actual_size=self.read)


class _Held:
    """A response's start, held until its body shows whether it comes in one piece to rewrite."""

    def __init__(self, rewrite: Callable[[bytes], bytes] | None) -> None:
        self._rewrite = rewrite
        self._start: Message | None = None
        self._streaming = False

    def messages(self, message: Message) -> list[Message]:
        """What to deliver for ``message``, in order."""
        if self._rewrite is None:
            return [message]
        if self._streaming and message["type"] == "http.response.body":
            # A stream has no length to keep: each event is rewritten as it passes.
            return [{**message, "body": self._rewrite(message.get("body", b""))}]
        if message["type"] == "http.response.start":
            self._start = message
            return []
        start, self._start = self._start, None
        if start is None or message["type"] != "http.response.body":
            return [message] if start is None else [start, message]
        if message.get("more_body", False):
            self._streaming = True
            return [start, {**message, "body": self._rewrite(message.get("body", b""))}]
        rewritten = self._rewrite(message.get("body", b""))
        length = str(len(rewritten)).encode()
        headers = [(k, length if k.lower() == b"content-length" else v) for k, v in start.get("headers", [])]
        return [{**start, "headers": headers}, {**message, "body": rewritten}]


async def _until_gone(request: web.Request, finished: asyncio.Event) -> None:
    """Return once the client's socket has closed or the response is complete."""
    poll = _DISCONNECT_POLL
    while not finished.is_set():
        transport = request.transport
        if transport is None or transport.is_closing():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(finished.wait(), poll)
        # A stream that stays open is looked at less and less often: an idle client's event
        # stream costs the broker a wake-up a second, not twenty.
        poll = min(poll * 2, _DISCONNECT_POLL_MAX)


async def _past_its_answer(running: asyncio.Future[None], answered: asyncio.Event) -> None:
    """Wait for the application; when aiohttp cancels this handler (its client hung up), cancel
    the application unless its answer was complete, in which case it runs on until cancelled
    again (the broker stopping)."""
    try:
        await asyncio.shield(running)
    except asyncio.CancelledError:
        if not answered.is_set():
            running.cancel()
            raise
        try:
            await asyncio.shield(running)
        except asyncio.CancelledError:
            running.cancel()
            raise
        except Exception:
            logger.debug("the ASGI application raised after its answer", exc_info=True)
        raise


async def serve_asgi(
    app: ASGIApp,
    request: web.Request,
    body_limit: int | None = None,
    rewrite: Callable[[bytes], bytes] | None = None,
) -> web.StreamResponse:
    """Raises: web.HTTPRequestEntityTooLarge, for a body over ``body_limit``.

    ``rewrite`` may change a response the application writes in one piece (not a stream); its
    ``Content-Length`` follows.
    """
    body = _Body(request, body_limit)
    held = _Held(rewrite)
    response: web.StreamResponse | None = None
    finished = asyncio.Event()
    answered = asyncio.Event()
    client_gone = False

    async def receive() -> Message:
        if not body.done:
            return await body.next()
        await _until_gone(request, finished)
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        for each in held.messages(message):
            await deliver(each)

    async def deliver(message: Message) -> None:
        nonlocal response, client_gone
        if body.too_large:
            return  # the application's answer to a body cut off; the client gets 413 instead
        if message["type"] == "http.response.start":
            headers = CIMultiDict(
                (name.decode("latin-1"), value.decode("latin-1")) for name, value in message.get("headers", [])
            )
            response = web.StreamResponse(status=message["status"], headers=headers)
            try:
                await response.prepare(request)
            except (ConnectionResetError, RuntimeError):
                client_gone = True
                finished.set()
            return
        if message["type"] != "http.response.body" or client_gone or response is None:
            return
        try:
            chunk = message.get("body", b"")
            if chunk:
                await response.write(chunk)
            if not message.get("more_body", False):
                await response.write_eof()
                answered.set()
                finished.set()
        except (ConnectionResetError, RuntimeError):
            client_gone = True
            finished.set()

    running = asyncio.ensure_future(app(_scope(request), receive, send))
    try:
        await _past_its_answer(running, answered)
    except Exception:
        logger.debug("the ASGI application raised", exc_info=True)
        if response is None:
            return web.Response(status=500, text="internal error")
    finally:
        finished.set()
    if response is None or not response.prepared:
        body.refuse()
    if response is None:
        return web.Response(status=500, text="no response")
    return response
