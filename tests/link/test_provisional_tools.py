"""Extensions that follow the original protocol's examples: ``"tools": []`` until asked.

Such an extension announces every tab with an empty tool list (a new tab cannot know its page's
tools yet), never pushes ``toolsChanged``, and answers ``discoverTools``. The broker takes that
empty list as provisional and asks the page before answering; our own extension, which pushes,
pays nothing extra.
"""

from __future__ import annotations

from typing import Any

import pytest

from ..conftest import BrokerUnderTest
from ..support.fakes import FakeExtension, FakeTab
from ..support.mcp_clients import ERAS, MODERN, text


def quiet_shop(tab_id: int = 7) -> FakeTab:
    tab = FakeTab(tab_id, "https://shop.example/", "Shop", {"search": lambda args: {"hits": [args.get("q")]}})
    tab.announce_empty = True
    return tab


async def opened_shop(broker: BrokerUnderTest, fake: FakeExtension) -> int:
    """A tab the REST session opened, announced with ``"tools": []``, whose page has a search tool."""
    status, body = await broker.post("/tabs", {"url": "https://shop.example/new"})
    assert status == 200 and body["tab"]["tools"] == [], body
    tab_id: int = body["tab"]["id"]
    fake.tabs[tab_id].functions["search"] = lambda args: {"hits": [args.get("q")]}
    return tab_id


async def test_listing_a_tabs_tools_asks_the_page(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(quiet_shop())
    status, body = await broker.get("/tabs/7/tools")
    assert status == 200 and [t["name"] for t in body["tools"]] == ["search"]
    assert len(fake.received("discoverTools")) == 1
    # Confirmed now: asked once only.
    await broker.get("/tabs/7/tools")
    assert len(fake.received("discoverTools")) == 1


async def test_a_call_to_a_tool_not_yet_heard_of_asks_the_page_first(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(quiet_shop())
    tab = await opened_shop(broker, fake)
    status, body = await broker.post(f"/tabs/{tab}/tools/search", {"q": "shoes"})
    assert status == 200 and body["result"] == {"hits": ["shoes"]}
    [asked] = fake.received("discoverTools")
    [called] = fake.received("callTool")
    assert called["callId"] == asked["callId"]
    status, body = await broker.post(f"/tabs/{tab}/tools/teleport", {})
    assert status == 404 and body["error"]["code"] == "tool_not_found"
    assert len(fake.received("discoverTools")) == 1


async def test_a_tool_the_page_really_lacks_is_still_404(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(quiet_shop())
    tab = await opened_shop(broker, fake)
    status, body = await broker.post(f"/tabs/{tab}/tools/teleport", {})
    assert status == 404 and body["error"]["code"] == "tool_not_found" and "search" in body["error"]["message"]
    assert len(fake.received("discoverTools")) == 1 and fake.received("callTool") == []


async def test_a_claim_lists_the_pages_tools_for_the_client(broker: BrokerUnderTest) -> None:
    await broker.extension(quiet_shop(7), quiet_shop(8))
    status, body = await broker.post("/tabs/7/claim")
    assert status == 200 and _names(body["tab"]["tools"]) == ["search"]
    async with broker.mcp("Claude Code", MODERN) as client:
        claimed = await client.call_json("tabs", {"action": "claim", "tab": 8})
        assert _names(claimed["claim"]["tools"]) == ["search"]
        assert "t8_search" in await client.tool_names()
        result = await client.call("t8_search", {"q": "boots"})
        assert not result.is_error, text(result)


async def test_an_extension_that_pushes_pays_nothing_extra(broker: BrokerUnderTest) -> None:
    pushing = FakeTab(7, "https://shop.example/", "Shop", {"search": lambda args: "ok"})
    empty = FakeTab(8, "https://plain.example/", "Plain", {})
    fake = await broker.extension(pushing, empty)
    await fake.send({"type": "toolsChanged", "tabId": 8, "tools": []})
    await broker.settled(fake)
    await broker.claim(7, 8)
    assert (await broker.post("/tabs/7/tools/search", {}))[0] == 200
    assert (await broker.get("/tabs/8/tools"))[1]["tools"] == []
    status, _ = await broker.post("/tabs/8/tools/anything", {})
    assert status == 404
    assert fake.received("discoverTools") == []


async def test_a_page_that_never_answers_fails_the_call_in_time(broker: BrokerUnderTest) -> None:
    # The call's own time limit, short; the broker's, for opening the tab, as usual.
    fake = await broker.extension(quiet_shop())
    tab = await opened_shop(broker, fake)
    fake.reply_to_discover = False
    status, body = await broker.post(f"/tabs/{tab}/tools/search", {}, params={"timeout": "0.2"})
    assert status == 504 and body["error"]["code"] == "timeout" and "'search'" in body["error"]["message"]
    # The claim still stands when the page cannot say.
    status, body = await broker.post("/tabs/7/claim", headers={"X-Session-Id": "other"})
    assert status == 200 and body["tab"]["owner"]["sessionId"] == "other"


def echo_and_search(tab_id: int = 1) -> FakeTab:
    tools = {"echo": lambda args: args, "search": lambda args: {"hits": [args.get("q")]}}
    tab = FakeTab(tab_id, "https://shop.example/", "Shop", tools)
    tab.announce_empty = True
    return tab


async def session_snapshot_applied(broker: BrokerUnderTest, fake: FakeExtension) -> None:
    """Wait until the broker has told ``fake`` of an AI session and applied the snapshot it answered with."""
    await fake.wait_for("connect", lambda message: bool(message.get("sessionId")))
    await broker.settled(fake)


@pytest.mark.parametrize("era", ERAS)
async def test_tools_the_owner_learnt_stay_when_an_mcp_client_claims_the_tab(era: str, broker: BrokerUnderTest) -> None:
    # The original protocol's extensions answer each session's `connect` with every tab's
    # "tools": [] again: that says nothing of the page the owner's question already heard from.
    fake = await broker.extension(echo_and_search())
    fake.snapshot_per_session = True
    status, body = await broker.get("/tabs/1/tools")
    assert status == 200 and _names(body["tools"]) == ["echo", "search"]
    async with broker.mcp("Claude Code", era) as client:
        claimed = await client.call_json("tabs", {"action": "claim", "tab": 1})
        assert _names(claimed["claim"]["tools"]) == ["echo", "search"]
        await session_snapshot_applied(broker, fake)
        assert {"t1_echo", "t1_search"} <= set(await client.tool_names())
        result = await client.call("t1_search", {"q": "boots"})
        assert not result.is_error, text(result)
    status, body = await broker.get("/tabs/1/tools")
    assert _names(body["tools"]) == ["echo", "search"]
    assert len(fake.received("discoverTools")) == 1


async def test_a_repeated_empty_list_for_a_new_page_still_asks_it(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(echo_and_search())
    fake.snapshot_per_session = True
    assert _names((await broker.get("/tabs/1/tools"))[1]["tools"]) == ["echo", "search"]
    # The tab moved on to another page, whose tools nobody has asked for.
    fake.tabs[1].url = "https://shop.example/cart"
    fake.tabs[1].functions = {"checkout": lambda args: "done"}
    await fake.send_snapshot()
    await broker.settled(fake)
    status, body = await broker.get("/tabs/1/tools")
    assert status == 200 and _names(body["tools"]) == ["checkout"]
    assert len(fake.received("discoverTools")) == 2


def _names(tools: Any) -> list[str]:
    return [t["name"] for t in tools]
