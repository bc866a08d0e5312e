"""Tabs through the extension link over real loopback sockets, with scripted fake extensions: opened
tabs and their owners, tool discovery and changes, and several browsers, each hearing only of the
sessions that act in it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..conftest import BrokerUnderTest
from ..support.fakes import FakeExtension, FakeTab
from .link_world import call, shop


async def test_open_tab_answered_by_tab_created_belongs_to_the_session(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    status, body = await broker.post("/tabs", {"url": "https://news.example/"}, headers={"X-Session-Id": "agent-1"})
    assert status == 200
    tab = body["tab"]
    assert tab["url"] == "https://news.example/" and tab["owner"] == {"sessionId": "agent-1", "name": "agent-1"}
    assert fake.received("openTab")[0]["focus"] is True


async def test_open_tab_answered_by_focusing_an_own_tab(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    await broker.claim(7)
    fake.answer_open_with = "tabFocused"
    status, body = await broker.post("/tabs", {"url": "https://shop.example/", "focus": False})
    assert status == 200 and body["tab"]["id"] == 7 and body["tab"]["active"] is True


async def test_open_tab_answered_by_focusing_the_persons_tab_does_not_make_it_the_sessions(
    broker: BrokerUnderTest,
) -> None:
    fake = await broker.extension(shop())
    fake.answer_open_with = "tabFocused"
    status, body = await broker.post("/tabs", {"url": "https://shop.example/"})
    assert status == 409 and body["error"]["code"] == "tab_not_claimed"
    assert "brought its tab b1:7" in body["error"]["message"]
    assert (await broker.get("/tabs"))[1]["tabs"][0]["owner"] is None
    assert (await broker.delete("/tabs/7"))[1]["error"]["code"] == "tab_not_claimed"


async def test_tools_are_discovered_from_an_extension_that_never_pushes_them(broker: BrokerUnderTest) -> None:
    tab = shop()
    tab.push_tools = False
    fake = await broker.extension(tab)
    status, body = await broker.get("/tabs/7/tools")
    assert status == 200 and [t["name"] for t in body["tools"]] == ["search", "checkout"]
    assert len(fake.received("discoverTools")) == 1
    status, body = await broker.get("/tabs/7/tools")
    assert len(fake.received("discoverTools")) == 1


async def test_refresh_asks_the_page_even_when_the_extension_pushed_its_tools(broker: BrokerUnderTest) -> None:
    tab = shop()
    fake = await broker.extension(tab)
    # The page gained a tool the extension has not reported yet.
    tab.functions["compare"] = lambda args: "compared"
    status, body = await broker.get("/tabs/7/tools")
    assert [t["name"] for t in body["tools"]] == ["search", "checkout"]
    assert fake.received("discoverTools") == []
    status, body = await broker.get("/tabs/7/tools?refresh=true")
    assert status == 200 and [t["name"] for t in body["tools"]] == ["search", "checkout", "compare"]
    assert len(fake.received("discoverTools")) == 1
    # What the page said is now the tab's listing for everyone.
    status, body = await broker.get("/tabs")
    assert [t["name"] for t in body["tabs"][0]["tools"]] == ["search", "checkout", "compare"]
    status, body = await broker.get("/tabs/7/tools?refresh=maybe")
    assert status == 400 and "refresh" in body["error"]["message"]


async def test_tool_changes_update_the_listing(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop())
    await fake.set_tools(7, {"compare": lambda args: "compared"})
    await broker.settled(fake)
    status, body = await broker.get("/tabs/7/tools")
    assert [t["name"] for t in body["tools"]] == ["compare"]
    status, body = await call(broker, 7, "search")
    assert status == 404 and body["error"]["code"] == "tool_not_found"


async def test_person_closing_a_tab_removes_it(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(shop(), FakeTab(8, "about:blank"))
    await fake.remove_tab(7)
    await broker.settled(fake)
    status, body = await call(broker, 7, "search")
    assert status == 404 and body["error"]["code"] == "tab_not_found"


# Several browsers


async def test_same_tab_id_in_two_browsers_is_ambiguous(broker: BrokerUnderTest) -> None:
    await broker.extension(shop())
    await broker.extension(shop(), browser_name="Second")
    status, body = await broker.get("/tabs")
    assert sorted(t["ref"] for t in body["tabs"]) == ["b1:7", "b2:7"]
    status, body = await call(broker, 7, "search")
    assert status == 409 and body["error"]["code"] == "ambiguous_tab" and "b2:7" in body["error"]["message"]
    status, body = await call(broker, "b2:7", "search", {"q": "z"})
    assert status == 200


async def test_same_browser_reconnecting_replaces_its_old_link(broker: BrokerUnderTest) -> None:
    old = await broker.extension(shop(), instance_id="profile-1")
    status, _ = await broker.post("/tabs/7/claim", headers={"X-Session-Id": "agent-1"})
    assert status == 200
    new = await broker.extension(shop(), instance_id="profile-1")
    async with asyncio.timeout(5):
        await old.closed.wait()
    status, body = await broker.get("/tabs")
    assert [(t["ref"], t["owner"]["sessionId"]) for t in body["tabs"]] == [("b1:7", "agent-1")]
    status, body = await call(broker, 7, "search", headers={"X-Session-Id": "agent-1"})
    assert status == 200 and len(new.received("callTool")) == 1


async def test_a_browser_link_ends_only_its_own_browsers_sessions(broker: BrokerUnderTest) -> None:
    mine = await broker.extension(shop(7))
    other = await broker.extension(shop(8), browser_name="Other")
    agent = {"X-Session-Id": "agent", "X-Session-Name": "Agent"}
    assert (await broker.post("/tabs/b1:7/claim", headers=agent))[0] == 200
    assert (await call(broker, "b1:7", "search", headers=agent))[0] == 200
    # The other browser never heard of the session, so it cannot end it, nor learn it exists.
    start = len(other.inbox)
    await other.send({"type": "personEndedSession", "sessionId": "agent"})
    refusal = await other.wait_for("error", start=start)
    assert refusal["code"] == "unknown_session"
    await other.send({"type": "personEndedSession", "sessionId": "no-such-session"})
    assert (await other.wait_for("error", start=other.inbox.index(refusal) + 1))["message"] == refusal[
        "message"
    ].replace("'agent'", "'no-such-session'")
    status, body = await call(broker, "b1:7", "search", headers=agent)
    assert status == 200
    # Its own browser may; the other hears neither its connect nor its disconnect.
    await mine.send({"type": "personEndedSession", "sessionId": "agent"})
    await mine.wait_for("disconnect", lambda m: m["sessionId"] == "agent")
    status, body = await broker.post("/tabs/b1:7/tools/search", {}, headers=agent)
    assert status == 410 and "the person ended session 'Agent'" in body["error"]["message"]
    await broker.settled(other)
    assert [m for m in other.inbox if m.get("sessionId") == "agent"] == []


async def test_a_browser_link_cannot_release_another_browsers_tab_or_hold_its_call(broker: BrokerUnderTest) -> None:
    mine = await broker.extension(shop(7))
    other = await broker.extension(shop(8), browser_name="Other")
    agent = {"X-Session-Id": "agent"}
    assert (await broker.post("/tabs/b1:7/claim", headers=agent))[0] == 200
    start = len(other.inbox)
    await other.send({"type": "personReleasedTab", "tabId": 7})
    assert (await other.wait_for("error", start=start))["code"] == "unknown_tab"
    _, listing = await broker.get("/tabs")
    assert {t["ref"]: (t["owner"] or {}).get("sessionId") for t in listing["tabs"]} == {"b1:7": "agent", "b2:8": None}

    async def never(message: dict[str, Any]) -> None:
        # The other link claims the call waits for its person, for ten minutes.
        await other.send({"type": "approvalPending", "callId": message["callId"], "timeout": 600})

    mine.on_call = never
    async with asyncio.timeout(5):
        status, body = await call(broker, "b1:7", "search", headers=agent, params={"timeout": "0.5"})
    assert status == 504 and body["error"]["code"] == "timeout"
    assert "approval" not in body["error"]["message"]


async def test_a_browser_hears_only_the_sessions_that_act_in_it(broker: BrokerUnderTest) -> None:
    first = await broker.extension(shop(7))
    second = await broker.extension(shop(8), browser_name="Second")
    for session, tab in (("one", "b1:7"), ("two", "b2:8")):
        assert (await call(broker, tab, "search", headers={"X-Session-Id": session, "X-Session-Name": session}))[
            0
        ] == 200
    # A third lists tabs and tools everywhere and opens a tab in the second browser.
    third = {"X-Session-Id": "three"}
    assert (await broker.get("/tabs", headers=third))[0] == 200
    assert (await broker.get("/tabs/b1:7/tools", headers=third))[0] == 200
    assert (await broker.post("/tabs", {"url": "https://new.example/", "browser": "b2"}, headers=third))[0] == 200
    await broker.delete("/sessions/three")
    await broker.settled(first)
    await broker.settled(second)

    def named(fake: FakeExtension) -> list[tuple[str, str]]:
        return [
            (m["type"], m["sessionId"])
            for m in fake.inbox
            if m["type"] in ("connect", "disconnect") and "sessionId" in m
        ]

    assert named(first) == [("connect", "one")]
    assert named(second) == [("connect", "two"), ("connect", "three"), ("disconnect", "three")]


async def test_a_restarted_worker_hears_again_the_sessions_of_its_browser(broker: BrokerUnderTest) -> None:
    await broker.extension(shop(7), instance_id="profile-1")
    await broker.extension(shop(8), browser_name="Other", instance_id="profile-2")
    assert (await broker.post("/tabs/b1:7/claim", headers={"X-Session-Id": "mine", "X-Session-Name": "Mine"}))[0] == 200
    assert (await broker.post("/tabs/b2:8/claim", headers={"X-Session-Id": "theirs"}))[0] == 200
    restarted = await broker.extension(shop(7), instance_id="profile-1")
    listing = await restarted.wait_for("connect", lambda m: "sessionIds" in m)
    assert listing["sessionIds"] == ["mine"]
    named = [m for m in restarted.inbox if m["type"] == "connect" and m.get("sessionId")]
    assert [(m["sessionId"], m["clientName"]) for m in named] == [("mine", "Mine")]
