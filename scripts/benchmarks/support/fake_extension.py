"""The lean fake extension: it answers ``connect`` with a snapshot and every ``callTool`` by echoing.

It connects to a server's extension link (the broker's or a baseline's) with the project's
extension ``Origin``, shares the bench's process and event loop with the load generator, and its
CPU is never counted as the server's. Also the snapshot of a browser of many tabs of page tools
(:func:`big_snapshot`), which the MCP suite's long tools/list and the daemon suite's claims connect with.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import aiohttp
import orjson

from broker.core.security import PROJECT_EXTENSION_ID

ORIGIN = f"chrome-extension://{PROJECT_EXTENSION_ID}"
SNAPSHOT = {
    "type": "connected",
    "browser": {"name": "Bench", "version": "1"},
    "tabs": [
        {
            "id": 1,
            "title": "t",
            "url": "http://x/",
            "tools": [{"name": "echo", "description": "echo", "inputSchema": {"type": "object"}}],
        }
    ],
}


class FakeExtension:
    """Answers ``connect`` once with the snapshot and every ``callTool`` by echoing its args (or with
    what ``answer`` makes of them)."""

    def __init__(self, snapshot: dict[str, Any] = SNAPSHOT, answer: Callable[[Any], Any] | None = None) -> None:
        self.snapshot = snapshot
        self.answer = answer
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.task: asyncio.Task[None] | None = None

    async def connect(self, session: aiohttp.ClientSession, url: str) -> None:
        self.ws = await session.ws_connect(url, headers={"Origin": ORIGIN}, max_msg_size=0, autoping=True)
        self.task = asyncio.create_task(self._serve(self.ws))

    async def _serve(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        snapshot_sent = False
        async for frame in ws:
            if frame.type is not aiohttp.WSMsgType.TEXT and frame.type is not aiohttp.WSMsgType.BINARY:
                continue
            message = orjson.loads(frame.data)
            kind = message.get("type")
            if kind == "callTool":
                result = message["args"] if self.answer is None else self.answer(message["args"])
                reply = {"type": "toolResult", "callId": message["callId"], "result": result, "error": None}
                await ws.send_frame(orjson.dumps(reply), aiohttp.WSMsgType.TEXT)
            elif kind == "connect" and not snapshot_sent:
                snapshot_sent = True
                await ws.send_frame(orjson.dumps(self.snapshot), aiohttp.WSMsgType.TEXT)
            elif kind == "ping":
                await ws.send_frame(orjson.dumps({"type": "pong"}), aiohttp.WSMsgType.TEXT)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self.task is not None:
            await self.task


_VERBS = ("search", "get", "list", "add", "remove", "update", "open", "show", "filter", "sort")
_NOUNS = ("products", "cart", "orders", "reviews", "account")


def big_snapshot(tabs: int, tools: int) -> dict[str, Any]:
    """A browser with ``tabs`` tabs of ``tools`` page tools each, with small realistic schemas."""

    def tool(i: int) -> dict[str, Any]:
        verb, noun = _VERBS[i % len(_VERBS)], _NOUNS[i // len(_VERBS) % len(_NOUNS)]
        spec: dict[str, Any] = {
            "name": f"{verb}_{noun}_{i}",
            "description": f"{verb.capitalize()} the {noun} on this page.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "what to look for"},
                    "limit": {"type": "integer"},
                },
                "required": ["query"],
            },
        }
        if i % 2 == 0:
            spec["annotations"] = {"readOnlyHint": True}
        return spec

    page_tools = [tool(i) for i in range(tools)]
    return {
        "type": "connected",
        "browser": {"name": "Bench", "version": "1"},
        "tabs": [
            {
                "id": t,
                "title": f"Shop page {t}",
                "url": f"https://shop{t}.example/catalog?page={t}",
                "tools": page_tools,
            }
            for t in range(1, tabs + 1)
        ],
    }
