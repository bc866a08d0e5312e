"""End to end in Firefox ESR: the add-on's event page stays while a broker is joined, and when
Firefox unloads it all the same, it comes back with the link restored and nothing lost.

Firefox unloads an event page that makes no API call and hears no extension event for
``extensions.background.idle.timeout`` (30 s by default; WebSocket frames do not count), and its
WebSocket with it. While joined, the extension calls into the browser on a short beat, so the
link outlives the idle time. Firefox may still unload the page (about:debugging's "Terminate
background script"): the broker keeps the browser, its tabs and who owns them through the gap; a
browser event (here a tab the person opens) wakes the page, which joins again as the same browser,
so the client's tab is still its own and its page tool answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from ..harness.page_server import serve_pages
from ..harness.waiting import eventually
from ..support.extension_world import MODERN_PAGE
from ..support.firefox_world import Fox, joined_firefox
from ..support.mcp_clients import text

# Twice the extension's beat (stay_awake.js): short, so the test is, with room for a late beat.
IDLE_MS = 10_000


async def browsers(fox: Fox) -> list[dict[str, Any]]:
    return list((await fox.status())["browsers"])


async def connected(fox: Fox) -> list[dict[str, Any]]:
    return [b for b in await browsers(fox) if b["connected"]]


@contextlib.asynccontextmanager
async def joined_with_no_page_of_its_own(
    home: Path, prefs: Mapping[str, Any] | None = None
) -> AsyncIterator[tuple[Fox, dict[str, Any]]]:
    """Firefox joined to a broker of its own, the modern page on its site, and the browser as it
    joined; the options page that paired it is closed (an extension page left open would keep
    nothing alive, but it is not the person's)."""
    async with serve_pages({"modern.html": MODERN_PAGE}) as site, joined_firefox(home, site, prefs=prefs) as fox:
        await fox.control.close()
        [first] = await connected(fox)
        yield fox, first


async def test_a_joined_event_page_outlives_firefoxs_idle_time_with_a_client_connected(tmp_path: Path) -> None:
    prefs = {"extensions.background.idle.timeout": IDLE_MS}
    async with joined_with_no_page_of_its_own(tmp_path, prefs) as (fox, first), fox.mcp("Fox") as client:
        opened = await client.call_json("tabs", {"action": "open", "url": f"{fox.site}/modern.html?awake"})
        await fox.firefox.watch_background()
        # Two and a half idle times with nothing from the person, the pages or the client.
        loop = asyncio.get_running_loop()
        until = loop.time() + 2.5 * IDLE_MS / 1000
        while loop.time() < until:
            linked = [(b["browser"], b["instanceId"]) for b in await connected(fox)]
            assert linked == [(first["browser"], first["instanceId"])], "the link closed under a client"
            await asyncio.sleep(0.5)
        assert await fox.firefox.background_unloads() == 0
        answer = await client.call_json(
            "call_page_tool", {"tab": opened["opened"]["ref"], "tool": "echo", "arguments": {"text": "y"}}
        )
        assert answer == {"echoed": "y", "from": "/modern.html"}


async def test_the_event_page_unloads_and_comes_back_as_the_same_browser_with_nothing_lost(tmp_path: Path) -> None:
    async with joined_with_no_page_of_its_own(tmp_path) as (fox, first), fox.mcp("Fox") as client:
        url = f"{fox.site}/modern.html?kept"
        ref = (await client.call_json("tabs", {"action": "open", "url": url}))["opened"]["ref"]
        await fox.firefox.unload_background()

        async def unloaded() -> bool:
            return not await connected(fox)

        await eventually(unloaded, "the unloaded event page's link to close", within=30)
        # The broker kept the browser and the client's tab through the gap.
        [kept] = await browsers(fox)
        assert kept["browser"] == first["browser"] and not kept["connected"]

        # The person opens a tab: the event wakes the page, which joins again.
        await fox.firefox.new_tab()
        [again] = await eventually(lambda: connected(fox), "the woken event page to join again", within=30)
        assert (again["browser"], again["instanceId"]) == (first["browser"], first["instanceId"])
        listed = await client.call_json("tabs", {"action": "list"})
        [tab] = [t for t in listed["tabs"] if t["ref"] == ref]
        assert tab["owner"]["name"] == "Fox", tab

        async def echoed() -> Any:
            answer = await client.call("call_page_tool", {"tab": ref, "tool": "echo", "arguments": {"text": "x"}})
            return None if answer.is_error else json.loads(text(answer))

        assert await eventually(echoed, "the client's page tool to answer") == {
            "echoed": "x",
            "from": "/modern.html",
        }
