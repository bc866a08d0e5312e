"""A scripted fake of the browser extension, speaking the real protocol over a real WebSocket.

By default it behaves like a well-mannered extension: it answers ``connect`` with a snapshot,
``callTool`` by running the tab's tool (a Python callable), ``openTab`` with ``tabCreated``,
``closeTab`` with ``tabClosed``, ``discoverTools`` with ``toolsDiscovered``, ``browserAction``
(when given ``actions``) with a result naming what arrived, and ``ping`` with ``pong``. Tests
replace :attr:`FakeExtension.on_call` (or ``on_action``) to answer late, twice, malformed, never,
or to drop the link, and read everything the broker sent from :attr:`FakeExtension.inbox`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from broker.core.security import PROJECT_EXTENSION_ID

EXTENSION_ORIGIN = f"chrome-extension://{PROJECT_EXTENSION_ID}"

Json = dict[str, Any]
ToolFunction = Callable[[Json], Any]


class PageError(Exception):
    """Raised by a fake page tool: the fake extension reports it as ``{code, message}``."""

    def __init__(self, message: str, code: str = "page_error") -> None:
        super().__init__(message)
        self.code = code


def tool(name: str, description: str = "", read_only: bool = False) -> Json:
    spec: Json = {
        "name": name,
        "description": description or f"the {name} tool",
        "inputSchema": {"type": "object", "properties": {}},
    }
    if read_only:
        spec["annotations"] = {"readOnlyHint": True}
    return spec


class FakeTab:
    def __init__(self, tab_id: int, url: str, title: str = "", tools: dict[str, ToolFunction] | None = None):
        self.id = tab_id
        self.url = url
        self.title = title or url
        self.functions: dict[str, ToolFunction] = dict(tools or {})
        self.push_tools = True
        # As the original protocol's examples do: announce "tools": [] and wait to be asked.
        self.announce_empty = False

    def info(self) -> Json:
        info: Json = {"id": self.id, "title": self.title, "url": self.url}
        if self.announce_empty:
            info["tools"] = []
        elif self.push_tools:
            info["tools"] = [tool(name) for name in self.functions]
        return info


class FakeExtension:
    def __init__(
        self,
        tabs: list[FakeTab] | None = None,
        instance_id: str | None = None,
        browser_name: str = "FakeChrome",
        actions: list[str] | None = None,
    ) -> None:
        self.tabs: dict[int, FakeTab] = {t.id: t for t in tabs or []}
        self.instance_id = instance_id
        self.browser_name = browser_name
        self.inbox: list[Json] = []
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.closed = asyncio.Event()
        self.close_code: int | None = None
        self.on_call: Callable[[Json], Awaitable[None]] = self.answer_call
        self.answer_open_with = "tabCreated"
        self.reply_to_discover = True
        self.answer_pings = True
        # The built-in browser actions it claims to carry out, and how it answers each.
        self.actions = actions
        self.on_action: Callable[[Json], Awaitable[None]] = self.answer_action
        self._arrived = asyncio.Condition()
        self._reader: asyncio.Task[None] | None = None
        self._tab_ids = itertools.count(1000)
        self._tasks: set[asyncio.Task[None]] = set()

    # Connecting

    async def connect(
        self, session: aiohttp.ClientSession, url: str, headers: dict[str, str] | None = None, snapshot: bool = True
    ) -> None:
        self.ws = await session.ws_connect(url, headers={"Origin": EXTENSION_ORIGIN} if headers is None else headers)
        self._reader = asyncio.create_task(self._read())
        await self.wait_for("connect")
        if snapshot:
            await self.send_snapshot()

    async def send_snapshot(self) -> None:
        browser: Json = {"name": self.browser_name, "version": "1.0"}
        if self.instance_id is not None:
            browser["instanceId"] = self.instance_id
        snapshot: Json = {"type": "connected", "browser": browser, "tabs": [t.info() for t in self.tabs.values()]}
        if self.actions is not None:
            snapshot["actions"] = self.actions
        await self.send(snapshot)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            await self._reader
        for task in list(self._tasks):
            task.cancel()

    # Sending

    async def send(self, message: Json) -> None:
        assert self.ws is not None
        await self.ws.send_str(json.dumps(message))

    async def send_raw(self, data: str | bytes) -> None:
        assert self.ws is not None
        if isinstance(data, bytes):
            await self.ws.send_bytes(data)
        else:
            await self.ws.send_str(data)

    async def add_tab(self, tab: FakeTab, request_id: str | None = None) -> None:
        self.tabs[tab.id] = tab
        message: Json = {"type": "tabCreated", "tab": tab.info()}
        if request_id is not None:
            message["requestId"] = request_id
        await self.send(message)

    async def remove_tab(self, tab_id: int) -> None:
        del self.tabs[tab_id]
        await self.send({"type": "tabClosed", "tabId": tab_id})

    async def set_tools(self, tab_id: int, tools: dict[str, ToolFunction]) -> None:
        self.tabs[tab_id].functions = dict(tools)
        await self.send({"type": "toolsChanged", "tabId": tab_id, "tools": [tool(n) for n in tools]})

    # Receiving

    async def wait_for(self, kind: str, predicate: Callable[[Json], bool] = lambda m: True, start: int = 0) -> Json:
        """The first message of ``kind`` (from ``start`` in the inbox) that ``predicate`` accepts."""
        async with asyncio.timeout(5), self._arrived:
            while True:
                for message in self.inbox[start:]:
                    if message.get("type") == kind and predicate(message):
                        return message
                if self.closed.is_set():
                    raise AssertionError(f"the link closed before a {kind!r} message came")
                await self._arrived.wait()

    def received(self, kind: str) -> list[Json]:
        return [m for m in self.inbox if m.get("type") == kind]

    async def _read(self) -> None:
        assert self.ws is not None
        async for frame in self.ws:
            if frame.type is not aiohttp.WSMsgType.TEXT:
                continue
            message = json.loads(frame.data)
            async with self._arrived:
                self.inbox.append(message)
                self._arrived.notify_all()
            self._spawn(self._dispatch(message))
        self.close_code = self.ws.close_code
        self.closed.set()
        async with self._arrived:
            self._arrived.notify_all()

    def _spawn(self, coroutine: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _dispatch(self, message: Json) -> None:
        kind = message["type"]
        if kind == "callTool":
            await self.on_call(message)
        elif kind == "browserAction":
            await self.on_action(message)
        elif kind == "ping" and self.answer_pings:
            await self.send({"type": "pong"})
        elif kind == "openTab":
            await self._open_tab(message)
        elif kind == "closeTab":
            if message["tabId"] in self.tabs:
                await self.remove_tab(message["tabId"])
        elif kind == "discoverTools" and self.reply_to_discover:
            tab = self.tabs[message["tabId"]]
            tools = [tool(n) for n in tab.functions]
            await self.send({"type": "toolsDiscovered", "callId": message["callId"], "tabId": tab.id, "tools": tools})

    async def _open_tab(self, message: Json) -> None:
        if self.answer_open_with == "tabFocused":
            existing = next(t for t in self.tabs.values() if t.url == message["url"])
            await self.send({"type": "tabFocused", "tabId": existing.id, "requestId": message["requestId"]})
            return
        await self.add_tab(FakeTab(next(self._tab_ids), message["url"]), request_id=message["requestId"])

    async def answer_call(self, message: Json) -> None:
        """Run the tab's tool and send its result, or its error as ``{code, message}``."""
        await self.send(self.outcome(message))

    def outcome(self, message: Json) -> Json:
        reply: Json = {"type": "toolResult", "callId": message["callId"]}
        tab = self.tabs.get(message["tabId"])
        function = tab.functions.get(message["toolName"]) if tab else None
        if function is None:
            reply["error"] = {"code": "tool_not_found", "message": f"no tool {message['toolName']}"}
            return reply
        try:
            reply["result"] = function(message["args"])
            reply["error"] = None
        except PageError as exc:
            reply["error"] = {"code": exc.code, "message": str(exc)}
        return reply

    async def answer_action(self, message: Json) -> None:
        await self.send({"type": "toolResult", "callId": message["callId"], "result": action_result(message)})


# A 1x1 red PNG: what the fake sends for take_screenshot.
TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def action_result(message: Json) -> Json:
    """An MCP result naming the action, its tab and its arguments, so tests see what arrived."""
    text = f"{message['action']} in tab {message['tabId']} with {json.dumps(message['args'], sort_keys=True)}"
    content: list[Json] = [{"type": "text", "text": text}]
    if message["action"] == "take_screenshot":
        content.append({"type": "image", "data": TINY_PNG, "mimeType": "image/png"})
    return {"content": content}
