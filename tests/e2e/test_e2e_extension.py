"""End to end: pages and their tools, through the real extension in headless Chromium and a real broker.

Pages that declare tools through the extension's polyfill or Chromium's own WebMCP (the world of
``tests/support/extension_world.py``, once with each): the tools reach an MCP client and REST and
answer them, list changes follow the page, and the extension's scripts come to a page only once it
declares a tool. Tests assert what a user sees: tabs and tools in ``GET /tabs`` and in an MCP
client's list, call results and errors, list changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from broker.core.security import PROJECT_EXTENSION_ID

from ..harness.waiting import WAIT, eventually
from ..support.extension_world import World, open_world, site, tab_absent, tool_prefix, world
from ..support.mcp_clients import McpClient, text

__all__ = ["site", "world"]  # the module's browsers and pages, shared by these tests

pytestmark = pytest.mark.asyncio(loop_scope="module")


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
        lambda: tab_absent(world, tab["id"]),
        "the closed tab to leave the broker's list",
    )


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


async def test_a_page_tool_is_called_in_a_tab_the_client_has_just_opened(world: World) -> None:
    """The client opens a tab on a page its server answers late and calls the page's tool at once:
    the call waits for the page rather than finding the blank tab before it without tools."""
    async with world.mcp("opening-client") as client:
        opened = await client.call_json("tabs", {"action": "open", "url": world.url("late/modern.html", "opened")})
        ref = opened["opened"]["ref"]
        echoed = await client.call("call_page_tool", {"tab": ref, "tool": "echo", "arguments": {"text": "first"}})
        assert not echoed.is_error, text(echoed)
        assert json.loads(text(echoed)) == {"echoed": "first", "from": "/late/modern.html"}
        await client.call_json("tabs", {"action": "close", "tab": ref})


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
