"""End to end: the real extension in headless Chromium, a real broker subprocess, real pages.

One Chromium per module (its process tree takes about 400 MB), launched with the unpacked
extension from ``extension/`` (headless, see :func:`chromium_args`); one broker started on a free
port of 8765-8785, the range the extension probes when no native messaging host is installed;
local pages served by aiohttp on 127.0.0.1 that declare tools through the extension's polyfill
(``document.modelContext.registerTool`` with an AbortSignal, and the older
``navigator.modelContext``). Tests assert what a user sees: tabs and tools in ``GET /tabs`` and
in an MCP client's list, call results and errors, list changes, tabs opened and closed by a
client. A missing Chromium fails the module loudly: these tests never skip.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
import pytest
import pytest_asyncio
from aiohttp import web
from playwright.async_api import BrowserContext, Page, Worker
from playwright.async_api import Error as PlaywrightError

from broker.core.security import PROJECT_EXTENSION_ID

from ..support.chromium import extension_chromium, probe_only, trust_broker
from ..support.cli_helpers import BrokerProcess, Brokers
from ..support.mcp_clients import LEGACY, McpClient, mcp_client, text
from ..support.probed_ports import serve_on_probed_port, start_probed_broker

pytestmark = pytest.mark.asyncio(loop_scope="module")

WAIT = 15.0

MODERN_PAGE = """<!doctype html><title>Modern tools</title><script>
const temporary = new AbortController();
document.modelContext.registerTool({
  name: "echo",
  description: "Echo the text back",
  inputSchema: {type: "object", properties: {text: {type: "string"}}, required: ["text"]},
  annotations: {readOnlyHint: true},
  execute: async ({text}) => ({echoed: text, from: location.pathname}),
});
document.modelContext.registerTool({
  name: "fail",
  description: "Always throws",
  inputSchema: {type: "object", properties: {}},
  execute: () => { throw new Error("the page says no"); },
});
document.modelContext.registerTool(
  {name: "temporary", description: "Goes away", inputSchema: {type: "object"}, execute: () => "here"},
  {signal: temporary.signal},
);
window.dropTemporary = () => temporary.abort();
window.addLater = () => document.modelContext.registerTool({
  name: "later", description: "Registered after load", inputSchema: {type: "object"}, execute: () => "late",
});
</script><p>modern</p>"""

LEGACY_PAGE = """<!doctype html><title>Legacy tools</title><script>
navigator.modelContext.provideContext({tools: [{
  name: "add",
  description: "Add two numbers",
  inputSchema: {type: "object", properties: {a: {type: "number"}, b: {type: "number"}}},
  execute: async ({a, b}) => ({content: [{type: "text", text: String(a + b)}]}),
}]});
navigator.modelContext.registerTool({
  name: "shout",
  description: "Upper-case the text",
  inputSchema: {type: "object", properties: {text: {type: "string"}}},
  execute: ({text}) => text.toUpperCase(),
});
window.dropShout = () => navigator.modelContext.unregisterTool("shout");
</script><p>legacy</p>"""

SLOW_PAGE = """<!doctype html><title>Slow tools</title><script>
document.modelContext.registerTool({
  name: "wait",
  description: "Never answers",
  inputSchema: {type: "object"},
  execute: () => { window.waiting = true; return new Promise(() => {}); },
});
</script><p>slow</p>"""

PLAIN_PAGE = "<!doctype html><title>Plain</title><p>no tools here</p>"

PAGES = {"modern.html": MODERN_PAGE, "legacy.html": LEGACY_PAGE, "slow.html": SLOW_PAGE, "plain.html": PLAIN_PAGE}


def tool_prefix(names: list[str], tab: dict[str, Any]) -> str:
    """How the broker's MCP names start for ``tab``: ``t12_``, or ``b2_t12_`` when ids are shared."""
    short = f"t{tab['id']}_"
    return short if any(n.startswith(short) for n in names) else f"{tab['browser']}_{short}"


async def eventually(check: Callable[[], Awaitable[Any]], what: str, within: float = WAIT) -> Any:
    """Poll ``check`` until it returns something truthy; fail naming ``what``."""
    last: Any = None
    try:
        async with asyncio.timeout(within):
            while not last:
                last = await check()
                if not last:
                    await asyncio.sleep(0.1)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}; last seen: {last!r}") from None
    return last


class World:
    """The browser, the broker and the page server of this module."""

    def __init__(
        self, context: BrowserContext, worker: Worker, broker: BrokerProcess, token: str, site: str, flavour: str
    ):
        self.flavour = flavour
        self.instance_id = ""
        self.browser_key = ""
        self.context = context
        self.worker = worker
        self.broker = broker
        self.token = token
        self.site = site
        self.http = aiohttp.ClientSession(
            f"http://127.0.0.1:{broker.port}", headers={"Authorization": f"Bearer {token}"}
        )

    def url(self, page: str, tag: str) -> str:
        return f"{self.site}/{page}?{tag}"

    async def get(self, path: str) -> Any:
        async with self.http.get(path) as response:
            assert response.status == 200, await response.text()
            return await response.json()

    async def post(self, path: str, body: Any) -> tuple[int, Any]:
        async with self.http.post(path, json=body) as response:
            return response.status, await response.json()

    async def browser(self) -> dict[str, Any] | None:
        """This browser as the broker lists it (other browsers may join a broker in the range)."""
        browsers = (await self.get("/status"))["browsers"]
        return next((b for b in browsers if b["instanceId"] == self.instance_id), None)

    async def tabs(self) -> list[dict[str, Any]]:
        return [t for t in (await self.get("/tabs"))["tabs"] if t["browser"] == self.browser_key]

    async def tab_at(self, url: str, tools: set[str] | None = None) -> dict[str, Any]:
        """The broker's tab showing ``url``, once it reports ``tools`` (when given)."""

        async def find() -> dict[str, Any] | None:
            for tab in await self.tabs():
                if tab["url"] == url and (tools is None or {t["name"] for t in tab["tools"]} == tools):
                    return tab
            return None

        return await eventually(find, f"a tab at {url} with tools {tools}")

    async def claim(self, ref: str) -> None:
        """Make a tab the default REST session's, as calling its page tools needs."""
        status, body = await self.post(f"/tabs/{ref}/claim", {})
        assert status == 200, body

    async def open_page(self, page: str, tag: str, tools: set[str] | None = None) -> tuple[Page, dict[str, Any]]:
        browser_page = await self.context.new_page()
        await browser_page.goto(self.url(page, tag))
        return browser_page, await self.tab_at(self.url(page, tag), tools)

    async def joined(self) -> None:
        """Wait for this browser's snapshot and learn its instance id and its key in the broker."""

        async def stored() -> str | None:
            return await self.worker.evaluate(
                "chrome.storage.local.get('instanceId').then((v) => v.instanceId ?? null)"
            )

        self.instance_id = await eventually(stored, "the extension to choose its instance id")
        browser = await eventually(self.browser, "the extension to join the broker")
        self.browser_key = browser["browser"]

    def mcp(self, name: str) -> contextlib.AbstractAsyncContextManager[McpClient]:
        return mcp_client(f"http://127.0.0.1:{self.broker.port}/mcp", self.token, name, LEGACY)


@contextlib.asynccontextmanager
async def serve_pages(pages: dict[str, str]) -> AsyncIterator[str]:
    """``pages`` (file name -> HTML) served on 127.0.0.1, a secure context; yields the site's URL."""

    async def serve(request: web.Request) -> web.Response:
        body = pages.get(request.match_info["name"])
        if body is None:
            raise web.HTTPNotFound()
        return web.Response(text=body, content_type="text/html")

    app = web.Application()
    app.router.add_get("/{name}", serve)
    async with serve_app(app) as url:
        yield url


@contextlib.asynccontextmanager
async def serve_app(app: web.Application) -> AsyncIterator[str]:
    """``app`` served on a free port of 127.0.0.1; yields its URL."""
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


WorldT = TypeVar("WorldT", bound=World)


@contextlib.asynccontextmanager
async def open_world(
    home: Path,
    site: str,
    kind: type[WorldT],
    flavour: str = "polyfill",
    extra_args: tuple[str, ...] = (),
    probed: bool = True,
    **launch: Any,
) -> AsyncIterator[WorldT]:
    """A broker on a probed port, and headless Chromium with the extension, once it has joined.

    Not ``probed``: the broker takes any free port and the extension is told to look there
    alone, so that no other run's broker or browser meets this one."""
    async with Brokers(home / "discovery") as brokers:
        broker = await (start_probed_broker(brokers) if probed else brokers.start())
        async with extension_chromium(home, *extra_args, wait=WAIT, **launch) as (context, worker):
            await trust_broker(worker, broker.token)
            if not probed:
                await probe_only(worker, broker.port)
            world = kind(context, worker, broker, broker.token, site, flavour)
            try:
                await world.joined()
                yield world
            finally:
                await world.http.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def site() -> AsyncIterator[str]:
    async with serve_pages(PAGES) as url:
        yield url


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["polyfill", "native"])
async def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, site: str
) -> AsyncIterator[World]:
    """The browser of one WebMCP flavour: the extension's polyfill, or Chromium's own WebMCP.

    Module-scoped and parametrized, so pytest runs every test against one browser, closes it,
    then runs them all against the other: one Chromium at a time.
    """
    flags = ("--enable-features=WebMCP",) if request.param == "native" else ()
    async with open_world(tmp_path_factory.mktemp("e2e"), site, World, request.param, flags) as world:
        yield world


async def test_the_extension_joins_the_broker_with_its_browser_and_tabs(world: World) -> None:
    browser = await world.browser()
    assert browser is not None
    assert browser["connected"]
    assert browser["name"]
    major, *rest = browser["version"].split(".")
    assert major.isdigit()
    assert rest != ["0", "0", "0"], "the full version, not the user agent's reduced one"
    page, tab = await world.open_page("plain.html", "joins")
    assert tab["tools"] == []

    async def titled() -> bool:
        return any(t["id"] == tab["id"] and t["title"] == "Plain" for t in await world.tabs())

    # The tab is reported when it starts loading; its title follows in an update.
    await eventually(titled, "the tab's title to reach the broker")
    await page.close()
    await eventually(
        lambda: _absent(world, tab["id"]),
        "the closed tab to leave the broker's list",
    )


async def stop_worker(world: World, page: Page) -> None:
    """Stop the extension's service worker, as Chromium does an idle one, and wait until the broker
    has seen its link close."""
    cdp = await world.context.new_cdp_session(page)
    targets = (await cdp.send("Target.getTargets"))["targetInfos"]
    worker_target = next(t for t in targets if t["type"] == "service_worker" and t["url"] == world.worker.url)
    await cdp.send("Target.closeTarget", {"targetId": worker_target["targetId"]})
    await cdp.detach()

    async def detached() -> bool:
        browser = await world.browser()
        return browser is not None and not browser["connected"]

    await eventually(detached, "the broker to see the stopped worker's link close")


async def _absent(world: World, tab_id: int) -> bool:
    return all(t["id"] != tab_id for t in await world.tabs())


async def test_pages_get_the_webmcp_of_the_browser_or_the_polyfill(world: World) -> None:
    page, _ = await world.open_page("modern.html", "flavour", {"echo", "fail", "temporary"})
    getter = await page.evaluate("String(Object.getOwnPropertyDescriptor(Document.prototype, 'modelContext').get)")
    assert ("[native code]" in getter) == (world.flavour == "native"), getter
    await page.close()


async def test_page_tools_reach_an_mcp_client_and_answer_it(world: World) -> None:
    page, tab = await world.open_page("modern.html", "mcp", {"echo", "fail", "temporary"})
    echo = next(t for t in tab["tools"] if t["name"] == "echo")
    assert echo["description"] == "Echo the text back"
    assert echo["inputSchema"]["required"] == ["text"]
    async with world.mcp("e2e-client") as client:
        await client.call_json("tabs", {"action": "claim", "tab": tab["ref"]})
        names = await client.tool_names()
        prefix = tool_prefix(names, tab)
        assert {prefix + "echo", prefix + "fail", prefix + "temporary"} <= set(names)

        result = await client.call(prefix + "echo", {"text": "hello"})
        assert not result.is_error, text(result)
        assert json.loads(text(result)) == {"echoed": "hello", "from": "/modern.html"}

        failed = await client.call(prefix + "fail")
        assert failed.is_error
        assert "the page says no" in text(failed)

        before = client.changes.count
        await page.evaluate("dropTemporary()")
        await client.changes.next(after=before)
        await eventually(
            lambda: _without(client, prefix + "temporary"),
            "the aborted tool to leave the client's list",
        )
        assert prefix + "echo" in await client.tool_names()

        before = client.changes.count
        await page.evaluate("addLater()")
        await client.changes.next(after=before)
        await eventually(lambda: _with(client, prefix + "later"), "the newly registered tool to reach the client")
        late = await client.call(prefix + "later")
        assert not late.is_error and text(late) == "late", text(late)
    await page.close()


async def _without(client: McpClient, name: str) -> bool:
    return name not in await client.tool_names()


async def _with(client: McpClient, name: str) -> bool:
    return name in await client.tool_names()


async def test_the_older_navigator_api_works_through_rest(world: World) -> None:
    page, tab = await world.open_page("legacy.html", "rest", {"add", "shout"})
    await world.claim(tab["ref"])
    status, body = await world.post(f"/tabs/{tab['ref']}/tools/add", {"a": 2, "b": 3})
    assert status == 200, body
    assert body["result"] == {"content": [{"type": "text", "text": "5"}]}
    status, body = await world.post(f"/tabs/{tab['ref']}/tools/shout", {"text": "hey"})
    assert status == 200, body
    assert body["result"] == "HEY"

    await page.evaluate("dropShout()")
    await world.tab_at(world.url("legacy.html", "rest"), {"add"})
    await page.close()


async def test_a_call_fails_when_its_page_navigates_away(world: World) -> None:
    page, tab = await world.open_page("slow.html", "away", {"wait"})
    await world.claim(tab["ref"])
    call = asyncio.ensure_future(world.post(f"/tabs/{tab['ref']}/tools/wait", {}))
    await eventually(lambda: page.evaluate("window.waiting === true"), "the tool to start running")
    await page.goto(world.url("plain.html", "away"))
    async with asyncio.timeout(WAIT):
        status, body = await call
    assert status != 200
    assert "went away" in body["error"]["message"]
    await world.tab_at(world.url("plain.html", "away"), set())
    await page.close()


async def test_a_page_without_tools_is_left_alone_until_it_declares_one(world: World) -> None:
    """Most pages declare no tool: they get no script of ours but the polyfill in their own world and
    waker.js, idle, in the extension's (one world, which the bridge joins later), and the worker
    takes their silence for no tools, the tools of the page before included. The page's first tool
    brings the bridge, and its tools work."""
    page, tab = await world.open_page("modern.html", "quiet", {"echo", "fail", "temporary"})
    await page.goto(world.url("plain.html", "quiet"))
    await world.tab_at(world.url("plain.html", "quiet"), set())
    reached = await world.worker.evaluate(
        """(tabId) => chrome.tabs.sendMessage(tabId, {kind: "browser-mcp/call", id: 1, name: "echo", args: {}})
             .then(() => "answered", (error) => error.message)""",
        tab["id"],
    )
    assert "Receiving end does not exist" in reached, reached
    await page.close()

    page, tab = await world.open_page("plain.html", "quieter", set())
    # A client asking for the page's tools looks in the page's world only.
    body = await world.get(f"/tabs/{tab['ref']}/tools?refresh=true")
    assert body["tools"] == [], body
    assert await our_worlds(world, page) == 1
    assert await scripts_in(world, tab["id"]) == {"bridge": False, "forms": False}
    await page.evaluate(
        """document.modelContext.registerTool({
             name: "woken", description: "Registered after load", inputSchema: {type: "object"},
             execute: () => "awake"})"""
    )
    await world.tab_at(world.url("plain.html", "quieter"), {"woken"})
    assert await our_worlds(world, page) == 1
    # Where the polyfill keeps the tools, the forms' machinery comes with the bridge.
    assert await scripts_in(world, tab["id"]) == {"bridge": True, "forms": world.flavour == "polyfill"}
    await world.claim(tab["ref"])
    status, body = await world.post(f"/tabs/{tab['ref']}/tools/woken", {})
    assert status == 200, body
    assert body["result"] == "awake"
    await page.close()


async def our_worlds(world: World, page: Page) -> int:
    """How many of the extension's isolated worlds the page's top document holds, as Chromium's
    DevTools list its script contexts (a look through the extension would build one)."""
    devtools = await world.context.new_cdp_session(page)
    contexts: list[dict[str, Any]] = []
    devtools.on("Runtime.executionContextCreated", lambda event: contexts.append(event["context"]))
    try:
        tree = await devtools.send("Page.getFrameTree")
        # Chromium reports every existing context before it answers.
        await devtools.send("Runtime.enable")
    finally:
        await devtools.detach()
    top = tree["frameTree"]["frame"]["id"]
    return sum(
        1
        for context in contexts
        if context.get("auxData", {}).get("frameId") == top
        and context.get("origin", "").startswith(f"chrome-extension://{PROJECT_EXTENSION_ID}")
    )


async def scripts_in(world: World, tab_id: int) -> dict[str, bool]:
    """Which of the extension's scripts the tab's top document holds beside the polyfill: the bridge
    and the forms' machinery."""
    found: dict[str, bool] = await world.worker.evaluate(
        """async (tabId) => {
             const target = {tabId, frameIds: [0]};
             const [isolated] = await chrome.scripting.executeScript({target,
               func: () => Boolean(globalThis[Symbol.for("browser-mcp.bridge")]?.tools)});
             const [main] = await chrome.scripting.executeScript({target, world: "MAIN",
               func: () => Boolean(Document.prototype[Symbol.for("browser-mcp.polyfill")]?.forms)});
             return {bridge: isolated.result, forms: main.result};
           }""",
        tab_id,
    )
    return found


async def test_a_tool_form_brings_the_forms_machinery_and_the_bridge(world: World) -> None:
    """A page's first tool form, added after its load, has the worker put the forms' machinery and
    the bridge in (where Chromium has WebMCP of its own, its forms are its own: only the bridge);
    the form is then a tool."""
    page, tab = await world.open_page("plain.html", "late-form", set())
    assert await scripts_in(world, tab["id"]) == {"bridge": False, "forms": False}
    await page.evaluate(
        """() => document.body.insertAdjacentHTML("beforeend",
             `<form toolname="subscribe" tooldescription="Subscribe to the letter" toolautosubmit
                    onsubmit="event.preventDefault(); event.respondWith(Promise.resolve('subscribed'))">
                <input name="email" type="email" required></form>`)"""
    )
    await world.tab_at(world.url("plain.html", "late-form"), {"subscribe"})
    polyfilled = world.flavour == "polyfill"
    assert await scripts_in(world, tab["id"]) == {"bridge": True, "forms": polyfilled}
    await world.claim(tab["ref"])
    status, body = await world.post(f"/tabs/{tab['ref']}/tools/subscribe", {"email": "a@example.com"})
    assert status == 200, body
    assert "subscribed" in json.dumps(body["result"]), body
    await page.close()


async def test_a_page_whose_call_for_its_bridge_was_lost_gets_it_when_a_client_asks(world: World) -> None:
    """The polyfill asks the worker for the bridge once, through waker.js; should that request be
    lost (here the page broke the window event that carries it; the worker may also stop as it
    comes), the page's tools are not: a client that asks for them has the bridge put in."""
    page, tab = await world.open_page("plain.html", "lost-wake", set())
    await page.evaluate("EventTarget.prototype.dispatchEvent = () => true")
    await page.evaluate(
        """document.modelContext.registerTool({
             name: "late", description: "Registered while no bridge came", inputSchema: {type: "object"},
             execute: () => "here"})"""
    )
    assert await scripts_in(world, tab["id"]) == {"bridge": False, "forms": False}
    body = await world.get(f"/tabs/{tab['ref']}/tools?refresh=true")
    assert [tool["name"] for tool in body["tools"]] == ["late"], body
    assert (await scripts_in(world, tab["id"]))["bridge"]
    await page.close()


async def test_a_page_cannot_message_the_extension_and_its_forged_signals_bring_only_its_own_bridge(
    world: World,
) -> None:
    """The page's world has no extension messaging (the manifest names no web page in
    externally_connectable). What a page can do is dispatch the polyfill's signal to waker.js, again
    and again: that brings a bridge into its own document alone, once; its tools declared later are
    heard, and another tab's page and its tools are untouched."""
    page, tab = await world.open_page("plain.html", "forger", set())
    other, other_tab = await world.open_page("plain.html", "bystander", set())
    assert await page.evaluate("typeof globalThis.chrome?.runtime?.sendMessage") == "undefined"
    await page.evaluate(
        """for (let i = 0; i < 10000; i++) window.dispatchEvent(new Event("browser-mcp-wake", {cancelable: true}))"""
    )
    await page.evaluate(
        """document.modelContext.registerTool({
             name: "forger_own", description: "Its own", inputSchema: {type: "object"}, execute: () => "mine"})"""
    )
    await world.tab_at(world.url("plain.html", "forger"), {"forger_own"})
    assert (await scripts_in(world, tab["id"]))["bridge"]
    assert await scripts_in(world, other_tab["id"]) == {"bridge": False, "forms": False}
    await other.evaluate(
        """document.modelContext.registerTool({
             name: "honest", description: "Still heard", inputSchema: {type: "object"}, execute: () => "ok"})"""
    )
    await world.tab_at(world.url("plain.html", "bystander"), {"honest"})
    await world.claim(other_tab["ref"])
    status, body = await world.post(f"/tabs/{other_tab['ref']}/tools/honest", {})
    assert (status, body["result"]) == (200, "ok"), body
    await page.close()
    await other.close()


async def test_a_page_restored_from_history_has_its_tools_again(world: World) -> None:
    page, _tab = await world.open_page("modern.html", "history", {"echo", "fail", "temporary"})
    await page.goto(world.url("plain.html", "history"))
    await world.tab_at(world.url("plain.html", "history"), set())
    await page.go_back()
    await world.tab_at(world.url("modern.html", "history"), {"echo", "fail", "temporary"})
    await page.close()


async def test_a_page_kept_in_the_back_forward_cache_declares_its_tools_again(tmp_path: Path, site: str) -> None:
    """A page restored from the back-forward cache is the document that declared its tools, not a
    new one: its bridge says so again (Playwright turns the cache off; this browser has it on)."""
    launch = {"ignore_default_args": ["--disable-back-forward-cache"]}
    async with open_world(tmp_path, site, World, **launch) as world:
        page, _tab = await world.open_page("modern.html", "cached", {"echo", "fail", "temporary"})
        await page.evaluate("addEventListener('pageshow', (event) => { window.restored = event.persisted; })")
        await page.goto(world.url("plain.html", "cached"))
        await world.tab_at(world.url("plain.html", "cached"), set())
        # A restored page fires no load event, which go_back would wait for.
        await page.go_back(wait_until="commit")
        restored = await eventually(lambda: page.evaluate("window.restored ?? null"), "the page to be shown again")
        assert restored is True, "the page was loaded again, not restored from the cache"
        await world.tab_at(world.url("modern.html", "cached"), {"echo", "fail", "temporary"})
        await page.close()


async def test_a_page_without_a_bridge_is_listed_without_the_tools_of_the_one_before(world: World) -> None:
    # An error page has no bridge to report its tools: the worker takes a document that said
    # nothing for one without tools, not for the page before.
    page, _tab = await world.open_page("modern.html", "error-page", {"echo", "fail", "temporary"})
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{unused.getsockname()[1]}/nothing-here"
    with contextlib.suppress(PlaywrightError):
        await page.goto(refused)
    await world.tab_at(refused, set())
    await page.close()


async def test_restricted_pages_are_listed_without_tools(world: World) -> None:
    page = await world.context.new_page()
    await page.goto("chrome://version/")
    tab = await world.tab_at("chrome://version/")
    assert tab["tools"] == []
    await page.close()


async def test_a_client_opens_a_tab_in_its_group_and_closes_it(world: World) -> None:
    url = world.url("modern.html", "opened")
    async with world.mcp("Opening Client") as client:
        # Named, since a browser of another test run on this machine may join the same broker.
        opened = await client.call_json("tabs", {"action": "open", "url": url, "browser": world.browser_key})
        tab_id, ref = opened["opened"]["id"], opened["opened"]["ref"]
        await eventually(lambda: _tab_shows(world, tab_id, url), "the browser to show the opened tab")
        assert await group_title(world, tab_id) == "Opening Client"
        tab = await world.tab_at(url, {"echo", "fail", "temporary"})
        assert tab["owner"]["name"] == "Opening Client"
        names = await client.tool_names()
        assert tool_prefix(names, tab) + "echo" in names

        await client.call_json("tabs", {"action": "close", "tab": ref})
        await eventually(lambda: _absent(world, tab_id), "the closed tab to leave the broker's list")
        await eventually(lambda: _tab_gone(world, tab_id), "the browser to close the tab")


async def test_two_clients_get_their_own_groups_and_cannot_use_each_others_tabs(world: World) -> None:
    async with world.mcp("Client One") as one, world.mcp("Client Two") as two:
        opened = []
        for client, tag in ((one, "one"), (two, "two")):
            url = world.url("modern.html", f"owned-by-{tag}")
            answer = await client.call_json("tabs", {"action": "open", "url": url, "browser": world.browser_key})
            opened.append(await world.tab_at(url, {"echo", "fail", "temporary"}))
            assert answer["opened"]["id"] == opened[-1]["id"]
        first, second = opened
        assert await group_title(world, first["id"]) == "Client One"
        assert await group_title(world, second["id"]) == "Client Two"

        refused = await two.call("call_page_tool", {"tab": first["ref"], "tool": "echo", "arguments": {"text": "x"}})
        assert refused.is_error and "tab_owned" in text(refused) and "Client One" in text(refused)
        refused = await one.call("tabs", {"action": "close", "tab": second["ref"]})
        assert refused.is_error and "Client Two" in text(refused)
        mine = await one.call("call_page_tool", {"tab": first["ref"], "tool": "echo", "arguments": {"text": "mine"}})
        assert not mine.is_error and json.loads(text(mine))["echoed"] == "mine"
        for client, tab in ((one, first), (two, second)):
            await client.call_json("tabs", {"action": "close", "tab": tab["ref"]})


async def test_a_claimed_tab_is_shown_in_the_clients_group_until_released(world: World) -> None:
    page, tab = await world.open_page("modern.html", "claimed", {"echo", "fail", "temporary"})
    assert await group_title(world, tab["id"]) is None
    async with world.mcp("Claiming Client") as client:
        await client.call_json("tabs", {"action": "claim", "tab": tab["ref"]})
        await eventually(lambda: _grouped_as(world, tab["id"], "Claiming Client"), "the claimed tab to join the group")
        # Asking the page afresh goes through the extension's discoverTools.
        listed = await client.call_json("page_tools", {"tab": tab["ref"], "refresh": True})
        assert {t["name"] for t in listed["tools"]} == {"echo", "fail", "temporary"}

        await client.call_json("tabs", {"action": "release", "tab": tab["ref"]})
        await eventually(lambda: _grouped_as(world, tab["id"], None), "the released tab to leave the group")
        await client.call_json("tabs", {"action": "claim", "tab": tab["ref"]})
        await eventually(lambda: _grouped_as(world, tab["id"], "Claiming Client"), "the tab to join the group again")
    # The session ended, so its tabs are released, and left open.
    await eventually(lambda: _grouped_as(world, tab["id"], None), "the ended session's group to go")
    assert not await _tab_gone(world, tab["id"])
    await page.close()


async def _grouped_as(world: World, tab_id: int, title: str | None) -> bool:
    return await group_title(world, tab_id) == title


async def group_title(world: World, tab_id: int) -> str | None:
    title: str | None = await world.worker.evaluate(
        """async (id) => {
            const tab = await chrome.tabs.get(id);
            // A group emptied meanwhile is gone before the tab's groupId says so.
            if (tab.groupId === -1) return null;
            const group = await chrome.tabGroups.get(tab.groupId).catch(() => null);
            return group?.title ?? null;
        }""",
        tab_id,
    )
    return title


# Asked of the browser's own tabs API: Playwright's page list can trail tabs an extension opens.
async def _tab_shows(world: World, tab_id: int, url: str) -> bool:
    shown = await world.worker.evaluate(
        "async (id) => { try { const t = await chrome.tabs.get(id); return t.url || t.pendingUrl; }"
        " catch { return null; } }",
        tab_id,
    )
    return bool(shown == url)


async def _tab_gone(world: World, tab_id: int) -> bool:
    exists = await world.worker.evaluate(
        "async (id) => { try { await chrome.tabs.get(id); return true; } catch { return false; } }", tab_id
    )
    return not exists


async def test_a_client_focuses_and_closes_only_its_own_tabs(world: World) -> None:
    first, first_tab = await world.open_page("plain.html", "focus-1")
    second, second_tab = await world.open_page("plain.html", "focus-2")
    assert await _active(world, second_tab["id"])
    async with world.mcp("Focusing Client") as client:
        for action in ("focus", "close"):
            refused = await client.call("tabs", {"action": action, "tab": first_tab["ref"]})
            assert refused.is_error and text(refused).startswith("tab_not_claimed:"), text(refused)
        assert not await _tab_gone(world, first_tab["id"]), "the person's tab stays open"
        await client.call_json("tabs", {"action": "claim", "tab": first_tab["ref"]})
        assert await _active(world, second_tab["id"]), "neither the refusal nor the claim brings a tab forward"
        await client.call_json("tabs", {"action": "focus", "tab": first_tab["ref"]})
        await eventually(lambda: _active(world, first_tab["id"]), "the browser to bring the tab to the front")

        async def reported() -> bool:
            return any(t["id"] == first_tab["id"] and t["active"] for t in await world.tabs())

        await eventually(reported, "the broker to hear which tab is in front")
    await first.close()
    await second.close()


async def _active(world: World, tab_id: int) -> bool:
    return bool(await world.worker.evaluate("async (id) => (await chrome.tabs.get(id)).active", tab_id))


async def test_the_extension_joins_every_paired_broker_in_the_port_range(world: World, tmp_path: Path) -> None:
    url = world.url("modern.html", "second-broker")
    page, _ = await world.open_page("modern.html", "second-broker", {"echo", "fail", "temporary"})
    async with Brokers(tmp_path / "discovery") as brokers:
        second = await start_probed_broker(brokers)
        token = second.token
        await trust_broker(world.worker, token)
        async with aiohttp.ClientSession(
            f"http://127.0.0.1:{second.port}", headers={"Authorization": f"Bearer {token}"}
        ) as http:

            async def listed() -> dict[str, Any] | None:
                async with http.get("/tabs") as response:
                    tabs = (await response.json())["tabs"]
                return next((t for t in tabs if t["url"] == url and len(t["tools"]) == 3), None)

            # The extension probes the range again with backoff (at most 2 s apart).
            tab = await eventually(listed, "the extension to join a second broker", within=WAIT * 2)
            async with http.post(f"/tabs/{tab['ref']}/claim") as response:
                assert response.status == 200, await response.text()
            async with http.post(f"/tabs/{tab['ref']}/tools/echo", json={"text": "both"}) as response:
                assert response.status == 200, await response.text()
                assert (await response.json())["result"] == {"echoed": "both", "from": "/modern.html"}
    assert (await world.browser() or {}).get("connected"), "the first broker lost the browser"
    await page.close()


async def test_a_tab_one_broker_holds_is_refused_to_another_brokers_claim_naming_the_holder(
    world: World, tmp_path: Path
) -> None:
    url = world.url("modern.html", "held")
    page, first_tab = await world.open_page("modern.html", "held", {"echo", "fail", "temporary"})
    await world.claim(first_tab["ref"])
    async with Brokers(tmp_path / "discovery") as brokers:
        second = await start_probed_broker(brokers)
        await trust_broker(world.worker, second.token)
        headers = {"Authorization": f"Bearer {second.token}", "X-Session-Name": "Second Agent"}
        async with aiohttp.ClientSession(f"http://127.0.0.1:{second.port}", headers=headers) as http:

            async def listed() -> dict[str, Any] | None:
                async with http.get("/tabs") as response:
                    tabs = (await response.json())["tabs"]
                return next((t for t in tabs if t["url"] == url and len(t["tools"]) == 3), None)

            tab = await eventually(listed, "the extension to join a second broker", within=WAIT * 2)
            async with http.post(f"/tabs/{tab['ref']}/claim") as response:
                body = await response.json()
                assert response.status == 409 and body["error"]["code"] == "tab_owned", body
                assert f"the broker on port {world.broker.port}" in body["error"]["message"], body
            async with http.get("/tabs") as response:
                again = next(t for t in (await response.json())["tabs"] if t["id"] == tab["id"])
            assert again["owner"] is None, "the refused claim was undone"
            status, body = await world.post(f"/tabs/{first_tab['ref']}/tools/echo", {"text": "still mine"})
            assert status == 200 and body["result"]["echoed"] == "still mine", body
            # Released by its holder, the tab may be claimed by the other broker's session.
            status, body = await world.post(f"/tabs/{first_tab['ref']}/release", {})
            assert status == 200, body
            async with http.post(f"/tabs/{tab['ref']}/claim") as response:
                assert response.status == 200, await response.text()
    await page.close()


async def test_another_programs_server_in_the_port_range_gets_no_websocket(world: World) -> None:
    """The extension probes with plain requests and opens a link only where a broker answers."""
    requests: list[web.Request] = []
    three = asyncio.Event()

    async def answer(request: web.Request) -> web.Response:
        requests.append(request)
        if len(requests) >= 3:
            three.set()
        return web.Response(status=404, text="not a broker")

    app = web.Application()
    app.router.add_route("*", "/{anything:.*}", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        await serve_on_probed_port(runner)
        # The extension sweeps the range at least every 2 s.
        async with asyncio.timeout(WAIT):
            await three.wait()
        upgrades = [r.headers.get("Upgrade") for r in requests if r.headers.get("Upgrade")]
        assert upgrades == [], "the extension opened a WebSocket to a server that is not a broker"
    finally:
        await runner.cleanup()


async def test_the_extension_rejoins_a_broker_restarted_on_its_port(world: World, tmp_path: Path) -> None:
    url = world.url("legacy.html", "broker-restart")
    page, _ = await world.open_page("legacy.html", "broker-restart", {"add", "shout"})
    async with Brokers(tmp_path / "discovery") as brokers:
        before = await start_probed_broker(brokers)
        # Paired once: the restarted broker keeps its token (the token file), so it is believed too.
        await trust_broker(world.worker, before.token)
        tab = await eventually(lambda: _listed(before, url), "the extension to join the broker")
        # A script's session (REST) claims the tab: the browser groups it under the session's name.
        claimed = await _claim(before, tab["ref"], "Old Client")
        assert claimed == 200
        await eventually(lambda: _grouped_as(world, tab["id"], "Old Client"), "the claimed tab to be grouped")
        popup = await world.context.new_page()
        await popup.goto(f"chrome-extension://{PROJECT_EXTENSION_ID}/person/popup.html")
        await eventually(lambda: _popup_lists_session(popup, "Old Client"), "the popup to show the session")
        before.send_signal(signal.SIGTERM)
        await before.exited()
        await eventually(
            lambda: _popup_says(popup, f"Port {before.port}: reconnecting"), "the popup to show the broker is gone"
        )
        after = await brokers.start(port=before.port)
        # The extension looks again half a second after a link closes, then backs off.
        tab = await eventually(lambda: _listed(after, url), "the extension to rejoin the restarted broker")
        assert {t["name"] for t in tab["tools"]} == {"add", "shout"}
        await eventually(lambda: _popup_says(popup, f"Port {after.port}: connected"), "the popup to show it is back")
        # The new broker has no such session: the extension forgets it and ungroups its tab.
        await eventually(lambda: _grouped_as(world, tab["id"], None), "the old session's group to go")
        assert not await _popup_lists_session(popup, "Old Client")
        await popup.close()
    await page.close()


async def _claim(broker: BrokerProcess, ref: str, client_name: str) -> int:
    token = broker.token
    session_id = client_name.lower().replace(" ", "-")
    headers = {"Authorization": f"Bearer {token}", "X-Session-Id": session_id, "X-Session-Name": client_name}
    async with (
        aiohttp.ClientSession(headers=headers) as http,
        http.post(f"http://127.0.0.1:{broker.port}/tabs/{ref}/claim") as response,
    ):
        return response.status


async def _popup_says(popup: Page, line: str) -> bool:
    """Whether a line of the popup's broker list starts with ``line`` (the broker's version may
    follow); it asks the worker again every two seconds."""
    return any(shown.startswith(line) for shown in (await popup.locator("#brokers").inner_text()).splitlines())


async def _popup_lists_session(popup: Page, name: str) -> bool:
    return name in await popup.locator("#sessions").inner_text()


async def _listed(broker: BrokerProcess, url: str) -> dict[str, Any] | None:
    token = broker.token
    async with (
        aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as http,
        http.get(f"http://127.0.0.1:{broker.port}/tabs") as response,
    ):
        tabs = (await response.json())["tabs"]
    return next((t for t in tabs if t["url"] == url and t["tools"]), None)


async def test_the_popup_shows_brokers_sessions_tabs_and_tools(world: World) -> None:
    page, tab = await world.open_page("modern.html", "popup", {"echo", "fail", "temporary"})
    popup = await world.context.new_page()
    async with world.mcp("Popup Client") as client:
        # A browser hears of a session once it acts there (docs/extension-link.md).
        await client.call_json("tabs", {"action": "claim", "tab": tab["ref"]})
        await popup.goto(f"chrome-extension://{PROJECT_EXTENSION_ID}/person/popup.html")
        body = popup.locator("body")

        async def shown() -> str | None:
            seen = await body.inner_text()
            return seen if "Popup Client" in seen and "Modern tools" in seen else None

        # The popup asks the worker again every two seconds while it is open.
        seen = await eventually(shown, "the popup to show the client's session and the tab")
        brokers = await popup.locator("#brokers").inner_text()
        assert f"Port {world.broker.port}: connected" in brokers, brokers
        sessions = await popup.locator("#sessions").inner_text()
        assert "Popup Client" in sessions and f"port {world.broker.port}" in sessions, sessions
        tabs = await popup.locator("#tabs").inner_text()
        assert "Modern tools" in tabs, tabs
        assert world.url("modern.html", "popup") in tabs, tabs
        assert "echo" in tabs and "temporary" in tabs, tabs
        # No native messaging host is installed in this profile: the popup says so and how.
        native = await popup.locator("#native").inner_text()
        assert "Native host missing" in native, native
        assert "browser-mcp install-native-host" in native, native
        assert "8765-8785" in native, native
        assert "Cannot reach" not in seen
    await popup.close()
    await page.close()


async def test_a_restarted_service_worker_rebuilds_tabs_and_tools(world: World) -> None:
    """MV3 stops workers at will: a new one rejoins as the same browser and asks pages for tools.

    Last in the module: Playwright does not hand out the new worker, so ``world.worker`` is stale.
    """
    page, tab = await world.open_page("modern.html", "restart", {"echo", "fail", "temporary"})
    # Claimed before the worker stops: the new one must still know whose tab it is and its group.
    headers = {"X-Session-Id": "kept-client", "X-Session-Name": "Kept Client"}
    async with world.http.post(f"/tabs/{tab['ref']}/claim", headers=headers) as response:
        assert response.status == 200, await response.text()
    await eventually(lambda: _grouped_as(world, tab["id"], "Kept Client"), "the claimed tab to be grouped")
    await stop_worker(world, page)
    # Any tab event wakes the worker again.
    other, _ = await world.open_page("plain.html", "restart-wake")

    async def rejoined() -> bool:
        browser = await world.browser()
        return browser is not None and browser["connected"]

    await eventually(rejoined, "the new worker to rejoin as the same browser")
    await world.tab_at(world.url("modern.html", "restart"), {"echo", "fail", "temporary"})
    async with world.http.post(f"/tabs/{tab['ref']}/tools/echo", json={"text": "again"}, headers=headers) as answer:
        assert answer.status == 200, await answer.text()
        assert (await answer.json())["result"] == {"echoed": "again", "from": "/modern.html"}
    # The broker listed the session to the new worker as its browser's: its group stays.
    popup = await world.context.new_page()
    await popup.goto(f"chrome-extension://{PROJECT_EXTENSION_ID}/person/popup.html")
    await eventually(lambda: _popup_lists_session(popup, "Kept Client"), "the popup to list the kept session")
    group = await popup.evaluate(
        "async (id) => (await chrome.tabGroups.get((await chrome.tabs.get(id)).groupId)).title", tab["id"]
    )
    assert group == "Kept Client"
    await popup.close()
    await page.close()
    await other.close()
