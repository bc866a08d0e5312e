"""End to end: windows, history and bookmarks through a real broker, the real extension and MCP clients.

The browser beyond its pages, as an AI client meets it: tab records with their window, place and
pin; windows listed, one created for the client (its tab the client's own), and the person's
window kept from it; history and bookmarks refused until the person turns on sharing on the
extension's options page (clicked here as they would), then found. The options page with the
switch is saved as a picture in ``tests/output/e2e_browser_wide/`` (or
``$BROWSER_MCP_E2E_OUTPUT``) for a reviewer to look at.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from broker.core.security import PROJECT_EXTENSION_ID

from ..harness.waiting import eventually
from ..support.extension_world import World
from ..support.mcp_clients import refused, text
from ..support.person_world import answer, approval_window, change_settings
from ..support.records_world import records_world

pytestmark = pytest.mark.asyncio(loop_scope="module")

OUTPUT = Path(os.environ.get("BROWSER_MCP_E2E_OUTPUT") or Path(__file__).parents[1] / "output") / "e2e_browser_wide"
OPTIONS_URL = f"chrome-extension://{PROJECT_EXTENSION_ID}/person/options.html"
SWITCH = "Share history and bookmarks with AI agents"

PAGES = {
    "person.html": "<!doctype html><title>The person's page</title><p>reading</p>",
    "agent.html": "<!doctype html><title>The agent's page</title><p>working</p>",
    "recipe.html": "<!doctype html><title>Walnut bread recipe</title><p>flour, walnuts</p>",
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    async with records_world(tmp_path_factory.mktemp("e2e-browser-wide"), PAGES) as world:
        yield world


async def test_tab_records_carry_their_window_place_and_pin(world: World) -> None:
    page, tab = await world.open_page("person.html", "records")
    assert isinstance(tab["windowId"], int) and isinstance(tab["index"], int) and tab["pinned"] is False
    async with world.mcp("Pinner") as client:
        url = world.url("agent.html", "pinned")
        opened = (
            await client.call_json(
                "tabs", {"action": "open", "url": url, "windowId": tab["windowId"], "pinned": True, "focus": False}
            )
        )["opened"]
        assert opened["windowId"] == tab["windowId"] and opened["pinned"] is True
        assert opened["owner"]["name"] == "Pinner"

        async def places() -> bool:
            tabs = {t["id"]: t for t in await world.tabs()}
            # Pinned, it went first in the window, and the person's tab moved one along.
            return tabs[opened["id"]]["index"] == 0 and tabs[tab["id"]]["index"] == tab["index"] + 1

        await eventually(places, "the pinned tab first in its window and the person's tab after it")
        await client.call_json("tabs", {"action": "close", "tab": opened["ref"]})
    await page.close()


async def test_a_client_gets_a_window_of_its_own_and_not_the_persons(world: World) -> None:
    page, persons = await world.open_page("person.html", "windows")
    async with world.mcp("Window keeper") as client, world.mcp("Bystander") as other:
        tools = await client.tool_names()
        assert {"browser_windows", "browser_history_search", "browser_bookmarks"} <= set(tools)
        created = await client.call_json("browser_windows", {"action": "create", "url": world.url("agent.html", "own")})
        window, opened = created["window"], created["opened"]
        assert opened["owner"]["name"] == "Window keeper" and opened["windowId"] == window["id"]
        assert opened["windowId"] != persons["windowId"]

        listed = {w["id"]: w for w in (await client.call_json("browser_windows", {"action": "list"}))["windows"]}
        assert listed[window["id"]]["yours"] is True and listed[window["id"]]["tabs"] == [opened["id"]]
        assert listed[persons["windowId"]]["yours"] is False and persons["id"] in listed[persons["windowId"]]["tabs"]
        assert listed[window["id"]]["type"] == "normal"

        for action in ("focus", "close"):
            message = await refused(
                client, "browser_windows", {"action": action, "windowId": persons["windowId"]}, "window_not_owned"
            )
            assert f"the person's tab {persons['ref']}" in message
        message = await refused(
            other, "browser_windows", {"action": "close", "windowId": window["id"]}, "window_not_owned"
        )
        assert "Window keeper" in message

        await client.call_json("browser_windows", {"action": "focus", "windowId": window["id"]})
        focused = await world.worker.evaluate("chrome.windows.getLastFocused().then((w) => w.id)")
        assert focused == window["id"]
        await client.call_json("browser_windows", {"action": "close", "windowId": window["id"]})

        async def gone() -> bool:
            return all(t["id"] != opened["id"] for t in await world.tabs())

        await eventually(gone, "the closed window's tab to leave the broker's list")
    assert not page.is_closed()
    await page.close()


async def test_history_and_bookmarks_answer_once_the_person_shares_them(world: World) -> None:
    page, _ = await world.open_page("recipe.html", "visited")
    await page.close()
    async with world.mcp("Researcher") as client:
        message = await refused(client, "browser_history_search", {"query": "Walnut"}, "consent_required")
        assert "options page" in message and SWITCH in message
        await refused(client, "browser_bookmarks", {"action": "search", "query": "Walnut"}, "consent_required")

        options = await world.context.new_page()
        await options.set_viewport_size({"width": 700, "height": 760})
        await options.goto(OPTIONS_URL)
        switch = options.get_by_label(SWITCH)
        assert not await switch.is_checked()
        await switch.check()
        await options.locator("body").screenshot(path=str(OUTPUT / "options_sharing_on.png"))

        async def found() -> Any:
            result = await client.call("browser_history_search", {"query": "Walnut", "maxResults": 5})
            return None if result.is_error else [r for r in _json(result)["results"] if "recipe.html" in r["url"]]

        [visit] = await eventually(found, "the visited page in the history once sharing is on")
        assert visit["title"] == "Walnut bread recipe" and visit["time"].endswith("Z")

        url = world.url("recipe.html", "bookmarked")
        created = await client.call_json(
            "browser_bookmarks", {"action": "create", "url": url, "title": "Walnut bread, to bake"}
        )
        assert created["bookmark"]["url"] == url
        results = (await client.call_json("browser_bookmarks", {"action": "search", "query": "walnut"}))["results"]
        assert [(b["title"], b["url"]) for b in results] == [("Walnut bread, to bake", url)]

        await switch.uncheck()

        async def refused_again() -> bool:
            result = await client.call("browser_history_search", {"query": "Walnut"})
            return result.is_error and text(result).startswith("consent_required:")

        await eventually(refused_again, "history refused again once sharing is off")
        await options.close()


async def test_under_the_stricter_policy_a_new_bookmark_waits_for_the_person(world: World) -> None:
    await change_settings(world, shareRecords=True, approvalPolicy="notReadOnly")
    try:
        async with world.mcp("Bookmarker") as client:
            url = world.url("recipe.html", "asked")
            call = asyncio.ensure_future(
                client.call("browser_bookmarks", {"action": "create", "url": url, "title": "Asked first"})
            )
            window = await approval_window(world, call)
            assert await window.locator("#tool").inner_text() == "browser_bookmarks create"
            assert await window.locator("#site").inner_text() == "the whole browser"
            assert url in await window.locator("#args").inner_text()
            # "Always allow on this site" is for a site; the whole browser is allowed once at a time.
            assert await window.locator("#always").is_hidden()
            await window.locator("body").screenshot(path=str(OUTPUT / "approval_bookmark.png"))
            await answer(window, "Deny")
            denied = await call
            assert denied.is_error and text(denied).startswith("not_approved:"), text(denied)
            # Reading asks nothing, and finds no bookmark the person refused.
            found = await client.call_json("browser_bookmarks", {"action": "search", "query": "Asked first"})
            assert found["results"] == []
    finally:
        await change_settings(world, shareRecords=False, approvalPolicy="destructive")


def _json(result: Any) -> Any:
    return json.loads(text(result))
