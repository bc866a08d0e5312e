"""End to end: what the real extension's built-in browser tools leave alone, and what they refuse.

A tab behind the person's is driven while theirs stays in front, its mouse input reaching the
page move by move; the debugger leaves a tab its session releases or ends; a window that gained a
tab since the broker checked it stays open (``browserRequest``); nothing is read, called, closed or
focused in a tab the session does not hold, nor in one whose call waits for the person. The world is
``tests/support/actions_world.py``'s: headless Chromium with the real extension, joined to a
scripted fake broker.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
from typing import Any

import pytest

from ..harness.chromium import in_front, visible
from ..harness.waiting import eventually
from ..support.actions_world import SESSION, World, events, ref_of, world
from ..support.fake_broker import WAIT

__all__ = ["world"]  # the module's browser, shared by these tests

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_actions_in_a_background_tab_leave_the_persons_tab_active(world: World) -> None:
    person, person_page = await world.open("a.html")
    await person_page.bring_to_front()
    tab, page = await world.open("form.html", active=False)
    # What the person sees is read once the browser has put their tab in front, not meanwhile.
    await in_front(world.worker, tab_id=person)
    await visible(person_page)

    async def active_tabs() -> list[int]:
        tabs: list[int] = await world.worker.evaluate(
            "chrome.tabs.query({active: true}).then((found) => found.map((tab) => tab.id))"
        )
        return tabs

    async def seen() -> list[Any]:
        # Headless Chromium under Playwright may call every page visible; what counts is no change.
        return [await p.evaluate("[document.visibilityState, document.hasFocus()]") for p in (person_page, page)]

    assert person in await active_tabs() and tab not in await active_tabs()
    before = await seen()
    text = await world.ok(tab, "snapshot")
    await world.ok(tab, "click", target=ref_of(text, 'button "Buy now"'))
    await world.ok(tab, "type", target=ref_of(text, 'textbox "Name"'), text="quiet")
    await world.ok(tab, "press_key", key="Tab")
    shot = await world.act(tab, "take_screenshot")
    assert person in await active_tabs() and tab not in await active_tabs()
    assert await seen() == before
    [clicked] = await events(page, "click")
    assert clicked["isTrusted"]
    assert await page.eval_on_selector("#name", "(e) => e.value") == "quiet"
    # Headless Chromium paints background tabs; a visible window would not (capture_failed).
    assert shot.get("error") is None, shot
    assert base64.b64decode(shot["result"]["content"][1]["data"]).startswith(b"\x89PNG")
    await page.close()
    await person_page.close()


async def test_mouse_input_in_a_background_tab_reaches_the_page_move_by_move(world: World) -> None:
    # Every click and hover starts with a mouse move, which Chromium holds for the page's next
    # animation frame unless input is unbuffered; a tab behind the person's draws none. What the
    # page gets must not change with that: each move, then the press, in order, click after click
    # on a page each click changed (how long it takes is scripts/bench's business).
    async with world.behind_the_persons_tab("form.html") as (tab, page):
        text = await world.ok(tab, "snapshot")
        zone = re.search(r"- generic \[ref=(e\d+)\]: Hover here$", text, re.M)
        assert zone
        buy, gift = ref_of(text, 'button "Buy now"'), ref_of(text, 'checkbox "Gift wrap"')
        assert "Secret menu" in await world.ok(tab, "hover", target=zone.group(1))
        for target in (buy, gift, buy, gift):
            await world.ok(tab, "click", target=target)
        after = await world.ok(tab, "snapshot")
        assert 'checkbox "Gift wrap" [checked]' not in after and "Bought for real" in after, after
        assert await page.evaluate("window.hovered === true")
        events = await page.evaluate("window.events")
        seen = [(e["type"], e["target"]) for e in events if e["type"] in ("mouseover", "click")]
        # The checkbox's label is clicked where the box is: the box itself is the target.
        assert [event for event in seen if event[0] == "click"] == [("click", "buy"), ("click", "gift")] * 2, seen
        assert seen[0] == ("mouseover", "hover-zone") and ("mouseover", "gift") in seen, seen
        assert await page.eval_on_selector("#gift", "(e) => e.checked") is False
        assert tab not in await world.worker.evaluate(
            "chrome.tabs.query({active: true}).then((found) => found.map((tab) => tab.id))"
        )


async def attached(world: World, tab: int) -> bool:
    """Whether the extension holds a debugger session on the tab (Playwright's own does not count)."""
    answered: bool = await world.worker.evaluate(
        """(tabId) => chrome.debugger.sendCommand({tabId}, "Runtime.evaluate", {expression: "1"})
             .then(() => true, () => false)""",
        tab,
    )
    return answered


async def test_the_debugger_leaves_a_tab_its_session_releases_or_ends(world: World) -> None:
    tab, page = await world.open("a.html")
    await world.ok(tab, "snapshot")
    assert await attached(world, tab)
    await world.link.send({"type": "tabReleased", "sessionId": SESSION, "tabId": tab})
    await eventually(lambda: not_attached(world, tab), "the debugger to leave the released tab")
    await world.claim(tab)
    await world.ok(tab, "snapshot")
    assert await attached(world, tab), "the next action, claimed again, attaches again"

    # A debugger session that ends unannounced (as when the person cancels Chromium's bar).
    await world.worker.evaluate("(tabId) => chrome.debugger.detach({tabId})", tab)
    assert not await attached(world, tab)
    assert "Page A" in await world.ok(tab, "snapshot")
    assert await attached(world, tab)

    other = "session-ending"
    await world.link.send({"type": "connect", "sessionId": other, "serverVersion": "fake"})
    await world.claim(tab, other)
    action = {"type": "browserAction", "sessionId": other, "callId": "other", "tabId": tab, "action": "snapshot"}
    await world.link.send({**action, "args": {}})
    await world.link.wait_for("the other session's snapshot", lambda m: m.get("callId") == "other")
    await world.link.send({"type": "disconnect", "sessionId": other})
    await world.link.wait_for("disconnected", lambda m: m.get("type") == "disconnected" and m.get("sessionId") == other)
    await eventually(lambda: not_attached(world, tab), "the debugger to leave the ended session's tab")
    await page.close()


async def not_attached(world: World, tab: int) -> bool:
    return not await attached(world, tab)


async def test_a_window_that_gained_a_tab_since_the_broker_checked_it_stays_open(world: World) -> None:
    window = await world.worker.evaluate(
        "chrome.windows.create({url: 'about:blank', focused: false}).then((w) => ({id: w.id, tab: w.tabs[0].id}))"
    )
    await world.claim(window["tab"])
    # The broker checked the window when it held one tab; the person opened another since.
    arrived = await world.worker.evaluate(
        "(id) => chrome.tabs.create({windowId: id, url: 'about:blank', active: false}).then((tab) => tab.id)",
        window["id"],
    )
    answer = await world.request("closeWindow", windowId=window["id"], tabIds=[window["tab"]])
    assert answer["error"]["code"] == "window_changed", answer
    assert f"tab {arrived} opened in it" in answer["error"]["message"]
    open_tabs = "(id) => chrome.tabs.query({windowId: id}).then((tabs) => tabs.map((tab) => tab.id))"
    assert sorted(await world.worker.evaluate(open_tabs, window["id"])) == sorted([window["tab"], arrived])

    answer = await world.request("closeWindow", windowId=window["id"], tabIds=[window["tab"], arrived])
    assert answer["error"]["code"] == "tab_not_claimed", "the person's tab, though the broker named it"
    await world.claim(arrived)
    answer = await world.request("closeWindow", windowId=window["id"], tabIds=[window["tab"], arrived])
    assert answer.get("error") is None, answer
    assert await world.worker.evaluate(open_tabs, window["id"]) == []


async def test_the_extension_acts_only_in_tabs_the_broker_said_the_session_holds(world: World) -> None:
    """Whatever a server on the link sends, the person's tabs are not read, called, closed or focused."""
    tab, page = await world.open("form.html", active=False, claimed=False)
    before_url = page.url

    refused = await world.fails(tab, "snapshot")
    assert refused["code"] == "tab_not_claimed", refused
    assert f"tab {tab} is not held by session" in refused["message"] and "claimed first" in refused["message"]
    assert (await world.fails(tab, "navigate", url=world.url("b.html")))["code"] == "tab_not_claimed"
    called = await world.call_tool(tab, "x")
    assert called["error"]["code"] == "tab_not_claimed", called
    window = await world.worker.evaluate("(id) => chrome.tabs.get(id).then((t) => t.windowId)", tab)
    for request in ("focusWindow", "closeWindow"):
        answer = await world.request(request, windowId=window, tabIds=[tab])
        assert answer["error"]["code"] == "tab_not_claimed", answer
    await world.link.send({"type": "focusTab", "sessionId": SESSION, "tabId": tab})
    await world.link.send({"type": "closeTab", "sessionId": SESSION, "tabId": tab, "requestId": "close-1"})
    close = await world.link.wait_for("closeTab's refusal", lambda m: m.get("requestId") == "close-1")
    assert close["type"] == "error" and close["code"] == "tab_not_claimed", close
    await world.settled()
    assert not await attached(world, tab), "nothing attached the debugger to the person's tab"
    state = "(id) => chrome.tabs.get(id).then((t) => ({active: t.active, url: t.url}), () => null)"
    assert await world.worker.evaluate(state, tab) == {"active": False, "url": before_url}

    # Another session's tab is refused alike, to the session that does not hold it.
    other = "session-bystander"
    await world.link.send({"type": "connect", "sessionId": other, "serverVersion": "fake"})
    await world.claim(tab, other)
    assert (await world.fails(tab, "snapshot"))["code"] == "tab_not_claimed"
    await world.link.send({"type": "disconnect", "sessionId": other})
    await world.link.wait_for("disconnected", lambda m: m.get("type") == "disconnected" and m.get("sessionId") == other)

    # Claimed, the same requests go through; released, the tab is the person's again.
    await world.claim(tab)
    assert "Order form" in await world.ok(tab, "snapshot")
    await world.link.send({"type": "tabReleased", "sessionId": SESSION, "tabId": tab})
    await world.settled()
    assert (await world.fails(tab, "snapshot"))["code"] == "tab_not_claimed"
    await page.close()


async def test_the_extension_itself_refuses_a_call_in_a_tab_whose_call_waits_for_the_person(world: World) -> None:
    """Whatever a broker sends while an approval waits in a tab (another broker's call, or one sent
    before the broker heard of the approval), the extension refuses it with ``tab_busy``."""
    tab, page = await world.open("form.html")
    await world.approval_policy("destructive")
    try:
        evaluate = asyncio.ensure_future(world.act(tab, "evaluate", function="() => 41 + 1"))
        window = await world.context.wait_for_event(
            "page", lambda opened: "/person/approval.html" in opened.url, timeout=WAIT * 1000
        )
        await window.wait_for_selector("#agent:not(:empty)")
        # This broker never named the session's credential: the window says so and offers no "always".
        assert "did not name its credential" in await window.locator("#credential").inner_text()
        assert await window.locator("#always").is_hidden()
        busy = await world.act(tab, "navigate", url=world.url("a.html"))
        assert busy["error"]["code"] == "tab_busy", busy
        assert "an approval is waiting" in busy["error"]["message"]
        assert page.url == world.url("form.html")
        with contextlib.suppress(Exception):  # the window closes itself as it answers
            await window.get_by_role("button", name="Allow once").click()
        answered = await evaluate
        assert answered["error"] is None and "42" in json.dumps(answered["result"]), answered
        assert (await world.act(tab, "navigate", url=world.url("a.html")))["error"] is None
    finally:
        await world.approval_policy("never")
