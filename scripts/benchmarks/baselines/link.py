"""The baselines' end of the extension link: ``rest_relay.py`` and ``mcp_relay.py``.

What a competent person would write in an hour with aiohttp and the standard library's ``json``:
the extension connects to ``/`` (its ``Origin`` checked) and is sent ``{"type": "connect"}``;
a call sends ``callTool`` with a fresh ``callId`` and waits for the ``toolResult`` that carries it.

Standard library and aiohttp only, never the broker's modules: the baselines' memory and start-up
are measured. That is why the extension's id is written out here rather than imported from
``broker.core.security``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from aiohttp import WSMsgType, web

ORIGIN = "chrome-extension://mchblnnplcjofeadimfinmipflmimflp"
LIMIT = 32 * 1024 * 1024
CALL_TIMEOUT_S = 30


class Link:
    """The extension's WebSocket and the calls waiting for its answers."""

    def __init__(self) -> None:
        self.ws: web.WebSocketResponse | None = None
        self.pending: dict[str, asyncio.Future[Any]] = {}
        self.call_ids = itertools.count(1)

    async def extension(self, request: web.Request) -> web.WebSocketResponse:
        """The handler of ``GET /``: the extension's WebSocket."""
        if request.headers.get("Origin") != ORIGIN:
            raise web.HTTPForbidden(text="not the extension")
        ws = web.WebSocketResponse(max_msg_size=LIMIT)
        await ws.prepare(request)
        self.ws = ws
        await ws.send_str(json.dumps({"type": "connect"}))
        async for message in ws:
            if message.type is WSMsgType.TEXT:
                reply = json.loads(message.data)
                future = self.pending.pop(reply.get("callId"), None)
                if future is not None and not future.done():
                    future.set_result(reply)
        if self.ws is ws:
            self.ws = None
        return ws

    async def call(self, tab: int, tool: str, args: Any) -> dict[str, Any]:
        """The extension's ``toolResult`` message for this call.

        Raises ``RuntimeError`` when no extension is connected, ``TimeoutError`` after 30 s.
        """
        if self.ws is None:
            raise RuntimeError("no extension is connected")
        call_id = f"c{next(self.call_ids)}"
        future = asyncio.get_running_loop().create_future()
        self.pending[call_id] = future
        message = {"type": "callTool", "callId": call_id, "tabId": tab, "toolName": tool, "args": args}
        try:
            await self.ws.send_str(json.dumps(message))
            async with asyncio.timeout(CALL_TIMEOUT_S):
                reply: dict[str, Any] = await future
        finally:
            self.pending.pop(call_id, None)
        return reply
