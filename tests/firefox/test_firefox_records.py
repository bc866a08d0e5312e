"""End to end in Firefox ESR: a cross-site frame's page tools, and the person's bookmarks.

The Firefox counterparts of what ``test_e2e_frame_tools.py`` and ``test_e2e_browser_records.py``
ask of Chromium, with the same extension code: tools a frame of another site declares (through the
extension's polyfill, Firefox having no WebMCP) reach the MCP client owning the tab, named with the
frame's site, and a call runs in that frame; bookmarks are refused until the person shares them,
then searched, added and listed as a tree, and one is deleted only once the person allows it in
the approval window. One Firefox for the module, trusting a broker on a port of its own.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from ..harness.chromium import change_settings
from ..harness.firefox import Context
from ..harness.page_server import serve_pages
from ..harness.waiting import WAIT, eventually
from ..support.firefox_world import Fox, joined_firefox
from ..support.mcp_clients import refused, text
from .test_firefox_pages import approval_window

pytestmark = pytest.mark.asyncio(loop_scope="module")

# A page of 127.0.0.1 holding a frame of localhost, another site: both declare a tool "where".
HOST = """<!doctype html><title>Host</title><h1>Host</h1><script>
document.modelContext.registerTool({name: "where", description: "Which document answers",
  inputSchema: {type: "object", properties: {}}, execute: () => ({frame: "top", origin: location.origin})});
const frame = document.createElement("iframe");
frame.src = location.origin.replace("127.0.0.1", "localhost") + "/frame.html";
document.body.append(frame);
</script>"""
FRAME = """<!doctype html><title>Frame</title><p>a frame</p><script>
document.modelContext.registerTool({name: "where", description: "Which frame answers",
  inputSchema: {type: "object", properties: {text: {type: "string"}}},
  execute: ({text}) => ({frame: "other", origin: location.origin, text})});
</script>"""
DIARY = "<!doctype html><title>A private diary</title><p>dear diary</p>"

PAGES = {"host.html": HOST, "frame.html": FRAME, "diary.html": DIARY}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fox]:
    home: Path = tmp_path_factory.mktemp("firefox-records")
    async with serve_pages(PAGES) as site, joined_firefox(home, site) as world:
        yield world


async def listed_tabs(fox: Fox) -> list[dict[str, Any]]:
    headers = {"Authorization": f"Bearer {fox.broker.token}"}
    async with aiohttp.ClientSession(headers=headers) as http, http.get(f"{fox.broker_url}/tabs") as answer:
        return list((await answer.json())["tabs"])


async def test_a_cross_site_frames_tool_reaches_the_client_owning_the_tab_and_answers_from_the_frame(
    fox: Fox,
) -> None:
    url = f"{fox.site}/host.html?frames"
    other = fox.site.replace("127.0.0.1", "localhost")
    async with fox.mcp("Framer") as client:
        opened = await client.call_json("tabs", {"action": "open", "url": url})
        ref, tab_id = opened["opened"]["ref"], opened["opened"]["id"]

        async def both() -> dict[str, Any] | None:
            tab = next((t for t in await listed_tabs(fox) if t["url"] == url), None)
            return tab if tab and len(tab["tools"]) == 2 else None

        tab = await eventually(both, "the page's and its frame's tools to reach the broker")
        assert tab["ref"] == ref
        origins = {tool.get("frameOrigin") for tool in tab["tools"]}
        assert origins == {None, other}, tab["tools"]
        framed = next(tool["name"] for tool in tab["tools"] if tool.get("frameOrigin") == other)
        assert framed.startswith("f") and framed.endswith("_where") and framed != "where", framed

        tools = await client.tools()
        mine = {name: tool for name, tool in tools.items() if name.startswith(f"t{tab_id}_")}
        assert sorted(mine) == sorted([f"t{tab_id}_where", f"t{tab_id}_{framed}"]), list(tools)
        described = mine[f"t{tab_id}_{framed}"].description or ""
        host = other.split("//")[1]
        assert described.startswith(f"[page tool, tab {ref}, frame of {host}] "), described

        answered = await client.call_json(f"t{tab_id}_{framed}", {"text": "fox"})
        assert answered == {"frame": "other", "origin": other, "text": "fox"}
        through = await client.call_json("call_page_tool", {"tab": ref, "tool": framed, "arguments": {"text": "b"}})
        assert through == {"frame": "other", "origin": other, "text": "b"}
        top = await client.call_json(f"t{tab_id}_where", {})
        assert top == {"frame": "top", "origin": fox.site}

        # A frame navigated to a page without tools, then removed, takes its tools with it.
        [page] = [Context(fox.firefox.bidi, c["context"]) for c in await fox.firefox.contexts() if c["url"] == url]

        async def one_left() -> bool:
            tab = next((t for t in await listed_tabs(fox) if t["url"] == url), None)
            return tab is not None and [t["name"] for t in tab["tools"]] == ["where"]

        await page.evaluate("(to) => (document.querySelector('iframe').src = to)", f"{other}/diary.html")
        await eventually(one_left, "the navigated frame's tool to go")
        await page.evaluate("(to) => (document.querySelector('iframe').src = to)", f"{other}/frame.html?again")
        await eventually(both, "the frame's tool back with its new document")
        # Whether a removed frame's last word reaches the extension is a race in Firefox (about
        # two removals in five lost it): each of several removals must take the tool with it.
        for attempt in range(5):
            framed = next(
                t["name"] for t in (await eventually(both, "the frame's tool"))["tools"] if t.get("frameOrigin")
            )
            await page.evaluate("document.querySelector('iframe').remove()")
            await eventually(one_left, f"removed frame {attempt}'s tool to go")
            gone = await client.call(f"t{tab_id}_{framed}", {"text": "x"})
            assert gone.is_error, text(gone)
            await page.evaluate(
                "(to) => document.body.append(Object.assign(document.createElement('iframe'), {src: to}))",
                f"{other}/frame.html?attempt={attempt}",
            )
        await client.call_json("tabs", {"action": "close", "tab": ref})


async def exists(fox: Fox, node_id: str) -> bool:
    return bool(await fox.control.evaluate("(id) => chrome.bookmarks.get(id).then(() => true, () => false)", node_id))


async def test_bookmarks_are_shared_only_with_consent_and_one_is_deleted_only_once_the_person_allows_it(
    fox: Fox,
) -> None:
    url = f"{fox.site}/diary.html?kept"
    async with fox.mcp("Librarian") as client:
        says = await refused(client, "browser_bookmarks", {"action": "search", "query": "diary"}, "consent_required")
        assert "Share history and bookmarks with AI agents" in says
        await refused(client, "browser_bookmarks", {"action": "create", "url": url}, "consent_required")
        await refused(client, "browser_bookmarks", {"action": "tree"}, "consent_required")
        await change_settings(fox.control, shareRecords=True)
        try:
            made = await client.call_json("browser_bookmarks", {"action": "create", "url": url, "title": "My diary"})
            mark = made["bookmark"]
            assert (mark["title"], mark["url"]) == ("My diary", url), mark
            found = await client.call_json("browser_bookmarks", {"action": "search", "query": "My diary"})
            assert [r["id"] for r in found["results"]] == [mark["id"]], found

            tree = await client.call_json("browser_bookmarks", {"action": "tree"})
            nodes = {n["id"]: n for n in tree["results"]}
            parent = nodes[nodes[mark["id"]]["parentId"]]
            assert parent["folder"] is True and parent["children"] >= 1
            assert nodes[mark["id"]]["url"] == url and nodes[mark["id"]]["depth"] == parent["depth"] + 1
            assert tree["truncated"] is False and tree["total"] == len(tree["results"])
            headers = {"Authorization": f"Bearer {fox.broker.token}"}
            async with (
                aiohttp.ClientSession(headers=headers) as http,
                http.get(f"{fox.broker_url}/bookmarks/tree", params={"folder": parent["id"]}) as answer,
            ):
                below = await answer.json()
            assert answer.status == 200, below
            assert below["results"][0]["id"] == parent["id"] and mark["id"] in {n["id"] for n in below["results"]}

            await refused(client, "browser_bookmarks", {"action": "delete", "id": parent["id"]}, "invalid_request")
            call = asyncio.ensure_future(client.call("browser_bookmarks", {"action": "delete", "id": mark["id"]}))
            window = await eventually(lambda: approval_window(fox), "the deletion's approval window")
            shown = await window.evaluate("document.body.innerText")
            assert "browser_bookmarks delete" in shown and "“My diary”" in shown and url in shown, shown
            assert await window.evaluate("document.querySelector('#always').hidden")
            assert not call.done() and await exists(fox, mark["id"])
            await window.click("#deny")
            async with asyncio.timeout(WAIT):
                denied = await call
            assert denied.is_error and text(denied).startswith("not_approved:"), text(denied)
            assert await exists(fox, mark["id"])

            first = window.id
            call = asyncio.ensure_future(client.call("browser_bookmarks", {"action": "delete", "id": mark["id"]}))

            async def second_window() -> Any:
                window = await approval_window(fox)
                return window if window is not None and window.id != first else None

            window = await eventually(second_window, "the second approval window")
            await window.click("#once")
            async with asyncio.timeout(WAIT):
                deleted = await call
            assert not deleted.is_error, text(deleted)
            assert json.loads(text(deleted))["deleted"] == {"id": mark["id"], "title": "My diary", "url": url}
            assert not await exists(fox, mark["id"])
        finally:
            await change_settings(fox.control, shareRecords=False)
