"""End to end: closing a tab whose page holds it, with the real extension in headless Chromium.

A page's ``beforeunload`` handler shows its "Leave site?" dialog only once the person has acted in
the page (Chromium's user activation). While that dialog is open ``chrome.tabs.remove`` stays
pending and the tab stays, so the extension answers the broker's ``closeTab`` with
``error {code: "close_held"}`` and the client hears it at once, instead of a timeout 30 s later.
If the person then leaves, the tab closes and the broker hears so as for any tab.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Dialog

from ..harness.page_server import serve_pages
from ..harness.waiting import eventually
from ..support.extension_world import World, open_world
from ..support.mcp_clients import text

pytestmark = pytest.mark.asyncio(loop_scope="module")

HOLDING_PAGE = """<!doctype html><title>Unsaved work</title><button id=edit>edit</button><script>
addEventListener("beforeunload", (event) => { event.preventDefault(); event.returnValue = ""; });
</script>"""
PAGES = {"holding.html": HOLDING_PAGE, "plain.html": "<!doctype html><title>Plain</title><p>plain</p>"}
# Far below the broker's 30 s call timeout: only the extension's answer can come this soon.
ANSWERED_WITHIN = 10.0


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    async with serve_pages(PAGES) as site, open_world(tmp_path_factory.mktemp("e2e-close"), site, World) as world:
        yield world


async def browser_has(world: World, tab_id: int) -> bool:
    return bool(await world.worker.evaluate("(id) => chrome.tabs.get(id).then(() => true, () => false)", tab_id))


async def test_a_close_the_pages_beforeunload_holds_is_refused_at_once_and_the_tab_stays(world: World) -> None:
    url = world.url("holding.html", "held")
    async with world.mcp("Closing Client") as client:
        opened = await client.call_json("tabs", {"action": "open", "url": url, "browser": world.browser_key})
        tab_id, ref = opened["opened"]["id"], opened["opened"]["ref"]
        page = await eventually(
            lambda: asyncio.sleep(0, next((p for p in world.context.pages if p.url == url), None)),
            "the opened tab's page",
        )
        await page.wait_for_load_state()
        dialogs: asyncio.Queue[Dialog] = asyncio.Queue()
        # Left open, as a person still deciding; Playwright would otherwise dismiss it.
        page.on("dialog", dialogs.put_nowait)
        await page.click("#edit")  # the person's act that lets the page ask before it goes

        async with asyncio.timeout(ANSWERED_WITHIN):
            refused = await client.call("tabs", {"action": "close", "tab": ref})
        assert refused.is_error and text(refused).startswith("close_held: "), text(refused)
        assert "beforeunload" in text(refused)
        dialog = await asyncio.wait_for(dialogs.get(), ANSWERED_WITHIN)
        assert dialog.type == "beforeunload"
        assert await browser_has(world, tab_id)
        assert any(tab["id"] == tab_id for tab in await world.tabs())

        # The person leaves: the tab goes, and the broker hears it.
        await dialog.accept()

        async def gone() -> bool:
            return not await browser_has(world, tab_id) and all(tab["id"] != tab_id for tab in await world.tabs())

        await eventually(gone, "the tab to close once the person leaves")


async def test_a_page_that_lets_go_closes_as_asked(world: World) -> None:
    url = world.url("plain.html", "lets-go")
    async with world.mcp("Closing Client") as client:
        opened = await client.call_json("tabs", {"action": "open", "url": url, "browser": world.browser_key})
        async with asyncio.timeout(ANSWERED_WITHIN):
            closed = await client.call_json("tabs", {"action": "close", "tab": opened["opened"]["ref"]})
        assert closed == {"closed": opened["opened"]["ref"]}
        assert not await browser_has(world, opened["opened"]["id"])
