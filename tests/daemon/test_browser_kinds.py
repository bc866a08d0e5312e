"""Browsers of more than one kind on one broker: each says its name and page driver in
``connected``, the broker keeps them per browser, and a client tells which tab is which kind."""

from __future__ import annotations

from ..conftest import BrokerUnderTest
from ..mcp.mcp_shop import shop
from ..support.mcp_clients import LEGACY

FIREFOX_DRIVER = {"name": "webextension", "actions": ["navigate", "snapshot"]}


async def test_status_keeps_each_browsers_page_driver(broker: BrokerUnderTest) -> None:
    await broker.extension(shop(7), browser_name="Chromium", driver={"name": "devtools", "actions": ["click"]})
    await broker.extension(shop(8), browser_name="Firefox", driver=FIREFOX_DRIVER)
    await broker.extension(shop(9), browser_name="Older")
    _, body = await broker.get("/status")
    assert {b["name"]: b["driver"] for b in body["browsers"]} == {
        "Chromium": {"name": "devtools", "actions": ["click"]},
        "Firefox": {"name": "webextension", "actions": ["navigate", "snapshot"]},
        "Older": {"name": "", "actions": []},
    }


async def test_tabs_say_their_browsers_name(broker: BrokerUnderTest) -> None:
    await broker.extension(shop(7), browser_name="Chromium")
    await broker.extension(shop(8), browser_name="Firefox", driver=FIREFOX_DRIVER)
    _, body = await broker.get("/tabs")
    assert {t["ref"]: t["browserName"] for t in body["tabs"]} == {"b1:7": "Chromium", "b2:8": "Firefox"}
    async with broker.mcp("Claude Code", LEGACY) as client:
        listed = await client.call_json("tabs", {"action": "list"})
        assert {t["ref"]: t["browserName"] for t in listed["tabs"]} == {"b1:7": "Chromium", "b2:8": "Firefox"}


async def test_page_tools_name_the_browser_while_two_kinds_are_connected(broker: BrokerUnderTest) -> None:
    await broker.extension(shop(7), browser_name="Chromium")
    await broker.extension(shop(8), browser_name="Firefox", driver=FIREFOX_DRIVER)
    async with broker.mcp("Claude Code", LEGACY) as client:
        for ref in ("b1:7", "b2:8"):
            await client.call_json("tabs", {"action": "claim", "tab": ref})
        tools = await client.tools()
        assert tools["t7_search"].description == "[page tool, tab b1:7 (Chromium), shop7.example] the search tool"
        assert tools["t8_search"].description == "[page tool, tab b2:8 (Firefox), shop8.example] the search tool"


async def test_one_kind_of_browser_leaves_the_labels_as_they_were(broker: BrokerUnderTest) -> None:
    await broker.extension(shop(7), browser_name="Firefox", driver=FIREFOX_DRIVER)
    await broker.extension(shop(8), browser_name="Firefox", driver=FIREFOX_DRIVER)
    async with broker.mcp("Claude Code", LEGACY) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        tools = await client.tools()
        assert tools["t7_search"].description == "[page tool, tab b1:7, shop7.example] the search tool"
