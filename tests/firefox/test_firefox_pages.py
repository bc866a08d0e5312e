"""End to end in Firefox ESR: a page's tools reach MCP clients, each client's tabs in a group.

One Firefox for the module, with the extension's Firefox build, trusting a broker on a port of
its own through the link key (as pairing leaves it; ``test_firefox_native_host.py`` proves the
native host). Firefox has no WebMCP of its own, so the pages get the extension's polyfill.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from ..harness.chromium import change_settings, tab_group_title
from ..harness.firefox import Context
from ..harness.page_server import serve_pages
from ..harness.waiting import WAIT, eventually
from ..support.extension_world import MODERN_PAGE
from ..support.firefox_world import Fox, joined_firefox
from ..support.mcp_clients import McpClient, text
from ..support.person_world import SHOP

pytestmark = pytest.mark.asyncio(loop_scope="module")

RECIPE = "<!doctype html><title>Walnut bread recipe</title><p>flour, walnuts</p>"
COUNTER = """<!doctype html><title>Counter</title><button onclick="this.nextElementSibling.textContent =
  'Counted ' + (++this.dataset.n)" data-n="0">Count</button><p>Counted 0</p>"""

PAGES = {"modern.html": MODERN_PAGE, "shop.html": SHOP, "recipe.html": RECIPE, "counter.html": COUNTER}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fox]:
    async with serve_pages(PAGES) as site, joined_firefox(tmp_path_factory.mktemp("firefox"), site) as world:
        yield world


async def tab_with_tools(client: McpClient, url: str) -> dict[str, Any] | None:
    """The tab showing ``url`` once its tools are known, asking its page for them afresh (which
    puts the bridge in a page whose own call for it went unheard)."""
    listed = await client.call_json("tabs", {"action": "list"})
    found = [t for t in listed["tabs"] if t["url"] == url]
    if not found:
        return None
    asked = await client.call("page_tools", {"tab": found[0]["ref"], "refresh": True})
    if asked.is_error or not {"echo", "fail"} <= {t["name"] for t in json.loads(text(asked))["tools"]}:
        return None
    return dict(found[0])


async def test_firefox_says_its_name_and_page_driver(fox: Fox) -> None:
    browser = await fox.joined()
    assert browser is not None and browser["name"] == "Firefox", browser
    assert browser["driver"]["name"] == "webextension"
    assert {"console_messages", "handle_dialog"} <= set(browser["driver"]["actions"]), browser["driver"]


async def test_a_pages_tools_reach_an_mcp_client_and_answer_it(fox: Fox) -> None:
    url = f"{fox.site}/modern.html?opened"
    async with fox.mcp("Fox Client") as client:
        opened = await client.call_json("tabs", {"action": "open", "url": url})
        ref = opened["opened"]["ref"]
        assert opened["opened"]["browserName"] == "Firefox"
        tab = await eventually(lambda: tab_with_tools(client, url), "the page's tools to reach the broker")
        assert tab["ref"] == ref
        echoed = await client.call_json("call_page_tool", {"tab": ref, "tool": "echo", "arguments": {"text": "fox"}})
        assert echoed == {"echoed": "fox", "from": "/modern.html"}
        failed = await client.call("call_page_tool", {"tab": ref, "tool": "fail", "arguments": {}})
        assert failed.is_error and "the page says no" in text(failed)
        assert await tab_group_title(fox.control, tab["id"]) == "Fox Client"
        await client.call_json("tabs", {"action": "close", "tab": ref})


async def test_two_clients_get_their_own_groups_and_cannot_use_each_others_tabs(fox: Fox) -> None:
    async with fox.mcp("Client One") as one, fox.mcp("Client Two") as two:
        refs = []
        for client, tag in ((one, "one"), (two, "two")):
            url = f"{fox.site}/modern.html?{tag}"
            await client.call_json("tabs", {"action": "open", "url": url})
            refs.append(await eventually(lambda c=client, u=url: tab_with_tools(c, u), f"tab {tag}'s tools"))
        first, second = refs
        assert await tab_group_title(fox.control, first["id"]) == "Client One"
        assert await tab_group_title(fox.control, second["id"]) == "Client Two"
        refused = await two.call("call_page_tool", {"tab": first["ref"], "tool": "echo", "arguments": {"text": "x"}})
        assert refused.is_error and "tab_owned" in text(refused) and "Client One" in text(refused)
        mine = await one.call("call_page_tool", {"tab": first["ref"], "tool": "echo", "arguments": {"text": "mine"}})
        assert not mine.is_error and json.loads(text(mine))["echoed"] == "mine"
        for client, tab in ((one, first), (two, second)):
            await client.call_json("tabs", {"action": "close", "tab": tab["ref"]})


async def approval_window(fox: Fox) -> Context | None:
    """The approval window's page, once it shows the request."""
    for found in await fox.firefox.contexts():
        if found["url"].startswith(f"{fox.firefox.extension_origin}/person/approval.html"):
            window = Context(fox.firefox.bidi, found["context"])
            if await window.evaluate("document.querySelector('#agent')?.textContent ?? ''"):
                return window
    return None


async def test_a_destructive_page_tool_waits_for_the_person_in_the_approval_window(fox: Fox) -> None:
    url = f"{fox.site}/shop.html?approval"
    async with fox.mcp("Shopping Agent") as client:
        opened = await client.call_json("tabs", {"action": "open", "url": url})
        ref = opened["opened"]["ref"]

        async def tools_known() -> bool:
            asked = await client.call("page_tools", {"tab": ref, "refresh": True})
            return not asked.is_error and "buy" in {t["name"] for t in json.loads(text(asked))["tools"]}

        await eventually(tools_known, "the shop's tools")
        call = asyncio.ensure_future(
            client.call("call_page_tool", {"tab": ref, "tool": "buy", "arguments": {"item": "shoes"}})
        )
        window = await eventually(lambda: approval_window(fox), "the approval window")
        shown = await window.evaluate("document.body.innerText")
        assert "Shopping Agent" in shown and "buy" in shown and '"shoes"' in shown, shown
        assert not call.done()
        (fox.firefox.profile.parent / "approval.png").write_bytes(await window.screenshot())
        await window.click("#once")
        async with asyncio.timeout(WAIT):
            result = await call
        assert not result.is_error and text(result) == "bought shoes", text(result)
        await client.call_json("tabs", {"action": "close", "tab": ref})


async def test_a_page_asks_for_its_bridge_itself_and_its_tools_reach_the_broker_unasked(fox: Fox) -> None:
    # The polyfill's request for its bridge goes through the waker, an isolated-world content
    # script: Firefox has no externally_connectable. No client asks for the tab's tools here.
    url = f"{fox.site}/modern.html?unasked"
    page = await fox.firefox.new_tab(url)

    async def listed() -> Any:
        headers = {"Authorization": f"Bearer {fox.broker.token}"}
        async with aiohttp.ClientSession(headers=headers) as http, http.get(f"{fox.broker_url}/tabs") as answer:
            tabs = (await answer.json())["tabs"]
        return [t for t in tabs if t["url"] == url and t["tools"]]

    [tab] = await eventually(listed, "the page's tools to reach the broker with no client asking")
    assert {"echo", "fail", "temporary"} <= {t["name"] for t in tab["tools"]}
    await page.close()


async def test_a_client_gets_a_window_of_its_own_and_not_the_persons(fox: Fox) -> None:
    persons = await fox.firefox.new_tab(f"{fox.site}/modern.html?persons")
    async with fox.mcp("Window keeper") as client:
        url = f"{fox.site}/modern.html?own-window"
        created = await client.call_json("browser_windows", {"action": "create", "url": url})
        window, opened = created["window"], created["opened"]
        assert opened["owner"]["name"] == "Window keeper" and opened["windowId"] == window["id"]
        listed = {w["id"]: w for w in (await client.call_json("browser_windows", {"action": "list"}))["windows"]}
        assert listed[window["id"]]["yours"] is True and listed[window["id"]]["tabs"] == [opened["id"]]
        others = [w for w in listed.values() if w["id"] != window["id"]]
        assert others and all(w["yours"] is False for w in others)
        refused = await client.call("browser_windows", {"action": "close", "windowId": others[0]["id"]})
        assert refused.is_error and "window_not_owned" in text(refused), text(refused)
        await client.call_json("browser_windows", {"action": "close", "windowId": window["id"]})
    await persons.close()


async def test_history_answers_only_once_the_person_shares_it(fox: Fox) -> None:
    visited = await fox.firefox.new_tab(f"{fox.site}/recipe.html?visited")
    await visited.close()
    async with fox.mcp("Researcher") as client:
        refused = await client.call("browser_history_search", {"query": "Walnut"})
        assert refused.is_error and text(refused).startswith("consent_required:"), text(refused)
        await change_settings(fox.control, shareRecords=True)

        async def found() -> Any:
            result = await client.call("browser_history_search", {"query": "Walnut", "maxResults": 5})
            if result.is_error:
                return None
            return [r for r in json.loads(text(result))["results"] if "recipe.html" in r["url"]]

        [visit] = await eventually(found, "the visited page in the history once sharing is on")
        assert visit["title"] == "Walnut bread recipe"
        await change_settings(fox.control, shareRecords=False)


async def test_built_in_browser_tools_act_in_firefox_and_say_the_input_was_synthetic(fox: Fox) -> None:
    async with fox.mcp("Fox Clicker", caps="vision") as client:
        await client.call_json("tabs", {"action": "open", "url": f"{fox.site}/counter.html?builtin"})
        snapshot = text(await client.call("browser_snapshot", {}))
        (ref,) = re.findall(r'button "Count" \[ref=([^\]]+)\]', snapshot)
        clicked = await client.call("browser_click", {"element": "Count button", "ref": ref})
        assert not clicked.is_error, text(clicked)
        assert "synthetic" in text(clicked) and "Counted 1" in text(clicked), text(clicked)
        found = await client.call("browser_find", {"text": "count"})
        assert not found.is_error and re.search(rf'button "Count".*\[ref={ref}\]', text(found)), text(found)
        refused = await client.call("browser_mouse_wheel", {"deltaX": 0, "deltaY": 100})
        assert refused.is_error and "Firefox" in text(refused), text(refused)
        assert refused.structured_content["error"]["code"] == "not_supported", refused.structured_content


async def test_a_snapshot_right_after_a_tab_opens_shows_its_page_from_a_slow_server(fox: Fox) -> None:
    async with fox.mcp("Early fox") as client:
        opened = await client.call_json("tabs", {"action": "open", "url": f"{fox.site}/late/counter.html?early"})
        page = text(await client.call("browser_snapshot", {}))
        assert 'button "Count"' in page and "/late/counter.html?early" in page, page
        await client.call_json("tabs", {"action": "close", "tab": opened["opened"]["ref"]})


async def test_a_page_tool_right_after_a_tab_opens_is_called_once_its_page_from_a_slow_server_comes(
    fox: Fox,
) -> None:
    async with fox.mcp("Early caller") as client:
        opened = await client.call_json("tabs", {"action": "open", "url": f"{fox.site}/late/modern.html?early"})
        ref = opened["opened"]["ref"]
        echoed = await client.call("call_page_tool", {"tab": ref, "tool": "echo", "arguments": {"text": "early"}})
        assert not echoed.is_error, text(echoed)
        assert json.loads(text(echoed)) == {"echoed": "early", "from": "/late/modern.html"}
        await client.call_json("tabs", {"action": "close", "tab": ref})


async def test_a_history_entry_is_deleted_only_with_the_persons_consent_and_approval(fox: Fox) -> None:
    url = f"{fox.site}/modern.html?forget-me"
    page = await fox.firefox.new_tab(url)
    await page.close()

    async def visits() -> int:
        return int(await fox.control.evaluate("(url) => chrome.history.getVisits({url}).then((v) => v.length)", url))

    await eventually(visits, "the visit in Firefox's history")
    async with fox.mcp("Fox Cleaner") as client:
        refused = await client.call("browser_history_delete", {"url": url})
        assert refused.is_error and text(refused).startswith("consent_required:"), text(refused)
        await change_settings(fox.control, shareRecords=True)
        try:
            call = asyncio.ensure_future(client.call("browser_history_delete", {"url": url}))
            window = await eventually(lambda: approval_window(fox), "the deletion's approval window")
            shown = await window.evaluate("document.body.innerText")
            assert "browser_history_delete" in shown and url in shown and "Deletes" in shown, shown
            assert await window.evaluate("document.querySelector('#always').hidden")
            assert not call.done() and await visits() == 1
            await window.click("#once")
            async with asyncio.timeout(WAIT):
                deleted = await call
            assert not deleted.is_error, text(deleted)
            assert json.loads(text(deleted)) == {"deleted": {"url": url, "visits": 1}}
            assert await visits() == 0
        finally:
            await change_settings(fox.control, shareRecords=False)
