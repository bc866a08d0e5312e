"""End to end: the built-in browser tools (``browserAction``), carried out by the real extension.

One headless Chromium for the module, with the unpacked extension; local pages from
``tests/pages/`` served by aiohttp on 127.0.0.1. Instead of the real broker, a scripted fake one
listens on a port of 8765-8785, which the extension probes when no native messaging host is
installed: it answers the probe with the broker's header, opens the extension link, starts an AI
session with ``connect``, and sends ``tabClaimed`` and ``browserAction`` frames, asserting on the
``toolResult`` that answers each. Other test runs' browsers may join the fake broker too; it
tells this module's browser by the instance id the extension keeps in its storage.

The pages record what reached them (``event.isTrusted`` included), and Playwright reads those
records and the tabs' state, as a person at the browser would see it.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import re
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import WSMsgType, web
from playwright.async_api import BrowserContext, Page, Worker, async_playwright

from broker.core.security import PROJECT_EXTENSION_ID
from broker.version import BROKER_HEADER

from .chromium import CHROMIUM, chromium_args

pytestmark = pytest.mark.asyncio(loop_scope="module")

PAGES = Path(__file__).resolve().parent / "pages"
PROBED_PORTS = range(8765, 8786)
WAIT = 20.0
ACTIONS = [
    "snapshot",
    "click",
    "hover",
    "type",
    "fill_form",
    "select_option",
    "press_key",
    "wait_for",
    "navigate",
    "navigate_back",
    "navigate_forward",
    "reload",
    "take_screenshot",
    "console_messages",
    "network_requests",
    "evaluate",
]
SESSION = "session-actions"


class Link:
    """One extension's WebSocket to the fake broker, with everything it sent, in order."""

    def __init__(self, ws: web.WebSocketResponse):
        self.ws = ws
        self.inbox: list[dict[str, Any]] = []
        self.changed = asyncio.Condition()

    async def receive(self) -> None:
        async for frame in self.ws:
            if frame.type != WSMsgType.TEXT:
                continue
            message = json.loads(frame.data)
            if message.get("type") == "ping":
                await self.ws.send_json({"type": "pong"})
            async with self.changed:
                self.inbox.append(message)
                self.changed.notify_all()

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send_json(message)

    async def wait_for(self, what: str, match: Any, within: float = WAIT) -> dict[str, Any]:
        """The first message so far or to come that ``match(message)`` accepts."""
        try:
            async with asyncio.timeout(within), self.changed:
                while True:
                    found = next((m for m in self.inbox if match(m)), None)
                    if found is not None:
                        return found
                    await self.changed.wait()
        except TimeoutError:
            raise AssertionError(f"timed out waiting for {what}") from None


class FakeBroker:
    """Answers the extension's probe as a broker does and keeps every link that opens."""

    def __init__(self) -> None:
        self.links: list[Link] = []
        self.runner: web.AppRunner | None = None
        self.port = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Upgrade", "").lower() != "websocket":
            return web.Response(status=426, text="a WebSocket, please", headers={BROKER_HEADER: "fake"})
        ws = web.WebSocketResponse(heartbeat=None)
        await ws.prepare(request)
        link = Link(ws)
        self.links.append(link)
        await ws.send_json({"type": "connect", "serverVersion": "fake", "sessionIds": []})
        await link.receive()
        return ws

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/", self.handle)
        for port in PROBED_PORTS:
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", port))
                except OSError:
                    continue
            runner = web.AppRunner(app)
            await runner.setup()
            try:
                await web.TCPSite(runner, "127.0.0.1", port).start()
            except OSError:  # another run took it in between
                await runner.cleanup()
                continue
            self.runner, self.port = runner, port
            return
        raise AssertionError(f"no free port in {PROBED_PORTS.start}-{PROBED_PORTS.stop - 1} for the fake broker")

    async def link_of(self, instance_id: str) -> Link:
        """The link whose ``connected`` names this browser instance."""

        def ours(message: dict[str, Any]) -> bool:
            return message.get("type") == "connected" and message["browser"].get("instanceId") == instance_id

        try:
            async with asyncio.timeout(WAIT):
                while True:
                    for link in list(self.links):
                        if any(ours(m) for m in link.inbox):
                            return link
                    await asyncio.sleep(0.1)
        except TimeoutError:
            raise AssertionError("timed out waiting for the extension to join the fake broker") from None

    async def stop(self) -> None:
        for link in self.links:
            await link.ws.close()
        if self.runner:
            await self.runner.cleanup()


class World:
    """This module's browser, its link to the fake broker, and the page server."""

    def __init__(self, context: BrowserContext, worker: Worker, link: Link, site: str, tmp: Path):
        self.context = context
        self.worker = worker
        self.link = link
        self.site = site
        self.tmp = tmp
        self.calls = itertools.count(1)

    def url(self, page: str) -> str:
        return f"{self.site}/pages/{page}"

    async def open(self, page: str, active: bool = True) -> tuple[int, Page]:
        """A new tab at ``page``, claimed by the session: its id and its Playwright page."""
        async with self.context.expect_page() as opening:
            tab_id = await self.worker.evaluate(
                "([url, active]) => chrome.tabs.create({url, active}).then((tab) => tab.id)", [self.url(page), active]
            )
        browser_page = await opening.value
        await browser_page.wait_for_load_state()
        await self.link.send({"type": "tabClaimed", "sessionId": SESSION, "tabId": tab_id})
        return tab_id, browser_page

    async def act(self, tab_id: int, action: str, **args: Any) -> dict[str, Any]:
        """Send a browserAction and return its toolResult."""
        call_id = f"c{next(self.calls)}"
        await self.link.send(
            {
                "type": "browserAction",
                "sessionId": SESSION,
                "callId": call_id,
                "tabId": tab_id,
                "action": action,
                "args": args,
            }
        )
        return await self.link.wait_for(
            f"the answer to {action}",
            lambda m: m.get("type") == "toolResult" and m.get("callId") == call_id,
            within=40,
        )

    async def ok(self, tab_id: int, action: str, **args: Any) -> str:
        """The text of a browserAction that must succeed."""
        answer = await self.act(tab_id, action, **args)
        assert answer.get("error") is None, answer
        return str(answer["result"]["content"][0]["text"])

    async def fails(self, tab_id: int, action: str, **args: Any) -> dict[str, str]:
        answer = await self.act(tab_id, action, **args)
        assert "result" not in answer or answer["result"] is None, answer
        error: dict[str, str] = answer["error"]
        return error


@contextlib.asynccontextmanager
async def serve_site() -> AsyncIterator[str]:
    """``tests/pages/`` under ``/pages/``, and a small JSON API the pages fetch."""

    async def items(request: web.Request) -> web.Response:
        return web.json_response({"items": ["apple", "pear"], "query": request.query_string})

    app = web.Application()
    app.router.add_static("/pages/", PAGES)
    app.router.add_route("*", "/api/items", items)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    assert os.access(CHROMIUM, os.X_OK), f"{CHROMIUM} is missing: install Debian's chromium package"
    home = tmp_path_factory.mktemp("actions")
    broker = FakeBroker()
    await broker.start()
    try:
        async with serve_site() as site, async_playwright() as playwright:
            context = await playwright.chromium.launch_persistent_context(
                str(home / "profile"),
                executable_path=CHROMIUM,
                headless=True,
                env={**os.environ, "XDG_CONFIG_HOME": str(home / "config")},
                args=chromium_args(),
            )
            try:
                worker = context.service_workers[0] if context.service_workers else None
                if worker is None:
                    worker = await context.wait_for_event("serviceworker", timeout=WAIT * 1000)
                assert worker.url == f"chrome-extension://{PROJECT_EXTENSION_ID}/background.js"
                instance_id = await worker.evaluate(
                    """async () => {
                      for (;;) {
                        const { instanceId } = await chrome.storage.local.get("instanceId");
                        if (instanceId) return instanceId;
                        await new Promise((resolve) => setTimeout(resolve, 100));
                      }
                    }"""
                )
                link = await broker.link_of(instance_id)
                await link.send({"type": "connect", "sessionId": SESSION, "clientName": "Actions test", "serverVersion": "fake"})
                await link.wait_for("the session's snapshot", lambda m: m.get("type") == "connected" and m.get("sessionId") == SESSION)
                yield World(context, worker, link, site, home)
            finally:
                await context.close()
    finally:
        await broker.stop()


async def test_the_extension_announces_its_browser_actions(world: World) -> None:
    connected = await world.link.wait_for("connected", lambda m: m.get("type") == "connected")
    assert connected["actions"] == ACTIONS


async def test_a_snapshot_shows_refs_for_links_buttons_and_fields_with_their_states(world: World) -> None:
    tab, page = await world.open("form.html")
    text = await world.ok(tab, "snapshot")
    print(text)
    assert text.startswith(f"### Page\n- Page URL: {world.url('form.html')}\n- Page Title: Order form\n### Snapshot\n```yaml\n")
    assert text.endswith("\n```")
    await page.close()
