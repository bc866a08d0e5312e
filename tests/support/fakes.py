"""A scripted fake of the browser extension, speaking the real protocol over a real WebSocket.

By default it behaves like a well-mannered extension: it answers ``connect`` with a snapshot,
``callTool`` by running the tab's tool (a Python callable), ``openTab`` with ``tabCreated``,
``closeTab`` with ``tabClosed`` (or a refusal, or nothing), ``discoverTools`` with
``toolsDiscovered``, ``browserAction`` (when given ``actions``) with a result naming what arrived,
``browserRequest`` (when given ``features``) from its tabs' windows and its history and
bookmarks lists, and ``ping`` with ``pong``. Tests replace :attr:`FakeExtension.on_call` (or
``on_action``) to answer late, twice, malformed, never, or to drop the link, and read everything
the broker sent from :attr:`FakeExtension.inbox`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from yarl import URL

from broker.core import link_auth
from broker.core.security import PROJECT_EXTENSION_ID
from broker.version import VERSION

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
    def __init__(
        self,
        tab_id: int,
        url: str,
        title: str = "",
        tools: dict[str, ToolFunction] | None = None,
        window_id: int | None = None,
        pinned: bool = False,
    ):
        self.id = tab_id
        self.url = url
        self.title = title or url
        self.functions: dict[str, ToolFunction] = dict(tools or {})
        # The page's snapshot, sent as a toolResult's `page` after the actions that show the page.
        self.snapshot: str | None = None
        self.document = "d1"
        self.push_tools = True
        # As the original protocol's examples do: announce "tools": [] and wait to be asked.
        self.announce_empty = False
        # Where it is, sent only when set (as an extension that knows windows does).
        self.window_id = window_id
        self.index = 0
        self.pinned = pinned

    def info(self) -> Json:
        info: Json = {"id": self.id, "title": self.title, "url": self.url}
        if self.window_id is not None:
            info.update(windowId=self.window_id, index=self.index, pinned=self.pinned)
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
        features: list[str] | None = None,
        extension_version: str | None = VERSION,
        driver: Json | None = None,
    ) -> None:
        self.tabs: dict[int, FakeTab] = {}
        for tab in tabs or []:
            self._place(tab)
        self.instance_id = instance_id
        self.browser_name = browser_name
        # The page driver it names in ``connected`` ({name, actions}); None: it names none.
        self.driver = driver
        # What it says its own version is (None: nothing, as extensions from before that field).
        self.extension_version = extension_version
        self.inbox: list[Json] = []
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.closed = asyncio.Event()
        self.close_code: int | None = None
        self.on_call: Callable[[Json], Awaitable[None]] = self.answer_call
        # "tabCreated"; "tabFocused" (an existing tab of that address); or, as the original protocol's
        # extensions answer `focus: true`, "newTabFocused" (tabCreated without requestId, then
        # tabFocused) and "unannouncedTabFocused" (tabFocused alone).
        self.answer_open_with = "tabCreated"
        self.reply_to_discover = True
        # As the original protocol's examples do: answer each session's `connect` with a whole
        # snapshot, every tab's tools as it announces them (for `announce_empty` tabs, "tools": []).
        self.snapshot_per_session = False
        # closeTab: answered with tabClosed {tabId, requestId}; with ``refuse_close`` (code, message)
        # refused with error {code, message, requestId}; with ``answer_close`` False, never answered.
        self.refuse_close: tuple[str, str] | None = None
        self.answer_close = True
        self.answer_pings = True
        # With "claims" in its features: a claim's answer, refused for these tabs (id -> message).
        self.answer_claims = True
        self.held_elsewhere: dict[int, str] = {}
        # The built-in browser actions it claims to carry out, and how it answers each.
        self.actions = actions
        self.on_action: Callable[[Json], Awaitable[None]] = self.answer_action
        # What it carries out beyond tabs (windows, history, bookmarks), and how it answers
        # browserRequest: windows from its tabs, history and bookmarks from these lists once
        # the person shares them (``shared``).
        self.features = features
        self.on_request: Callable[[Json], Awaitable[None]] = self.answer_request
        self.shared = False
        self.history: list[Json] = []
        self.bookmarks: list[Json] = []
        # The bookmark tree, flat ({id, parentId, title, url?}; a folder has no url), and the
        # person's answer to a deletion's approval: "allow", "deny", or None when not asked.
        self.bookmark_nodes: list[Json] = []
        self.approval: str | None = "allow"
        # When set, the person answers a deletion only once this is (the test has seen it wait).
        self.answered: asyncio.Event | None = None
        self._window_ids = itertools.count(100)
        self._arrived = asyncio.Condition()
        self._reader: asyncio.Task[None] | None = None
        self._tab_ids = itertools.count(1000)
        self._tasks: set[asyncio.Task[None]] = set()

    # Connecting

    async def connect(
        self,
        session: aiohttp.ClientSession,
        url: str,
        headers: dict[str, str] | None = None,
        snapshot: bool = True,
        link_key: bytes | None = None,
    ) -> None:
        """Open the link; with ``link_key``, run the handshake as the real extension does first."""
        # No cap on what it hears, as a browser's WebSocket has none (an upload's bytes come in one frame).
        self.ws = await session.ws_connect(
            url, headers={"Origin": EXTENSION_ORIGIN} if headers is None else headers, max_msg_size=0
        )
        self._reader = asyncio.create_task(self._read())
        if link_key is not None:
            await self.prove(link_key, int(URL(url).port or 80))
        await self.wait_for("connect")
        if snapshot:
            await self.send_snapshot()

    async def prove(self, key: bytes, port: int) -> None:
        """Check the broker's proof of ``key`` and prove it back (docs/extension-link.md).

        Raises:
            AssertionError: the broker's proof is wrong.
        """
        nonce = link_auth.b64(secrets.token_bytes(32))
        start = len(self.inbox)
        await self.send({"type": "authChallenge", "nonce": nonce})
        answer = await self.wait_for("authProof", start=start)
        assert link_auth.check_proof(answer["proof"], key, link_auth.Role.BROKER, port, nonce, answer["nonce"])
        proof = link_auth.proof(key, link_auth.Role.EXTENSION, port, nonce, answer["nonce"])
        await self.send({"type": "authResponse", "proof": proof})

    async def send_snapshot(self, session_id: str | None = None) -> None:
        browser: Json = {"name": self.browser_name, "version": "1.0"}
        if self.instance_id is not None:
            browser["instanceId"] = self.instance_id
        snapshot: Json = {"type": "connected", "browser": browser, "tabs": [t.info() for t in self.tabs.values()]}
        if session_id is not None:
            snapshot["sessionId"] = session_id
        if self.actions is not None:
            snapshot["actions"] = self.actions
        if self.features is not None:
            snapshot["features"] = self.features
        if self.extension_version is not None:
            snapshot["extensionVersion"] = self.extension_version
        if self.driver is not None:
            snapshot["driver"] = self.driver
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

    def _place(self, tab: FakeTab) -> None:
        """Put ``tab`` last in its window, as a browser does."""
        tab.index = sum(1 for t in self.tabs.values() if t.window_id == tab.window_id)
        self.tabs[tab.id] = tab

    async def add_tab(self, tab: FakeTab, request_id: str | None = None) -> None:
        self._place(tab)
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
        elif kind == "browserRequest":
            await self.on_request(message)
        elif kind == "ping" and self.answer_pings:
            await self.send({"type": "pong"})
        elif kind == "openTab":
            await self._open_tab(message)
        elif kind == "closeTab":
            await self._close_tab(message)
        elif kind == "tabClaimed" and message.get("callId") and self.answer_claims:
            held = self.held_elsewhere.get(message["tabId"])
            error = {"code": "tab_owned", "message": held} if held else None
            await self.send({"type": "toolResult", "callId": message["callId"], "result": None, "error": error})
        elif kind == "connect" and message.get("sessionId") and self.snapshot_per_session:
            await self.send_snapshot(message["sessionId"])
        elif kind == "discoverTools" and self.reply_to_discover:
            tab = self.tabs[message["tabId"]]
            tools = [tool(n) for n in tab.functions]
            await self.send({"type": "toolsDiscovered", "callId": message["callId"], "tabId": tab.id, "tools": tools})

    async def _close_tab(self, message: Json) -> None:
        tab_id, request_id = message["tabId"], message.get("requestId")
        if self.refuse_close is not None:
            if request_id is not None:
                code, text = self.refuse_close
                await self.send({"type": "error", "code": code, "message": text, "requestId": request_id})
            return
        if tab_id in self.tabs and self.answer_close:
            del self.tabs[tab_id]
            closed: Json = {"type": "tabClosed", "tabId": tab_id}
            if request_id is not None:
                closed["requestId"] = request_id
            await self.send(closed)

    async def _open_tab(self, message: Json) -> None:
        if self.answer_open_with == "tabFocused":
            existing = next(t for t in self.tabs.values() if t.url == message["url"])
            await self.send({"type": "tabFocused", "tabId": existing.id, "requestId": message["requestId"]})
            return
        window_id = next(self._window_ids) if message.get("newWindow") else message.get("windowId", 1)
        tab = FakeTab(next(self._tab_ids), message["url"], window_id=window_id, pinned=message.get("pinned", False))
        if message.get("focus") and self.answer_open_with in ("newTabFocused", "unannouncedTabFocused"):
            # The original protocol's extensions: the new tab focused is answered with tabFocused,
            # after its tabCreated (no requestId) from the browser's own event, or with nothing before.
            tab.announce_empty = True
            if self.answer_open_with == "newTabFocused":
                await self.add_tab(tab)
            else:
                self._place(tab)
            await self.send({"type": "tabFocused", "tabId": tab.id, "requestId": message["requestId"], "tools": []})
            return
        await self.add_tab(tab, request_id=message["requestId"])

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
        reply = {"type": "toolResult", "callId": message["callId"], "result": action_result(message)}
        tab = self.tabs.get(message["tabId"])
        if tab is not None and tab.snapshot is not None and message["action"] not in READING_ACTIONS:
            target = message["args"].get("target") if message["action"] == "snapshot" else None
            reply["page"] = {"document": tab.document, "yaml": tab.snapshot, "url": tab.url, "target": target}
        await self.send(reply)

    async def answer_request(self, message: Json) -> None:
        reply: Json = {"type": "toolResult", "callId": message["callId"], "error": None}
        request, args = message["request"], message["args"]
        if request in RECORD_REQUESTS and not self.shared:
            reply["error"] = {"code": "consent_required", "message": "turn on sharing in the fake's options"}
        elif request in ("deleteHistory", "deleteBookmark"):
            reply.update(await self._deletion(message))
        elif request == "listWindows":
            ids = sorted({t.window_id for t in self.tabs.values() if t.window_id is not None})
            reply["result"] = {"windows": [{"id": i, "focused": i == ids[0], "state": "normal"} for i in ids]}
        elif request == "closeWindow":
            for tab in [t for t in self.tabs.values() if t.window_id == args["windowId"]]:
                await self.remove_tab(tab.id)
            reply["result"] = {}
        elif request == "searchHistory":
            reply["result"] = {"results": [h for h in self.history if args["query"] in h["title"] + h["url"]]}
        elif request == "searchBookmarks":
            reply["result"] = {"results": [b for b in self.bookmarks if args["query"] in b["title"] + b["url"]]}
        elif request == "bookmarkTree":
            below = set(self._subtree(args["id"])) if "id" in args else None
            nodes = [n for n in self.bookmark_nodes if below is None or n["id"] in below]
            if "id" in args and not nodes:
                reply["error"] = {"code": "record_not_found", "message": f"no bookmark or folder has id {args['id']}"}
            else:
                results = nodes[: args["maxResults"]]
                reply["result"] = {"results": results, "total": len(nodes), "truncated": len(results) < len(nodes)}
        elif request == "createBookmark":
            self.bookmarks.append({**args, "time": "2026-05-01T09:00:00.000Z"})
            reply["result"] = {"bookmark": self.bookmarks[-1]}
        else:
            reply["result"] = {}
        await self.send(reply)

    def _subtree(self, node_id: str) -> list[str]:
        """The id and every id below it."""
        children: dict[str, list[str]] = {}
        for node in self.bookmark_nodes:
            children.setdefault(node.get("parentId", ""), []).append(node["id"])
        found = [node_id] if any(n["id"] == node_id for n in self.bookmark_nodes) else []
        for each in found:
            found += children.get(each, [])
        return found

    async def _deletion(self, message: Json) -> Json:
        """A deletion's answer, after the person's approval as ``approval`` scripts it."""
        args = message["args"]
        if message["request"] == "deleteHistory":
            if "url" in args:
                gone = [h for h in self.history if h["url"] == args["url"]]
            else:
                gone = [h for h in self.history if args["startTime"] <= h.get("ms", -1) < args["endTime"]]
            if "url" in args and not gone:
                return {"error": {"code": "record_not_found", "message": f"history holds no visit of {args['url']}"}}
            result: Json = {"deleted": {"url": args["url"], "visits": len(gone)} if "url" in args else args}
        else:
            ids = self._subtree(args["id"])
            if not ids:
                return {"error": {"code": "record_not_found", "message": f"no bookmark or folder has id {args['id']}"}}
            if len(ids) > 1 and not args["recursive"]:
                return {"error": {"code": "folder_not_empty", "message": f"folder {args['id']} holds {len(ids) - 1}"}}
            [node] = [n for n in self.bookmark_nodes if n["id"] == args["id"]]
            result = {"deleted": {"id": node["id"], "title": node["title"]}}
        if self.approval is not None:
            await self.send({"type": "approvalPending", "callId": message["callId"], "timeout": 60})
            if self.answered is not None:
                await self.answered.wait()
            if self.approval != "allow":
                return {"error": {"code": "not_approved", "message": "the person did not approve it: they denied it"}}
        if message["request"] == "deleteHistory":
            self.history = [h for h in self.history if h not in gone]
        else:
            self.bookmark_nodes = [n for n in self.bookmark_nodes if n["id"] not in ids]
        return {"result": result}


# The requests of the person's records, refused while they do not share them.
RECORD_REQUESTS = frozenset(
    ("searchHistory", "searchBookmarks", "createBookmark", "bookmarkTree", "deleteHistory", "deleteBookmark")
)

# Actions whose answer is what they read, not the page.
READING_ACTIONS = frozenset(("take_screenshot", "console_messages", "network_requests", "evaluate"))

# A 1x1 red PNG: what the fake sends for take_screenshot.
TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def action_result(message: Json) -> Json:
    """An MCP result naming the action, its tab and its arguments, so tests see what arrived."""
    text = f"{message['action']} in tab {message['tabId']} with {json.dumps(message['args'], sort_keys=True)}"
    content: list[Json] = [{"type": "text", "text": text}]
    if message["action"] == "take_screenshot":
        content.append({"type": "image", "data": TINY_PNG, "mimeType": "image/png"})
    return {"content": content}
