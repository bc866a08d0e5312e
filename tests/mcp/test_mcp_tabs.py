"""Tabs through MCP Streamable HTTP with the SDK's own client, in both protocol eras: opened, claimed,
focused and closed, each client kept in its own, the person's left alone until claimed.
"""

from __future__ import annotations

from ..conftest import BrokerUnderTest, MakeBroker
from ..support.mcp_clients import text
from .mcp_shop import shop


async def test_no_browser_explains_how_to_load_the_extension(broker: BrokerUnderTest, era: str) -> None:
    async with broker.mcp("Claude Code", era) as client:
        result = await client.call("tabs", {"action": "open", "url": "https://example.com/"})
        assert result.is_error and "load the browser-mcp extension" in text(result)


async def test_open_tab_gives_its_tools_and_close_removes_them(broker: BrokerUnderTest, era: str) -> None:
    fake = await broker.extension(shop(7))
    async with broker.mcp("Claude Code", era) as client:
        opened = await client.call_json("tabs", {"action": "open", "url": "https://news.example/"})
        tab = opened["opened"]
        assert tab["owner"]["name"] == "Claude Code"
        heard = client.changes.count
        await fake.set_tools(tab["id"], {"headlines": lambda a: ["a", "b"]})
        await client.changes.next(heard)
        assert f"t{tab['id']}_headlines" in await client.tool_names()
        heard = client.changes.count
        closed = await client.call_json("tabs", {"action": "close", "tab": tab["id"]})
        assert closed == {"closed": tab["ref"]}
        await client.changes.next(heard)
        assert f"t{tab['id']}_headlines" not in await client.tool_names()


async def test_tab_closed_by_the_person_says_the_tab_is_gone(broker: BrokerUnderTest, era: str) -> None:
    fake = await broker.extension(shop(7), shop(8))
    async with broker.mcp("Claude Code", era) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        assert "t7_search" in await client.tool_names()
        heard = client.changes.count
        await fake.remove_tab(7)
        await client.changes.next(heard)
        assert "t7_search" not in await client.tool_names()
        result = await client.call("t7_search", {"q": "x"})
        assert result.is_error and "gone" in text(result)


async def test_two_clients_are_kept_in_their_own_tabs(broker: BrokerUnderTest, era: str) -> None:
    await broker.extension(shop(7), shop(8))
    async with broker.mcp("Claude Code", era) as first, broker.mcp("Cursor", era) as second:
        await first.call_json("tabs", {"action": "claim", "tab": 7})
        await second.call_json("tabs", {"action": "claim", "tab": 8})
        assert "t7_search" in await first.tool_names() and "t8_search" not in await first.tool_names()
        assert "t8_search" in await second.tool_names() and "t7_search" not in await second.tool_names()
        for attempt in (
            second.call("call_page_tool", {"tab": 7, "tool": "search", "arguments": {}}),
            second.call("tabs", {"action": "close", "tab": 7}),
            second.call("tabs", {"action": "claim", "tab": 7}),
        ):
            refused = await attempt
            assert refused.is_error and "tab_owned" in text(refused) and "Claude Code" in text(refused)
        assert text(await first.call("t7_search", {"q": "mine"})) == '{"hits":["mine 7"]}'


async def test_the_persons_tab_is_neither_focused_nor_closed_nor_called_until_claimed(
    broker: BrokerUnderTest, era: str
) -> None:
    fake = await broker.extension(shop(7))
    async with broker.mcp("Claude Code", era) as client:
        for attempt in (
            client.call("tabs", {"action": "focus", "tab": 7}),
            client.call("tabs", {"action": "close", "tab": 7}),
            client.call("call_page_tool", {"tab": 7, "tool": "search", "arguments": {}}),
        ):
            refused = await attempt
            assert refused.is_error and text(refused).startswith("tab_not_claimed:"), text(refused)
            assert "claim it first" in text(refused)
        listed = await client.call_json("page_tools", {"tab": 7})
        assert [t["name"] for t in listed["tools"]] == ["search", "checkout"], "listing stays open"
        assert [m for m in fake.inbox if m["type"] in ("focusTab", "closeTab", "callTool")] == []
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        focused = await client.call_json("tabs", {"action": "focus", "tab": 7})
        assert focused["focus"]["owner"]["name"] == "Claude Code"
        assert (await fake.wait_for("focusTab"))["tabId"] == 7


async def test_open_tab_in_a_named_browser(broker: BrokerUnderTest, era: str) -> None:
    first = await broker.extension(shop(7))
    await broker.extension(shop(8), browser_name="Second")
    async with broker.mcp("Claude Code", era) as client:
        opened = await client.call_json("tabs", {"action": "open", "url": "https://a.example/", "browser": "b1"})
        assert opened["opened"]["browser"] == "b1" and len(first.received("openTab")) == 1
        refused = await client.call("tabs", {"action": "open", "url": "https://a.example/", "browser": "b9"})
        assert refused.is_error and "browser_not_found" in text(refused)


async def test_opening_a_tab_of_another_scheme_is_a_tool_error(broker: BrokerUnderTest, era: str) -> None:
    fake = await broker.extension(shop(7))
    async with broker.mcp("Claude Code", era) as client:
        refused = await client.call("tabs", {"action": "open", "url": "javascript:alert(1)"})
        assert refused.is_error and text(refused).startswith("invalid_request: cannot open 'javascript:alert(1)'")
    await broker.settled(fake)
    assert fake.received("openTab") == []


async def test_a_claim_the_browser_refuses_for_another_brokers_session_fails_naming_it_and_is_undone(
    make_broker: MakeBroker, era: str
) -> None:
    broker = await make_broker(call_timeout=1.0)
    fake = await broker.extension(shop(7), shop(8), shop(9), features=["claims"])
    fake.held_elsewhere[7] = 'tab 7 is held by session "Codex" of the broker on port 8766'
    async with broker.mcp("Claude Code", era) as client:
        refused = await client.call("tabs", {"action": "claim", "tab": 7})
        assert refused.is_error and refused.structured_content is not None
        assert refused.structured_content["error"]["code"] == "tab_owned"
        assert 'session "Codex" of the broker on port 8766' in text(refused)
        listed = await client.call_json("tabs", {"action": "list"})
        assert next(t for t in listed["tabs"] if t["id"] == 7)["owner"] is None, "the claim was undone"
        assert "t7_search" not in await client.tool_names()
        claimed = await client.call_json("tabs", {"action": "claim", "tab": 8})
        assert claimed["claim"]["owner"]["name"] == "Claude Code"
        assert [m.get("callId") is not None for m in fake.received("tabClaimed")] == [True, True]
        # An extension that says it answers claims and does not: the claim times out, undone.
        fake.answer_claims = False
        silent = await client.call("tabs", {"action": "claim", "tab": 9})
        assert silent.is_error and text(silent).startswith("timeout:"), text(silent)
        listed = await client.call_json("tabs", {"action": "list"})
        assert next(t for t in listed["tabs"] if t["id"] == 9)["owner"] is None
    assert fake.received("tabReleased")[-1]["tabId"] == 9, "the browser is told to ungroup what it may have grouped"
