"""End to end: the README's picture, what the person sees with two agents at work.

A fresh browser with the person's own page and two AI clients, each working a tab of its own
(each in a tab group named after it): the popup names each tab's agent, and its picture is what
``docs/popup.png`` shows (``tests/output/readme/popup.png``, copied there when the popup changes).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from ..harness.page_server import serve_pages
from ..harness.waiting import eventually
from ..support.extension_world import World, open_world
from ..support.person_world import open_popup

pytestmark = pytest.mark.asyncio(loop_scope="module")

OUTPUT = Path(os.environ.get("BROWSER_MCP_E2E_OUTPUT") or Path(__file__).parents[1] / "output") / "readme"
NEWS = "<!doctype html><title>Morning news</title><h1>Morning news</h1>"
SHOP = """<!doctype html><title>Corner shop</title><script>
document.modelContext.registerTool({name: "search", description: "Search the shop",
  inputSchema: {type: "object", properties: {q: {type: "string"}}}, execute: ({q}) => `3 results for ${q}`});
document.modelContext.registerTool({name: "add_to_cart", description: "Add an item to the cart",
  annotations: {destructiveHint: true}, inputSchema: {type: "object", properties: {item: {type: "string"}}},
  execute: ({item}) => `added ${item}`});
</script><h1>Corner shop</h1>"""
DOCS = "<!doctype html><title>Team handbook</title><h1>Team handbook</h1>"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    async with (
        serve_pages({"news.html": NEWS, "shop.html": SHOP, "docs.html": DOCS}) as site,
        open_world(tmp_path_factory.mktemp("e2e-readme"), site, World) as world,
    ):
        yield world


async def test_the_popup_shows_two_agents_each_in_its_own_tabs(world: World) -> None:
    persons, _ = await world.open_page("news.html", "person")
    async with world.mcp("Claude Code") as claude, world.mcp("Cursor") as cursor:
        for client, page in ((claude, "shop.html"), (cursor, "docs.html")):
            request = {"action": "open", "url": world.url(page, "agent"), "focus": False}
            await client.call_json("tabs", request)
        popup = await open_popup(world)

        async def both_named() -> bool:
            shown = await popup.locator("#tabs").inner_text()
            return "Claude Code" in shown and "Cursor" in shown and "Morning news" in shown

        await eventually(both_named, "the popup to name both agents' tabs")
        await popup.wait_for_timeout(150)  # the last state drawn
        await popup.locator("body").screenshot(path=str(OUTPUT / "popup.png"))
        await popup.close()
    await persons.close()
