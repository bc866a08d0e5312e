"""End to end: deleting the person's history and bookmarks, and reading their bookmark tree, through a
real broker, the real extension in headless Chromium and MCP and REST clients.

Each deletion is the person's twice: refused until they share their records, then asked in the
approval window, which shows what goes and offers no "Always allow"; nothing is deleted until
they allow it. Attacks: a second deletion racing the first one's approval (from a client token
over REST) is refused at once rather than stacking a second window; a folder that changes while
its approval waits is not deleted with what the person never saw. The approval windows are saved
as pictures in ``tests/output/e2e_browser_records/`` (or ``$BROWSER_MCP_E2E_OUTPUT``).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from playwright.async_api import Page

from broker.core.security import client_token

from ..harness.waiting import eventually
from ..support.extension_world import World
from ..support.mcp_clients import refused, text
from ..support.person_world import answer, approval_window, change_settings
from ..support.records_world import records_world

pytestmark = pytest.mark.asyncio(loop_scope="module")

OUTPUT = Path(os.environ.get("BROWSER_MCP_E2E_OUTPUT") or Path(__file__).parents[1] / "output") / "e2e_browser_records"
PAGES = {"diary.html": "<!doctype html><title>A private diary</title><p>dear diary</p>"}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    async with records_world(tmp_path_factory.mktemp("e2e-browser-records"), PAGES) as world:
        yield world


async def visits(world: World, url: str) -> int:
    return int(await world.worker.evaluate("(url) => chrome.history.getVisits({url}).then((v) => v.length)", url))


async def bookmark(world: World, parent: str, title: str, url: str | None = None) -> str:
    """A bookmark (or, without ``url``, a folder) the person made; its id."""
    node = {"parentId": parent, "title": title} | ({"url": url} if url else {})
    return str(await world.worker.evaluate("(node) => chrome.bookmarks.create(node).then((n) => n.id)", node))


async def exists(world: World, node_id: str) -> bool:
    return bool(await world.worker.evaluate("(id) => chrome.bookmarks.get(id).then(() => true, () => false)", node_id))


async def shown(window: Page) -> dict[str, str]:
    return {part: await window.locator(f"#{part}").inner_text() for part in ("tool", "site", "code-label", "code")}


async def test_a_history_entry_is_deleted_only_after_consent_and_approval(world: World) -> None:
    url = world.url("diary.html", "forget-me")
    page = await world.context.new_page()
    await page.goto(url)
    await page.close()
    await eventually(lambda: visits(world, url), "the visit in the history")
    async with world.mcp("Cleaner") as client:
        says = await refused(client, "browser_history_delete", {"url": url}, "consent_required")
        assert "Share history and bookmarks with AI agents" in says
        await change_settings(world, shareRecords=True)
        try:
            call = asyncio.ensure_future(client.call("browser_history_delete", {"url": url}))
            window = await approval_window(world, call)
            seen = await shown(window)
            assert (seen["tool"], seen["site"], seen["code-label"]) == (
                "browser_history_delete",
                "the whole browser",
                "Deletes",
            )
            assert url in seen["code"] and "Every visit (1)" in seen["code"]
            assert await window.locator("#always").is_hidden()
            await window.set_viewport_size({"width": 600, "height": 700})
            await window.locator("body").screenshot(path=str(OUTPUT / "approval_history.png"))
            await answer(window, "Deny")
            denied = await call
            assert denied.is_error and text(denied).startswith("not_approved:"), text(denied)
            assert await visits(world, url) == 1

            call = asyncio.ensure_future(client.call("browser_history_delete", {"url": url}))
            await answer(await approval_window(world, call), "Allow once")
            deleted = await call
            assert not deleted.is_error, text(deleted)
            assert json.loads(text(deleted)) == {"deleted": {"url": url, "visits": 1}}
            assert await visits(world, url) == 0
            # Nothing left to delete: said at once, and nobody is asked.
            says = await refused(client, "browser_history_delete", {"url": url}, "record_not_found")
            assert "no visit" in says
        finally:
            await change_settings(world, shareRecords=False)


async def test_the_tree_is_read_and_a_bookmark_or_a_whole_folder_deleted_after_approval(world: World) -> None:
    await change_settings(world, shareRecords=True)
    try:
        top = str(await world.worker.evaluate("chrome.bookmarks.getTree().then(([root]) => root.children[1].id)"))
        folder = await bookmark(world, top, "Recipes")
        bread = await bookmark(world, folder, "Walnut bread", world.url("diary.html", "bread"))
        lone = await bookmark(world, top, "Lone page", world.url("diary.html", "lone"))
        async with world.mcp("Librarian") as client:
            tree = await client.call_json("browser_bookmarks", {"action": "tree"})
            nodes = {n["id"]: n for n in tree["results"]}
            assert nodes[folder]["folder"] is True and nodes[folder]["children"] == 1
            assert nodes[folder]["parentId"] == top and nodes[bread]["parentId"] == folder
            assert nodes[bread]["depth"] == nodes[folder]["depth"] + 1 == 2
            assert tree["truncated"] is False and tree["total"] == len(tree["results"])
            below = await client.call_json("browser_bookmarks", {"action": "tree", "folderId": folder})
            assert [(n["id"], n["depth"]) for n in below["results"]] == [(folder, 0), (bread, 1)]
            capped = await client.call_json("browser_bookmarks", {"action": "tree", "maxResults": 2})
            assert len(capped["results"]) == 2 and capped["truncated"] is True

            await refused(client, "browser_bookmarks", {"action": "delete", "id": top}, "invalid_request")
            await refused(client, "browser_bookmarks", {"action": "delete", "id": "987654"}, "record_not_found")
            says = await refused(client, "browser_bookmarks", {"action": "delete", "id": folder}, "folder_not_empty")
            assert "recursive" in says

            call = asyncio.ensure_future(client.call("browser_bookmarks", {"action": "delete", "id": lone}))
            window = await approval_window(world, call)
            seen = await shown(window)
            assert seen["tool"] == "browser_bookmarks delete" and "“Lone page”" in seen["code"]
            await answer(window, "Allow once")
            assert not (await call).is_error
            assert not await exists(world, lone)

            args = {"action": "delete", "id": folder, "recursive": True}
            call = asyncio.ensure_future(client.call("browser_bookmarks", args))
            window = await approval_window(world, call)
            seen = await shown(window)
            assert "AND EVERYTHING IN IT: 1 bookmarks and 0 folders" in seen["code"]
            assert "“Walnut bread”" in seen["code"]
            await window.set_viewport_size({"width": 600, "height": 700})
            await window.locator("body").screenshot(path=str(OUTPUT / "approval_folder.png"))
            await answer(window, "Allow once")
            deleted = await call
            assert json.loads(text(deleted))["deleted"] == {
                "id": folder,
                "title": "Recipes",
                "folder": True,
                "bookmarks": 1,
                "folders": 0,
            }
            assert not await exists(world, folder) and not await exists(world, bread)
    finally:
        await change_settings(world, shareRecords=False)


async def test_a_deletion_racing_an_approval_or_changing_under_it_deletes_nothing(world: World) -> None:
    await change_settings(world, shareRecords=True)
    mallory = {"Authorization": f"Bearer {client_token(world.token, 'mallory')}"}
    try:
        top = str(await world.worker.evaluate("chrome.bookmarks.getTree().then(([root]) => root.children[1].id)"))
        folder = await bookmark(world, top, "Taxes")
        kept = await bookmark(world, folder, "Tax return", world.url("diary.html", "tax"))
        bank = await bookmark(world, top, "My bank", world.url("diary.html", "bank"))
        async with (
            world.mcp("Tidy") as client,
            aiohttp.ClientSession(f"http://127.0.0.1:{world.broker.port}", headers=mallory) as http,
        ):
            args = {"action": "delete", "id": folder, "recursive": True}
            call = asyncio.ensure_future(client.call("browser_bookmarks", args))
            window = await approval_window(world, call)
            # Another client's deletion while the person reads the first window: refused at once,
            # no second window to be answered in its place.
            async with http.delete(f"/bookmarks/{bank}") as response:
                body = await response.json()
            assert (response.status, body["error"]["code"]) == (409, "records_busy"), body
            # The folder gains a bookmark the person never saw in the window.
            added = await bookmark(world, folder, "Added meanwhile", world.url("diary.html", "added"))
            await answer(window, "Allow once")
            changed = await call
            assert changed.is_error and text(changed).startswith("not_approved:"), text(changed)
            assert "changed after the person approved it" in text(changed)
            assert all([await exists(world, n) for n in (folder, kept, added, bank)])

            # The client token's own deletion asks the person too, naming its credential.
            async def delete_bank() -> tuple[int, Any]:
                async with http.delete(f"/bookmarks/{bank}") as response:
                    return response.status, await response.json()

            deletion = asyncio.ensure_future(delete_bank())
            window = await approval_window(world, deletion)
            assert await window.locator("#credential").inner_text() == "via mallory"
            await answer(window, "Deny")
            status, body = await deletion
            assert (status, body["error"]["code"]) == (403, "not_approved")
            assert await exists(world, bank)
    finally:
        await change_settings(world, shareRecords=False)
