"""Extensions that follow the original protocol literally, against the broker's own doors.

Such an extension answers ``openTab {focus: true}`` with ``tabFocused {requestId}`` for the tab it
has just created, announces every tab with ``"tools": []``, never pushes ``toolsChanged`` and only
answers ``discoverTools``; its ``tabFocused`` carries the tools it pushed, which is none. The broker
serves it as well as our own extension: the opened tab is the requester's, and the tools the
broker learns by asking are its owner's tools, with a list change, in both MCP eras, over HTTP and
over the stdio relay (``tests/relay/test_mcp_stdio.py``).
"""

from __future__ import annotations

import pytest

from ..conftest import BrokerUnderTest
from ..support.fakes import FakeExtension, FakeTab
from ..support.mcp_clients import ERAS, McpClient, text


def literal_shop(tab_id: int = 7) -> FakeTab:
    """A tab as the original protocol's extensions report it: no tools until the page is asked."""
    tab = FakeTab(tab_id, "https://shop.example/", "Shop", {"search": lambda args: {"hits": [args.get("q")]}})
    tab.announce_empty = True
    tab.push_tools = False
    return tab


async def focused_by_the_person(fake: FakeExtension, tab_id: int) -> None:
    """The person brings the tab to the front: the literal extension reports the tools it pushed, none."""
    await fake.send({"type": "tabFocused", "tabId": tab_id, "tools": []})


async def listed_after_a_change(client: McpClient, before: int) -> list[str]:
    await client.changes.next(before)
    return await client.tool_names()


# 1. openTab {focus: true} answered with tabFocused


@pytest.mark.parametrize("answer", ["newTabFocused", "unannouncedTabFocused"])
async def test_a_new_tab_the_browser_answers_with_tab_focused_is_the_requesters(
    answer: str, broker: BrokerUnderTest
) -> None:
    fake = await broker.extension(literal_shop())
    fake.answer_open_with = answer
    headers = {"X-Session-Id": "agent-1"}
    status, body = await broker.post("/tabs", {"url": "https://news.example/", "focus": True}, headers=headers)
    assert status == 200, body
    assert body["tab"]["owner"] == {"sessionId": "agent-1", "name": "agent-1"} and body["tab"]["active"] is True
    new_tab = body["tab"]["id"]
    assert new_tab != 7 and new_tab in fake.tabs
    # It is the session's to work in and to close; the person's tab stays theirs.
    tabs = {tab["id"]: tab for tab in (await broker.get("/tabs"))[1]["tabs"]}
    assert tabs[7]["owner"] is None
    status, body = await broker.delete(f"/tabs/{new_tab}", headers=headers)
    assert status == 200, body


async def test_a_tab_known_before_the_request_is_still_refused_when_focused_instead(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(literal_shop())
    fake.answer_open_with = "tabFocused"
    status, body = await broker.post("/tabs", {"url": "https://shop.example/", "focus": True})
    assert status == 409 and body["error"]["code"] == "tab_not_claimed"
    assert (await broker.get("/tabs"))[1]["tabs"][0]["owner"] is None


async def test_a_tab_focused_unannounced_without_an_open_request_is_still_refused(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(literal_shop())
    start = len(fake.inbox)
    await fake.send({"type": "tabFocused", "tabId": 99, "requestId": "c404", "tools": []})
    refusal = await fake.wait_for("error", start=start)
    assert refusal["code"] == "unknown_tab"
    assert [tab["id"] for tab in (await broker.get("/tabs"))[1]["tabs"]] == [7]


# 2. Tools learnt by asking are the owner's tools


@pytest.mark.parametrize("era", ERAS)
async def test_tools_someone_asked_for_are_the_claimers_tools(era: str, broker: BrokerUnderTest) -> None:
    fake = await broker.extension(literal_shop())
    status, body = await broker.get("/tabs/7/tools")
    assert status == 200 and [t["name"] for t in body["tools"]] == ["search"]
    await focused_by_the_person(fake, 7)
    async with broker.mcp("Claude Code", era) as client:
        before = client.changes.count
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        assert "t7_search" in await listed_after_a_change(client, before)
        result = await client.call("t7_search", {"q": "boots"})
        assert not result.is_error and "boots" in text(result)


@pytest.mark.parametrize("era", ERAS)
async def test_tools_learnt_by_asking_after_a_claim_reach_the_owner_with_a_list_change(
    era: str, broker: BrokerUnderTest
) -> None:
    fake = await broker.extension(literal_shop())
    async with broker.mcp("Claude Code", era) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        assert "t7_search" in await client.tool_names()
        # The page gains a tool; nothing is pushed, and someone else asks the page.
        fake.tabs[7].functions["compare"] = lambda args: "compared"
        before = client.changes.count
        status, body = await broker.get("/tabs/7/tools?refresh=true")
        assert status == 200 and [t["name"] for t in body["tools"]] == ["search", "compare"]
        assert "t7_compare" in await listed_after_a_change(client, before)
        # The person focusing the tab takes nothing away.
        await focused_by_the_person(fake, 7)
        await broker.settled(fake)
        assert {"t7_search", "t7_compare"} <= set(await client.tool_names())


async def test_the_persons_focus_does_not_wipe_tools_the_page_named(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(literal_shop())
    assert [t["name"] for t in (await broker.get("/tabs/7/tools"))[1]["tools"]] == ["search"]
    await focused_by_the_person(fake, 7)
    await broker.settled(fake)
    await broker.claim(7)
    status, body = await broker.post("/tabs/7/tools/search", {"q": "hats"})
    assert status == 200 and body["result"] == {"hits": ["hats"]}
    assert [t["name"] for t in (await broker.get("/tabs"))[1]["tabs"][0]["tools"]] == ["search"]
