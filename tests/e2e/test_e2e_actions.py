"""End to end: the built-in browser tools (``browserAction``), and a window closed by ``browserRequest``,
carried out by the real extension.

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
import collections
import contextlib
import itertools
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import WSMsgType, web
from playwright.async_api import BrowserContext, Page, Worker

from broker import codec
from broker.core import browser_tools
from broker.core.messages import PageSnapshot
from broker.core.snapshots import SNAPSHOT_BUDGET, Baselines, View, view_of, with_section
from broker.version import BROKER_HEADER

from ..support.chromium import (
    answer_challenge,
    change_settings,
    extension_chromium,
    in_front,
    instance_id,
    probe_only,
    trust_broker,
    visible,
)
from ..support.page_server import serve_app
from ..support.probed_ports import serve_on_probed_port
from ..support.waiting import eventually

pytestmark = pytest.mark.asyncio(loop_scope="module")

PAGES = Path(__file__).resolve().parents[1] / "pages"
WAIT = 20.0
# What the extension must announce: every built-in tool the broker knows.
ACTIONS = list(browser_tools.ACTIONS)
SESSION = "session-actions"
# The fake broker's token: the extension is paired with it, and it proves it on every link.
FAKE_TOKEN = "fake-broker-token-0123456789abcdef"


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


class Link:
    """One extension's WebSocket to the fake broker, with everything it sent, in order."""

    def __init__(self, ws: web.WebSocketResponse, port: int):
        self.ws = ws
        self.port = port
        self.inbox: list[dict[str, Any]] = []
        self.changed = asyncio.Condition()

    async def receive(self) -> None:
        async for frame in self.ws:
            if frame.type != WSMsgType.TEXT:
                continue
            message = json.loads(frame.data)
            if message.get("type") == "ping":
                await self.ws.send_json({"type": "pong"})
            elif message.get("type") == "authChallenge":
                await self.ws.send_json(answer_challenge(FAKE_TOKEN, self.port, message["nonce"]))
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

    def __init__(self, hello: dict[str, Any] | None = None) -> None:
        # The link's first frame, as a broker's ``connect`` on a link that opens.
        self.hello = hello or {"type": "connect", "serverVersion": "fake", "sessionIds": []}
        self.links: list[Link] = []
        self.runner: web.AppRunner | None = None
        self.port = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Upgrade", "").lower() != "websocket":
            return web.Response(status=426, text="a WebSocket, please", headers={BROKER_HEADER: "fake"})
        ws = web.WebSocketResponse(heartbeat=None)
        await ws.prepare(request)
        link = Link(ws, self.port)
        self.links.append(link)
        await ws.send_json(self.hello)
        await link.receive()
        return ws

    async def start(self, probed: bool = True) -> None:
        """Listen on a free port the extension probes by default, or (not ``probed``) on any free
        port, for a browser told to look there alone (:func:`tests.chromium.probe_only`)."""
        app = web.Application()
        app.router.add_get("/", self.handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        if not probed:
            await web.TCPSite(self.runner, "127.0.0.1", 0).start()
            self.port = self.runner.addresses[0][1]
            return
        self.port = await serve_on_probed_port(self.runner)

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

    async def open(self, page: str, active: bool = True, claimed: bool = True) -> tuple[int, Page]:
        """A new tab at ``page``, claimed by the session unless not ``claimed`` (then it is the
        person's): its id and its Playwright page."""
        async with self.context.expect_page() as opening:
            tab_id = await self.worker.evaluate(LOADED_TAB, [self.url(page), active])
        browser_page = await opening.value
        if claimed:
            await self.claim(tab_id)
        return tab_id, browser_page

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

    async def approval_policy(self, policy: str) -> None:
        """Set the extension's approval policy (options page), with 20 s for the person to answer."""
        await change_settings(self.worker, approvalPolicy=policy, approvalTimeoutMs=20000)

    async def request(self, request: str, **args: Any) -> dict[str, Any]:
        """Send a browserRequest (the browser's windows, history, bookmarks) and return its toolResult."""
        call_id = f"c{next(self.calls)}"
        await self.link.send(
            {"type": "browserRequest", "sessionId": SESSION, "callId": call_id, "request": request, "args": args}
        )
        return await self.link.wait_for(
            f"the answer to {request}", lambda m: m.get("type") == "toolResult" and m.get("callId") == call_id
        )

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

    app = web.Application()
    app.router.add_static("/pages/", PAGES)
    app.router.add_route("*", "/api/items", items)
    app.router.add_get("/api/slow", slow)
    app.router.add_get("/api/release", release)
    async with serve_app(app) as url:
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
            # person (tests/e2e/test_e2e_person.py tests the asking).
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


@pytest_asyncio.fixture(loop_scope="module")
async def form(world: World) -> AsyncIterator[tuple[int, Page]]:
    tab, page = await world.open("form.html")
    yield tab, page
    await page.close()


async def test_the_extension_announces_its_browser_actions(world: World) -> None:
    connected = await world.link.wait_for("connected", lambda m: m.get("type") == "connected")
    assert connected["actions"] == ACTIONS
    session = await world.link.wait_for("connected", lambda m: m.get("sessionId") == SESSION)
    assert session["actions"] == ACTIONS


async def test_a_snapshot_shows_refs_for_links_buttons_and_fields_with_their_states(
    world: World, form: tuple[int, Page]
) -> None:
    tab, _ = form
    text = await world.ok(tab, "snapshot")
    page_section = f"### Page\n- Page URL: {world.url('form.html')}\n- Page Title: Order form\n"
    assert text.startswith(page_section + "### Snapshot\n```yaml\n")
    assert text.endswith("\n```")
    for line in (
        'heading "Order" [level=1]',
        'link "Page A"',
        'button "Buy now"',
        'button "Sold out" [disabled]',
        'textbox "Name"',
        'checkbox "Gift wrap"',
        'radio "Post" [checked]',
        'radio "Courier"',
        'combobox "Size"',
        'slider "Quantity"',
        'textbox "Notes"',
        'button "Send order"',
    ):
        ref_of(text, line)
    assert re.search(r'- link "Page A" \[ref=e\d+\]:\n\s+- /url: /pages/a.html\n', text)
    assert re.search(r'- textbox "Name" \[ref=e\d+\]: old\n', text)
    assert re.search(r'- option "Medium" \[selected\]\n', text)
    assert "[checked]" not in text.split('checkbox "Gift wrap"')[1].split("\n")[0]

    again = await world.ok(tab, "snapshot")
    assert ref_of(again, 'button "Buy now"') == ref_of(text, 'button "Buy now"'), "a ref stays with its element"

    part = await world.ok(tab, "snapshot", target=ref_of(text, "form"))
    assert 'textbox "Name"' in part
    assert "Order" not in part.split("### Snapshot")[1]

    shallow = (await world.ok(tab, "snapshot", depth=1)).split("```yaml\n")[1]
    assert "  - main [ref=" in shallow and "    - " not in shallow, "depth 1: the page's top element and its children"


async def test_a_click_by_ref_reaches_the_page_as_a_trusted_click(world: World, form: tuple[int, Page]) -> None:
    tab, page = form
    buy = ref_of(await world.ok(tab, "snapshot"), 'button "Buy now"')
    after = await world.ok(tab, "click", element="Buy now button", target=buy)
    assert "- paragraph" in after and "Bought for real" in after, after
    [clicked] = await events(page, "click")
    assert clicked["isTrusted"] is True
    assert clicked["target"] == "buy"

    await world.ok(tab, "click", target=buy, doubleClick=True)
    [double] = await events(page, "dblclick")
    assert double["isTrusted"] is True

    await world.ok(tab, "click", target=buy, button="right", modifiers=["Shift"])
    [menu] = await events(page, "contextmenu")
    assert menu["isTrusted"] and menu["button"] == 2 and menu["shiftKey"]


async def test_type_fills_a_field_and_submit_sends_its_form(world: World, form: tuple[int, Page]) -> None:
    tab, page = form
    text = await world.ok(tab, "snapshot")
    notes = ref_of(text, 'textbox "Notes"')
    await world.ok(tab, "type", target=notes, text="at once")
    assert await page.eval_on_selector("#notes", "(e) => e.value") == "at once"
    assert [e["isTrusted"] for e in await events(page, "input")] == [True]

    await world.ok(tab, "type", target=notes, text="Hi!", slowly=True)
    assert await page.eval_on_selector("#notes", "(e) => e.value") == "Hi!", "typing replaces what the field held"
    keys = await events(page, "keydown")
    assert [k["key"] for k in keys] == ["H", "i", "!"]
    assert all(k["isTrusted"] for k in keys)

    name = ref_of(text, 'textbox "Name"')
    after = await world.ok(tab, "type", element="Name", target=name, text="Ada Lovelace", submit=True)
    assert f"- Page URL: {world.url('done.html')}?name=Ada+Lovelace" in after, after
    assert 'heading "Thank you"' in after


async def test_select_option_chooses_by_value_or_label(world: World, form: tuple[int, Page]) -> None:
    tab, page = form
    size = ref_of(await world.ok(tab, "snapshot"), 'combobox "Size"')
    after = await world.ok(tab, "select_option", target=size, values=["l"])
    assert 'option "Large" [selected]' in after
    assert await page.eval_on_selector("#size", "(e) => e.value") == "l"
    await world.ok(tab, "select_option", target=size, values=["Small"])
    assert await page.eval_on_selector("#size", "(e) => e.value") == "s"
    [*_, change] = await events(page, "change")
    assert change["target"] == "size"

    missing = await world.fails(tab, "select_option", target=size, values=["huge"])
    assert missing["code"] == "action_failed" and "huge" in missing["message"]


async def test_press_key_goes_to_the_focused_element(world: World, form: tuple[int, Page]) -> None:
    tab, page = form
    name = ref_of(await world.ok(tab, "snapshot"), 'textbox "Name"')
    await world.ok(tab, "click", target=name)
    await world.ok(tab, "press_key", key="Control+a")
    await world.ok(tab, "press_key", key="Backspace")
    assert await page.eval_on_selector("#name", "(e) => e.value") == ""
    await world.ok(tab, "press_key", key="Tab")
    assert await page.evaluate("document.activeElement.id") == "gift"
    tabbed = [k for k in await events(page, "keydown") if k["key"] == "Tab"]
    assert tabbed and tabbed[0]["isTrusted"]

    unknown = await world.fails(tab, "press_key", key="NoSuchKey")
    assert unknown["code"] == "invalid_arguments"


async def test_hover_moves_the_mouse_over_the_element(world: World, form: tuple[int, Page]) -> None:
    tab, page = form
    found = re.search(r"- generic \[ref=(e\d+)\]: Hover here$", await world.ok(tab, "snapshot"), re.M)
    assert found
    zone = found.group(1)
    after = await world.ok(tab, "hover", target=zone)
    assert await page.evaluate("window.hovered === true")
    assert "Secret menu" in after


async def test_fill_form_sets_every_kind_of_field(world: World, form: tuple[int, Page]) -> None:
    tab, page = form
    text = await world.ok(tab, "snapshot")
    await world.ok(
        tab,
        "fill_form",
        fields=[
            {"name": "Name", "type": "textbox", "target": ref_of(text, 'textbox "Name"'), "value": "Grace"},
            {"name": "Gift wrap", "type": "checkbox", "target": ref_of(text, 'checkbox "Gift wrap"'), "value": "true"},
            {"name": "Courier", "type": "radio", "ref": ref_of(text, 'radio "Courier"'), "value": "true"},
            {"name": "Size", "type": "combobox", "target": ref_of(text, 'combobox "Size"'), "value": "Large"},
            {"name": "Quantity", "type": "slider", "target": ref_of(text, 'slider "Quantity"'), "value": "7"},
        ],
    )
    values = await page.evaluate(
        """() => {
          const field = (id) => document.getElementById(id);
          return {name: field("name").value, gift: field("gift").checked, courier: field("courier").checked,
                  size: field("size").value, qty: field("qty").value};
        }"""
    )
    assert values == {"name": "Grace", "gift": True, "courier": True, "size": "l", "qty": "7"}


async def test_navigate_back_forward_and_reload(world: World) -> None:
    tab, page = await world.open("a.html")
    to_b = await world.ok(tab, "navigate", url=world.url("b.html"))
    assert f"- Page URL: {world.url('b.html')}\n- Page Title: Page B" in to_b
    assert 'heading "Page B" [level=1]' in to_b
    back = await world.ok(tab, "navigate_back")
    assert f"- Page URL: {world.url('a.html')}" in back
    forward = await world.ok(tab, "navigate_forward")
    assert f"- Page URL: {world.url('b.html')}" in forward
    await page.evaluate("window.marker = 1")
    reloaded = await world.ok(tab, "reload")
    assert f"- Page URL: {world.url('b.html')}" in reloaded
    assert await page.evaluate("window.marker") is None

    nowhere = await world.fails(tab, "navigate_forward")
    assert nowhere["code"] == "action_failed"
    bad = await world.fails(tab, "navigate", url="javascript:alert(1)")
    assert bad["code"] == "invalid_arguments"
    await page.close()


async def test_a_browser_page_can_only_be_navigated_away_from(world: World) -> None:
    tab = await world.worker.evaluate("chrome.tabs.create({url: 'chrome://version', active: false}).then((t) => t.id)")
    await world.link.send({"type": "tabClaimed", "sessionId": SESSION, "tabId": tab})
    refused = await world.fails(tab, "snapshot")
    assert refused["code"] == "action_failed" and "chrome://version" in refused["message"]
    after = await world.ok(tab, "navigate", url=world.url("a.html"))
    assert f"- Page URL: {world.url('a.html')}" in after and 'heading "Page A"' in after
    await world.worker.evaluate("(tabId) => chrome.tabs.remove(tabId)", tab)


async def test_a_ref_from_before_a_navigation_is_stale(world: World) -> None:
    tab, page = await world.open("a.html")
    text = await world.ok(tab, "snapshot")
    press = ref_of(text, 'button "Press me"')
    await world.ok(tab, "click", target=press)
    assert await page.text_content("button") == "Pressed"

    await world.ok(tab, "navigate", url=world.url("b.html"))
    stale = await world.fails(tab, "click", target=press)
    assert stale["code"] == "stale_ref"
    assert "browser_snapshot" in stale["message"] and "earlier page" in stale["message"]
    await world.ok(tab, "snapshot")
    assert (await world.fails(tab, "click", target=press))["code"] == "stale_ref", "refs are not reused by a new page"
    assert (await world.fails(tab, "click", target="e99999"))["code"] == "stale_ref"
    await page.close()


async def test_a_screenshot_is_a_png_image(world: World, form: tuple[int, Page]) -> None:
    tab, _ = form
    answer = await world.act(tab, "take_screenshot")
    assert answer.get("error") is None, answer
    text, image = answer["result"]["content"]
    assert text["type"] == "text" and "viewport" in text["text"]
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    png = base64.b64decode(image["data"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert width > 100 and height > 100
    (world.tmp / "viewport.png").write_bytes(png)

    buy = ref_of(await world.ok(tab, "snapshot"), 'button "Buy now"')
    element = await world.act(tab, "take_screenshot", type="jpeg", element="Buy now", target=buy)
    jpeg = base64.b64decode(element["result"]["content"][1]["data"])
    assert element["result"]["content"][1]["mimeType"] == "image/jpeg" and jpeg.startswith(b"\xff\xd8")
    (world.tmp / "button.jpeg").write_bytes(jpeg)
    assert re.search(r"Screenshot of the Buy now, \d\dx\d\d pixels, JPEG", element["result"]["content"][0]["text"])
    full = await world.act(tab, "take_screenshot", fullPage=True, scale="device")
    assert "full page" in full["result"]["content"][0]["text"]


async def test_console_messages_include_logs_and_uncaught_errors(world: World) -> None:
    tab, page = await world.open("activity.html")
    await page.wait_for_function("window.first")
    text = await world.ok(tab, "console_messages")
    assert text.startswith("### Result\nTotal messages: 3 (Errors: 1, Warnings: 1)\n"), text
    assert "[LOG] page says hello 42 @ " in text
    assert "[WARNING] careful now" in text
    assert "Error: boom at load" in text
    errors = await world.ok(tab, "console_messages", level="error")
    assert "boom at load" in errors and "hello" not in errors
    assert 'Returning 1 messages for level "error"' in errors
    await page.evaluate("console.log('after attach')")
    assert "[LOG] after attach" in await world.ok(tab, "console_messages")
    await page.close()


async def test_network_requests_list_what_the_page_fetched(world: World) -> None:
    tab, page = await world.open("activity.html")
    await page.wait_for_function("window.first")
    load = ref_of(await world.ok(tab, "snapshot"), 'button "Load more"')
    await world.ok(tab, "click", target=load)
    await page.wait_for_function("document.getElementById('result').textContent")
    text = await world.ok(tab, "network_requests")
    assert f"{world.site}/api/items?first => [200]" in text, text
    assert f"[POST] {world.site}/api/items?more => [200] OK" in text, text
    assert "activity.html" not in text, "successful static requests are left out by default"
    everything = await world.ok(tab, "network_requests", static=True)
    assert world.url("activity.html") in everything
    only = await world.ok(tab, "network_requests", filter="more")
    assert "?more" in only and "?first" not in only
    assert (await world.fails(tab, "network_requests", filter="("))["code"] == "invalid_arguments"
    await page.close()


async def test_evaluate_runs_a_function_in_the_page(world: World, form: tuple[int, Page]) -> None:
    tab, _ = form
    assert await world.ok(tab, "evaluate", function="() => document.title") == '### Result\n"Order form"'
    indented = '### Result\n{\n  "a": [\n    1,\n    2\n  ]\n}'
    assert await world.ok(tab, "evaluate", function="() => ({a: [1, 2]})") == indented
    heading = ref_of(await world.ok(tab, "snapshot"), 'heading "Order"')
    assert await world.ok(tab, "evaluate", function="(element) => element.textContent", target=heading) == (
        '### Result\n"Order"'
    )
    thrown = await world.fails(tab, "evaluate", function="() => { throw new Error('nope') }")
    assert thrown["code"] == "evaluate_failed" and "nope" in thrown["message"]
    assert (await world.fails(tab, "evaluate", function="() => {"))["code"] == "evaluate_failed"


async def test_wait_for_text_to_appear_and_to_go(world: World) -> None:
    tab, page = await world.open("activity.html")
    later = ref_of(await world.ok(tab, "snapshot"), 'button "Show later"')
    await world.ok(tab, "click", target=later)
    appeared = await world.ok(tab, "wait_for", text="all DONE")
    assert appeared.startswith("### Result\nWaited for all DONE\n### Page"), appeared
    await world.ok(tab, "wait_for", textGone="Working...")
    assert (await world.fails(tab, "wait_for"))["code"] == "invalid_arguments"
    await page.close()


async def test_actions_in_a_background_tab_leave_the_persons_tab_active(world: World) -> None:
    person, person_page = await world.open("a.html")
    await person_page.bring_to_front()
    tab, page = await world.open("form.html", active=False)
    # What the person sees is read once the browser has put their tab in front, not meanwhile.
    await in_front(world.worker, tab_id=person)
    await visible(person_page)

    async def active_tabs() -> list[int]:
        tabs: list[int] = await world.worker.evaluate(
            "chrome.tabs.query({active: true}).then((found) => found.map((tab) => tab.id))"
        )
        return tabs

    async def seen() -> list[Any]:
        # Headless Chromium under Playwright may call every page visible; what counts is no change.
        return [await p.evaluate("[document.visibilityState, document.hasFocus()]") for p in (person_page, page)]

    assert person in await active_tabs() and tab not in await active_tabs()
    before = await seen()
    text = await world.ok(tab, "snapshot")
    await world.ok(tab, "click", target=ref_of(text, 'button "Buy now"'))
    await world.ok(tab, "type", target=ref_of(text, 'textbox "Name"'), text="quiet")
    await world.ok(tab, "press_key", key="Tab")
    shot = await world.act(tab, "take_screenshot")
    assert person in await active_tabs() and tab not in await active_tabs()
    assert await seen() == before
    [clicked] = await events(page, "click")
    assert clicked["isTrusted"]
    assert await page.eval_on_selector("#name", "(e) => e.value") == "quiet"
    # Headless Chromium paints background tabs; a visible window would not (capture_failed).
    assert shot.get("error") is None, shot
    assert base64.b64decode(shot["result"]["content"][1]["data"]).startswith(b"\x89PNG")
    await page.close()
    await person_page.close()


async def test_mouse_input_in_a_background_tab_reaches_the_page_move_by_move(world: World) -> None:
    # Every click and hover starts with a mouse move, which Chromium holds for the page's next
    # animation frame unless input is unbuffered; a tab behind the person's draws none. What the
    # page gets must not change with that: each move, then the press, in order, click after click
    # on a page each click changed (how long it takes is scripts/bench's business).
    _, person_page = await world.open("a.html")
    await person_page.bring_to_front()
    tab, page = await world.open("form.html", active=False)
    text = await world.ok(tab, "snapshot")
    zone = re.search(r"- generic \[ref=(e\d+)\]: Hover here$", text, re.M)
    assert zone
    buy, gift = ref_of(text, 'button "Buy now"'), ref_of(text, 'checkbox "Gift wrap"')
    assert "Secret menu" in await world.ok(tab, "hover", target=zone.group(1))
    for target in (buy, gift, buy, gift):
        await world.ok(tab, "click", target=target)
    after = await world.ok(tab, "snapshot")
    assert 'checkbox "Gift wrap" [checked]' not in after and "Bought for real" in after, after
    assert await page.evaluate("window.hovered === true")
    events = await page.evaluate("window.events")
    seen = [(e["type"], e["target"]) for e in events if e["type"] in ("mouseover", "click")]
    # The checkbox's label is clicked where the box is: the box itself is the target.
    assert [event for event in seen if event[0] == "click"] == [("click", "buy"), ("click", "gift")] * 2, seen
    assert seen[0] == ("mouseover", "hover-zone") and ("mouseover", "gift") in seen, seen
    assert await page.eval_on_selector("#gift", "(e) => e.checked") is False
    assert tab not in await world.worker.evaluate(
        "chrome.tabs.query({active: true}).then((found) => found.map((tab) => tab.id))"
    )
    await page.close()
    await person_page.close()


async def test_a_snapshot_of_a_large_page_is_no_bigger_than_playwrights(world: World) -> None:
    tab, page = await world.open("products.html?count=200")
    text = await world.ok(tab, "snapshot")
    ours = text.split("```yaml\n")[1].removesuffix("\n```")
    theirs = await page.aria_snapshot(mode="ai")
    assert len(ours) <= len(theirs), (len(ours), len(theirs))
    assert len(re.findall(r'- button "Add to cart" \[ref=e\d+\]', ours)) == 200
    assert len(re.findall(r'- link "Product \d+" \[ref=e\d+\]:\n +- /url: /product/\d+', ours)) == 200

    # Past 100,000 characters a snapshot is folded: most products stand as one line naming the
    # ref of what holds them, which shows them all.
    await world.ok(tab, "navigate", url=world.url("products.html?count=400"))
    folded = await world.ok(tab, "snapshot")
    yaml, note = folded.split("```yaml\n")[1].split("\n```\n")
    assert len(yaml) <= 100_000
    assert note.startswith("- Folded to 100000 of its "), note
    assert 'heading "All products"' in yaml and 'searchbox "Search"' in yaml and "Shop footer" in yaml
    more, role, ref = re.findall(r"… (\d+) more (\w+) like these \[ref=(e\d+)\]", yaml)[0]
    shown = len(re.findall(r'- button "Add to cart" \[ref=e\d+\]', yaml))
    assert shown + int(more) == 400, (shown, more, role)
    part = await world.ok(tab, "snapshot", target=ref, maxChars=1_000_000)
    assert len(re.findall(r'- button "Add to cart" \[ref=e\d+\]', part)) == 400
    await page.close()


async def test_bad_requests_are_answered_once_with_an_error(world: World, form: tuple[int, Page]) -> None:
    tab, _ = form
    assert (await world.fails(tab, "fly"))["code"] == "invalid_arguments"
    assert (await world.fails(tab, "click"))["code"] == "invalid_arguments"
    assert (await world.fails(tab, "click", target="#nothing-here"))["code"] == "action_failed"
    assert (await world.fails(987654, "snapshot"))["code"] == "tab_not_claimed"
    assert (await world.fails(tab, "take_screenshot", type="gif"))["code"] == "invalid_arguments"
    call = {"type": "browserAction", "sessionId": SESSION, "callId": "odd", "tabId": "x", "action": "click", "args": 3}
    await world.link.send(call)
    await world.link.wait_for("the odd answer", lambda m: m.get("callId") == "odd")
    await world.ok(tab, "snapshot")  # later than any second answer would be
    assert sum(1 for m in world.link.inbox if m.get("callId") == "odd") == 1


async def attached(world: World, tab: int) -> bool:
    """Whether the extension holds a debugger session on the tab (Playwright's own does not count)."""
    answered: bool = await world.worker.evaluate(
        """(tabId) => chrome.debugger.sendCommand({tabId}, "Runtime.evaluate", {expression: "1"})
             .then(() => true, () => false)""",
        tab,
    )
    return answered


async def test_the_debugger_leaves_a_tab_its_session_releases_or_ends(world: World) -> None:
    tab, page = await world.open("a.html")
    await world.ok(tab, "snapshot")
    assert await attached(world, tab)
    await world.link.send({"type": "tabReleased", "sessionId": SESSION, "tabId": tab})
    await eventually(lambda: not_attached(world, tab), "the debugger to leave the released tab")
    await world.claim(tab)
    await world.ok(tab, "snapshot")
    assert await attached(world, tab), "the next action, claimed again, attaches again"

    # A debugger session that ends unannounced (as when the person cancels Chromium's bar).
    await world.worker.evaluate("(tabId) => chrome.debugger.detach({tabId})", tab)
    assert not await attached(world, tab)
    assert "Page A" in await world.ok(tab, "snapshot")
    assert await attached(world, tab)

    other = "session-ending"
    await world.link.send({"type": "connect", "sessionId": other, "serverVersion": "fake"})
    await world.claim(tab, other)
    action = {"type": "browserAction", "sessionId": other, "callId": "other", "tabId": tab, "action": "snapshot"}
    await world.link.send({**action, "args": {}})
    await world.link.wait_for("the other session's snapshot", lambda m: m.get("callId") == "other")
    await world.link.send({"type": "disconnect", "sessionId": other})
    await world.link.wait_for("disconnected", lambda m: m.get("type") == "disconnected" and m.get("sessionId") == other)
    await eventually(lambda: not_attached(world, tab), "the debugger to leave the ended session's tab")
    await page.close()


async def not_attached(world: World, tab: int) -> bool:
    return not await attached(world, tab)


async def test_a_window_that_gained_a_tab_since_the_broker_checked_it_stays_open(world: World) -> None:
    window = await world.worker.evaluate(
        "chrome.windows.create({url: 'about:blank', focused: false}).then((w) => ({id: w.id, tab: w.tabs[0].id}))"
    )
    await world.claim(window["tab"])
    # The broker checked the window when it held one tab; the person opened another since.
    arrived = await world.worker.evaluate(
        "(id) => chrome.tabs.create({windowId: id, url: 'about:blank', active: false}).then((tab) => tab.id)",
        window["id"],
    )
    answer = await world.request("closeWindow", windowId=window["id"], tabIds=[window["tab"]])
    assert answer["error"]["code"] == "window_changed", answer
    assert f"tab {arrived} opened in it" in answer["error"]["message"]
    open_tabs = "(id) => chrome.tabs.query({windowId: id}).then((tabs) => tabs.map((tab) => tab.id))"
    assert sorted(await world.worker.evaluate(open_tabs, window["id"])) == sorted([window["tab"], arrived])

    answer = await world.request("closeWindow", windowId=window["id"], tabIds=[window["tab"], arrived])
    assert answer["error"]["code"] == "tab_not_claimed", "the person's tab, though the broker named it"
    await world.claim(arrived)
    answer = await world.request("closeWindow", windowId=window["id"], tabIds=[window["tab"], arrived])
    assert answer.get("error") is None, answer
    assert await world.worker.evaluate(open_tabs, window["id"]) == []


async def test_the_extension_acts_only_in_tabs_the_broker_said_the_session_holds(world: World) -> None:
    """Whatever a server on the link sends, the person's tabs are not read, called, closed or focused."""
    tab, page = await world.open("form.html", active=False, claimed=False)
    before_url = page.url

    refused = await world.fails(tab, "snapshot")
    assert refused["code"] == "tab_not_claimed", refused
    assert f"tab {tab} is not held by session" in refused["message"] and "claimed first" in refused["message"]
    assert (await world.fails(tab, "navigate", url=world.url("b.html")))["code"] == "tab_not_claimed"
    call_id = f"c{next(world.calls)}"
    await world.link.send(
        {"type": "callTool", "sessionId": SESSION, "callId": call_id, "tabId": tab, "toolName": "x", "args": {}}
    )
    called = await world.link.wait_for("callTool's answer", lambda m: m.get("callId") == call_id)
    assert called["error"]["code"] == "tab_not_claimed", called
    window = await world.worker.evaluate("(id) => chrome.tabs.get(id).then((t) => t.windowId)", tab)
    for request in ("focusWindow", "closeWindow"):
        answer = await world.request(request, windowId=window, tabIds=[tab])
        assert answer["error"]["code"] == "tab_not_claimed", answer
    await world.link.send({"type": "focusTab", "sessionId": SESSION, "tabId": tab})
    await world.link.send({"type": "closeTab", "sessionId": SESSION, "tabId": tab, "requestId": "close-1"})
    close = await world.link.wait_for("closeTab's refusal", lambda m: m.get("requestId") == "close-1")
    assert close["type"] == "error" and close["code"] == "tab_not_claimed", close
    await world.settled()
    assert not await attached(world, tab), "nothing attached the debugger to the person's tab"
    state = "(id) => chrome.tabs.get(id).then((t) => ({active: t.active, url: t.url}), () => null)"
    assert await world.worker.evaluate(state, tab) == {"active": False, "url": before_url}

    # Another session's tab is refused alike, to the session that does not hold it.
    other = "session-bystander"
    await world.link.send({"type": "connect", "sessionId": other, "serverVersion": "fake"})
    await world.claim(tab, other)
    assert (await world.fails(tab, "snapshot"))["code"] == "tab_not_claimed"
    await world.link.send({"type": "disconnect", "sessionId": other})
    await world.link.wait_for("disconnected", lambda m: m.get("type") == "disconnected" and m.get("sessionId") == other)

    # Claimed, the same requests go through; released, the tab is the person's again.
    await world.claim(tab)
    assert "Order form" in await world.ok(tab, "snapshot")
    await world.link.send({"type": "tabReleased", "sessionId": SESSION, "tabId": tab})
    await world.settled()
    assert (await world.fails(tab, "snapshot"))["code"] == "tab_not_claimed"
    await page.close()


async def test_the_extension_itself_refuses_a_call_in_a_tab_whose_call_waits_for_the_person(world: World) -> None:
    """Whatever a broker sends while an approval waits in a tab (another broker's call, or one sent
    before the broker heard of the approval), the extension refuses it with ``tab_busy``."""
    tab, page = await world.open("form.html")
    await world.approval_policy("destructive")
    try:
        evaluate = asyncio.ensure_future(world.act(tab, "evaluate", function="() => 41 + 1"))
        window = await world.context.wait_for_event(
            "page", lambda opened: "/person/approval.html" in opened.url, timeout=WAIT * 1000
        )
        await window.wait_for_selector("#agent:not(:empty)")
        # This broker never named the session's credential: the window says so and offers no "always".
        assert "did not name its credential" in await window.locator("#credential").inner_text()
        assert await window.locator("#always").is_hidden()
        busy = await world.act(tab, "navigate", url=world.url("a.html"))
        assert busy["error"]["code"] == "tab_busy", busy
        assert "an approval is waiting" in busy["error"]["message"]
        assert page.url == world.url("form.html")
        with contextlib.suppress(Exception):  # the window closes itself as it answers
            await window.get_by_role("button", name="Allow once").click()
        answered = await evaluate
        assert answered["error"] is None and "42" in json.dumps(answered["result"]), answered
        assert (await world.act(tab, "navigate", url=world.url("a.html")))["error"] is None
    finally:
        await world.approval_policy("never")
        await page.close()
