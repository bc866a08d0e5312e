"""The world of the end-to-end tests of the built-in browser tools: headless Chromium with the real
extension, joined to a scripted fake broker (``fake_broker.py``) that sends it ``browserAction``
and ``browserRequest`` frames, and the pages of ``tests/pages/``.

One Chromium per test module that imports the ``world`` fixture; its pages get their window's
own size, as in a person's browser. The fake broker starts an AI session with ``connect``, tells
the extension which tabs the session holds with ``tabClaimed``, and reads the ``toolResult``
that answers each call. The pages record what reached them (``event.isTrusted`` included), and
Playwright reads those records and the tabs' state, as a person at the browser would see it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from playwright.async_api import BrowserContext, Page, Worker

from broker import codec
from broker.core.messages import PageSnapshot
from broker.core.snapshots import SNAPSHOT_BUDGET, Baselines, View, view_of, with_section

from ..harness.chromium import change_settings, extension_chromium, instance_id, probe_only, trust_broker
from ..harness.page_server import serve_test_pages
from .fake_broker import FAKE_TOKEN, WAIT, FakeBroker, Link

SESSION = "session-actions"


# A new tab at a URL, once it has loaded: its id. Heard from the browser's own tab events, which
# do not depend on when Playwright attached to the page (attached late, it may never hear its load).
LOADED_TAB = """([url, active]) => new Promise((resolve, reject) => {
    let id = null;
    const loaded = new Set();
    // The page's load, not that of the blank document a tab starts with.
    const complete = (tab) => tab.status === "complete" && /^https?:/.test(tab.url ?? "");
    const heard = (tabId, change, tab) => {
        if (!complete(tab)) return;
        if (id === null) loaded.add(tabId);
        else if (tabId === id) done();
    };
    const done = () => {
        chrome.tabs.onUpdated.removeListener(heard);
        resolve(id);
    };
    chrome.tabs.onUpdated.addListener(heard);
    chrome.tabs.create({url, active}).then(async (tab) => {
        id = tab.id;
        if (loaded.has(id) || complete(await chrome.tabs.get(id))) done();
    }, reject);
})"""


class World:
    """The module's browser, its link to the fake broker, and the page server."""

    def __init__(self, context: BrowserContext, worker: Worker, link: Link, site: str, tmp: Path):
        self.context = context
        self.worker = worker
        self.link = link
        self.site = site
        self.tmp = tmp
        self.calls = itertools.count(1)

    def url(self, page: str) -> str:
        return f"{self.site}/pages/{page}"

    async def open(self, page: str, active: bool = True, claimed: bool = True) -> tuple[int, Page]:
        """A new tab at ``page``, claimed by the session unless not ``claimed`` (then it is the
        person's): its id and its Playwright page."""
        async with self.context.expect_page() as opening:
            tab_id = await self.worker.evaluate(LOADED_TAB, [self.url(page), active])
        browser_page = await opening.value
        if claimed:
            await self.claim(tab_id)
        return tab_id, browser_page

    @contextlib.asynccontextmanager
    async def behind_the_persons_tab(self, page: str) -> AsyncIterator[tuple[int, Page]]:
        """A claimed tab at ``page`` behind a tab of the person's that is in front (``a.html``):
        its id and its Playwright page; both tabs close after."""
        _, person_page = await self.open("a.html")
        await person_page.bring_to_front()
        tab_id, browser_page = await self.open(page, active=False)
        try:
            yield tab_id, browser_page
        finally:
            await browser_page.close()
            await person_page.close()

    async def claim(self, tab_id: int, session: str = SESSION) -> None:
        """Tell the extension the session holds the tab, and wait until it has heard."""
        await self.link.send({"type": "tabClaimed", "sessionId": session, "tabId": tab_id})
        await self.settled()

    async def settled(self) -> None:
        """Wait until the extension has taken in every frame sent so far (it reads them in order)."""

        def pongs() -> int:
            return sum(1 for m in self.link.inbox if m.get("type") == "pong")

        before = pongs()
        await self.link.send({"type": "ping"})
        await self.link.wait_for("a pong", lambda _: pongs() > before)

    async def act(self, tab_id: int, action: str, **args: Any) -> dict[str, Any]:
        """Send a browserAction and return its toolResult."""
        frame = {"type": "browserAction", "tabId": tab_id, "action": action, "args": args}
        return await self.answer_to(action, frame, within=40)

    async def call_tool(self, tab_id: int, tool: str, **args: Any) -> dict[str, Any]:
        """Send a callTool for one of the page's own tools and return its toolResult."""
        return await self.answer_to(tool, {"type": "callTool", "tabId": tab_id, "toolName": tool, "args": args})

    async def answer_to(self, what: str, frame: dict[str, Any], within: float = WAIT) -> dict[str, Any]:
        """Send ``frame`` as a call of the session's, under a call id of its own, and return the
        toolResult that answers it."""
        call_id = f"c{next(self.calls)}"
        await self.link.send({**frame, "sessionId": SESSION, "callId": call_id})
        return await self.link.wait_for(
            f"the answer to {what}",
            lambda m: m.get("type") == "toolResult" and m.get("callId") == call_id,
            within=within,
        )

    async def approval_policy(self, policy: str) -> None:
        """Set the extension's approval policy (options page), with 20 s for the person to answer."""
        await change_settings(self.worker, approvalPolicy=policy, approvalTimeoutMs=20000)

    async def request(self, request: str, **args: Any) -> dict[str, Any]:
        """Send a browserRequest (the browser's windows, history, bookmarks) and return its toolResult."""
        return await self.answer_to(request, {"type": "browserRequest", "request": request, "args": args})

    async def ok(self, tab_id: int, action: str, **args: Any) -> str:
        """The text of a browserAction that must succeed, with the page's whole snapshot, as a
        broker shows a client its first snapshot of a tab."""
        answer = await self.act(tab_id, action, **args)
        assert answer.get("error") is None, answer
        result = answer["result"]
        if answer.get("page") is not None:
            page = codec.structure(answer["page"], PageSnapshot)
            view = view_of(action, args)[0] if action == "snapshot" else View(changes=False, budget=SNAPSHOT_BUDGET)
            result = with_section(result, "Snapshot", Baselines().section(SESSION, ("b1", tab_id), page, view))
        return str(result["content"][0]["text"])

    async def fails(self, tab_id: int, action: str, **args: Any) -> dict[str, str]:
        """The error of a browserAction that must fail."""
        answer = await self.act(tab_id, action, **args)
        assert "result" not in answer or answer["result"] is None, answer
        error: dict[str, str] = answer["error"]
        return error


@contextlib.asynccontextmanager
async def serve_site() -> AsyncIterator[str]:
    """``tests/pages/`` under ``/pages/``, and a small JSON API the pages fetch."""

    async def items(request: web.Request) -> web.Response:
        return web.json_response({"items": ["apple", "pear"], "query": request.query_string})

    # /api/slow?KEY is answered only once /api/release?KEY is asked for: a request the page keeps
    # in flight meanwhile.
    released: dict[str, asyncio.Event] = collections.defaultdict(asyncio.Event)

    async def slow(request: web.Request) -> web.Response:
        await released[request.query_string].wait()
        return web.json_response({"items": ["late"], "query": request.query_string})

    async def release(request: web.Request) -> web.Response:
        released[request.query_string].set()
        return web.Response(text="released")

    # /api/late?KEY is answered a second late, on its own: a slow server, for a test that cannot
    # count on hearing the request in time to release it.
    async def late(request: web.Request) -> web.Response:
        await asyncio.sleep(1)
        return web.json_response({"items": ["late"], "query": request.query_string})

    api = (
        web.route("*", "/api/items", items),
        web.get("/api/slow", slow),
        web.get("/api/release", release),
        web.get("/api/late", late),
    )
    async with serve_test_pages(*api) as url:
        yield url


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    home = tmp_path_factory.mktemp("actions")
    broker = FakeBroker()
    await broker.start(probed=False)
    try:
        # Pages get their window's own size, as in a person's browser, not an emulated one.
        chromium = extension_chromium(home, wait=WAIT, no_viewport=True)
        async with serve_site() as site, chromium as (context, worker):
            await trust_broker(worker, FAKE_TOKEN)
            # These tests are of the actions themselves: browser_evaluate runs without asking the
            # person (tests/e2e/test_e2e_person_approvals.py tests the asking).
            await change_settings(worker, approvalPolicy="never")
            await probe_only(worker, broker.port)
            link = await broker.link_of(await instance_id(worker, WAIT))
            await link.send(
                {"type": "connect", "sessionId": SESSION, "clientName": "Actions test", "serverVersion": "fake"}
            )
            await link.wait_for(
                "the session's snapshot", lambda m: m.get("type") == "connected" and m.get("sessionId") == SESSION
            )
            yield World(context, worker, link, site, home)
    finally:
        await broker.stop()


def ref_of(text: str, line: str) -> str:
    """The ref on the snapshot line that starts with ``line`` (after its indent and dash)."""
    found = re.search(rf"^\s*- {re.escape(line)}.*?\[ref=(e\d+)\]", text, re.M)
    assert found, f"no line {line!r} with a ref in:\n{text}"
    return found.group(1)


async def events(page: Page, kind: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = await page.evaluate("(kind) => window.events.filter((e) => e.type === kind)", kind)
    return found
