"""End to end: the person in charge, through the real extension's popup and options page.

The popup names which agent holds each tab and tells two same-named agents apart by credential;
from it the person releases a tab, ends a session, and pauses every agent at once (a pause that
outlives the service worker); in the options page they have the extension leave a broker. The
world is ``tests/support/person_world.py``'s: a real broker, headless Chromium with the real
extension, AI clients over MCP and REST, and a tiny shop. Each state of the popup is saved as a
picture in ``tests/output/e2e_person/`` (or ``$BROWSER_MCP_E2E_OUTPUT``) for a reviewer to look at.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from playwright.async_api import Page

from broker.core.security import client_token

from ..harness.waiting import eventually
from ..support.extension_world import World, group_title, stop_worker, tab_gone
from ..support.mcp_clients import LEGACY, mcp_client, text
from ..support.person_world import (
    EXTENSION_URL,
    GROUP_COLORS,
    SHOP_TOOLS,
    gone,
    open_popup,
    open_shop_for,
    page_at,
    picture,
    session_ended_then_claimed_again,
    text_has,
    world,
)

__all__ = ["world"]  # the module's browser, shared by these tests

pytestmark = pytest.mark.asyncio(loop_scope="module")


def tab_row(popup: Page, url: str) -> Any:
    return popup.locator("#tabs li", has_text=url)


async def shows(popup: Page, selector: str, words: str) -> bool:
    return words in await popup.locator(selector).inner_text()


async def owner_of(world: World, tab_id: int) -> Any:
    return next(t["owner"] for t in await world.tabs() if t["id"] == tab_id)


async def test_the_popup_shows_which_agent_holds_each_tab(world: World) -> None:
    person_page, _ = await world.open_page("person.html", "owners")
    async with world.mcp("Claude Code") as client:
        tab = await open_shop_for(client, world, "owners")
        popup = await open_popup(world)
        held = tab_row(popup, world.url("shop.html", "owners"))
        await eventually(lambda: text_has(held, "Claude Code"), "the popup to name the tab's agent")
        assert "Release" in await held.inner_text()
        colour = await held.locator(".agent").evaluate("(chip) => getComputedStyle(chip).backgroundColor")
        group = await world.worker.evaluate(
            "async (id) => (await chrome.tabGroups.get((await chrome.tabs.get(id)).groupId)).color", tab["id"]
        )
        assert colour == GROUP_COLORS[group], (colour, group)
        mine = tab_row(popup, world.url("person.html", "owners"))
        assert "No agent" in await mine.inner_text()
        assert "Release" not in await mine.inner_text()
        sessions = await popup.locator("#sessions").inner_text()
        assert "Claude Code" in sessions and "1 tab" in sessions and "End session" in sessions
        await picture(popup, "popup-owners")
        await popup.close()
    await person_page.close()


async def test_the_person_releases_a_tab_from_the_popup(world: World) -> None:
    async with world.mcp("Releasing Agent") as client:
        tab = await open_shop_for(client, world, "release")
        popup = await open_popup(world)
        row = tab_row(popup, world.url("shop.html", "release"))
        await eventually(lambda: text_has(row, "Releasing Agent"), "the popup to show the held tab")
        await row.get_by_role("button", name="Release").click()
        await eventually(lambda: text_has(row, "No agent"), "the popup to show the tab released")
        await picture(popup, "popup-released")
        assert await owner_of(world, tab["id"]) is None
        assert await group_title(world, tab["id"]) is None
        refused = await client.call("browser_snapshot", {"tab": tab["ref"]})
        assert refused.is_error and text(refused).startswith("tab_not_claimed:"), text(refused)
        assert "The person took this tab back" in text(refused)
        await popup.close()
    assert not await tab_gone(world, tab["id"])


async def test_the_person_ends_a_session_from_the_popup(world: World) -> None:
    async with world.mcp("Ended Agent") as client:
        tab = await open_shop_for(client, world, "end")
        popup = await open_popup(world)
        row = popup.locator("#sessions li", has_text="Ended Agent")
        await eventually(lambda: text_has(row, "Ended Agent"), "the popup to list the session")
        await row.get_by_role("button", name="End session").click()
        await eventually(lambda: gone(popup, "#sessions", "Ended Agent"), "the session to leave the popup")
        await picture(popup, "popup-session-ended")
        await eventually(lambda: _released(world, tab["id"]), "the broker to release the session's tab")
        assert await group_title(world, tab["id"]) is None
        assert not await tab_gone(world, tab["id"]), "the ended session's tab must stay open"
        await session_ended_then_claimed_again(client, tab, "Ended Agent")
        await popup.close()


async def _badge_is(world: World, badge: str) -> bool:
    # The worker draws the toolbar as it answers the popup, not before: soon, not at once.
    return bool(await world.worker.evaluate("chrome.action.getBadgeText({})") == badge)


async def _released(world: World, tab_id: int) -> bool:
    return await owner_of(world, tab_id) is None


async def test_pause_fails_every_call_at_once_and_resume_lets_them_through(world: World) -> None:
    async with world.mcp("Paused Agent") as client:
        tab = await open_shop_for(client, world, "pause")
        persons_page, persons = await world.open_page("shop.html", "pause-person", SHOP_TOOLS)
        await world.claim(persons["ref"])
        popup = await open_popup(world)
        await eventually(lambda: shows(popup, "#sessions", "Paused Agent"), "the popup to list the session")
        await popup.get_by_role("button", name="Pause agents").click()
        await eventually(lambda: shows(popup, "#paused", "AI agents are paused"), "the popup to say agents are paused")
        await picture(popup, "popup-paused")
        await eventually(lambda: _badge_is(world, "II"), "the toolbar to show the pause badge")
        await eventually(_paused_in(world, True), "the broker to hear of the pause")

        page = await page_at(world, world.url("shop.html", "pause"))
        started = asyncio.get_running_loop().time()
        for name, args in (("call_page_tool", {"tab": tab["ref"], "tool": "look"}), ("browser_snapshot", {})):
            refused = await client.call(name, args)
            assert refused.is_error and text(refused).startswith("paused: the person paused AI agents"), text(refused)
        status, body = await world.post(f"/tabs/{persons['ref']}/tools/look", {})
        assert status == 423 and body["error"]["code"] == "paused", body
        assert asyncio.get_running_loop().time() - started < 5, "refusals must come at once"
        assert await page.evaluate("window.bought ?? 0") == 0

        await popup.get_by_role("button", name="Resume agents").click()
        await eventually(lambda: _hidden(popup, "#paused"), "the popup to show agents resumed")
        await picture(popup, "popup-resumed")
        await eventually(lambda: _badge_is(world, ""), "the toolbar to leave its pause badge")
        await eventually(_paused_in(world, False), "the broker to hear agents resumed")
        looked = await client.call("call_page_tool", {"tab": tab["ref"], "tool": "look"})
        assert not looked.is_error and text(looked) == "12 EUR", text(looked)
        await popup.close()
        await persons_page.close()


def _paused_in(world: World, paused: bool) -> Any:
    async def check() -> bool:
        browser = await world.browser()
        return browser is not None and browser["paused"] is paused

    return check


async def _hidden(popup: Page, selector: str) -> bool:
    return not await popup.locator(selector).is_visible()


async def test_a_broker_the_person_ignores_is_left_until_they_take_it_back(world: World) -> None:
    options = await world.context.new_page()
    await options.goto(f"{EXTENSION_URL}/person/options.html")
    await options.locator("#ignored").fill(str(world.broker.port))
    await options.get_by_role("button", name="Save").click()

    async def left() -> bool:
        browser = await world.browser()
        return browser is None or not browser["connected"]

    await eventually(left, "the extension to leave the ignored broker")
    await options.locator("#ignored").fill("")
    await options.get_by_role("button", name="Save").click()

    async def back() -> bool:
        browser = await world.browser()
        return browser is not None and browser["connected"]

    await eventually(back, "the extension to join the broker again")
    await options.close()


def client_mcp(world: World, name: str, credential: str | None = None) -> Any:
    """An MCP client named ``name``, with the broker's token or the client token of ``credential``."""
    token = world.token if credential is None else client_token(world.token, credential)
    return mcp_client(f"http://127.0.0.1:{world.broker.port}/mcp", token, name, LEGACY)


async def test_the_popup_tells_two_same_named_agents_apart_by_credential(world: World) -> None:
    async with client_mcp(world, "Twin Agent") as owners, client_mcp(world, "Twin Agent", "alice") as alices:
        await open_shop_for(owners, world, "twin-owner")
        await open_shop_for(alices, world, "twin-alice")
        popup = await open_popup(world)
        rows = popup.locator("#sessions li", has_text="Twin Agent")
        await eventually(lambda: _count_is(rows, 2), "the popup to list both sessions")
        credentials = sorted([await row.locator(".credential").inner_text() for row in await rows.all()])
        assert credentials == ["via alice", "via owner"], credentials
        for tag, credential in (("twin-owner", "via owner"), ("twin-alice", "via alice")):
            held = tab_row(popup, world.url("shop.html", tag))
            assert credential in await held.inner_text()
            assert await held.locator(".credential").is_visible()
        await picture(popup, "popup-credentials")
        await popup.close()


async def _count_is(locator: Any, count: int) -> bool:
    return await locator.count() == count


async def test_the_pause_survives_a_service_worker_restart(world: World) -> None:
    """Last in the module: Playwright does not hand out the new worker, so ``world.worker`` is stale."""
    popup = await open_popup(world)
    await popup.get_by_role("button", name="Pause agents").click()
    await eventually(_paused_in(world, True), "the broker to hear of the pause")
    page, tab = await world.open_page("shop.html", "restart", SHOP_TOOLS)
    await world.claim(tab["ref"])
    await stop_worker(world, page)
    other, _ = await world.open_page("person.html", "restart-wake")  # a tab event wakes the worker

    async def rejoined_paused() -> bool:
        browser = await world.browser()
        return browser is not None and browser["connected"] and browser["paused"]

    await eventually(rejoined_paused, "the new worker to rejoin, still paused")
    status, body = await world.post(f"/tabs/{tab['ref']}/tools/look", {})
    assert status == 423, body
    await popup.reload()
    await eventually(lambda: shows(popup, "#paused", "AI agents are paused"), "the popup to show the pause")
    await popup.get_by_role("button", name="Resume agents").click()
    await eventually(_paused_in(world, False), "the broker to hear agents resumed")
    status, body = await world.post(f"/tabs/{tab['ref']}/tools/look", {})
    assert status == 200 and json.dumps(body["result"]) == '"12 EUR"', body
    for closing in (popup, page, other):
        await closing.close()
