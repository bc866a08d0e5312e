"""The network tools' arguments, as a client sees them: a call the broker can tell is wrong is
refused with what it needs, before the browser hears it, and the session goes on."""

from __future__ import annotations

from typing import Any

import pytest

from broker.core.browser_tools import ACTIONS

from ..conftest import BrokerUnderTest
from ..support.fakes import FakeTab
from ..support.mcp_clients import MODERN, text


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("browser_network_request", {}, "needs `index`"),
        ("browser_network_request", {"index": 0}, "needs `index`"),
        ("browser_network_request", {"index": True}, "needs `index`"),
        ("browser_network_request", {"index": "2"}, "needs `index`"),
        ("browser_network_request", {"index": 2, "part": "cookies"}, "`part` must be one of"),
        ("browser_route", {}, "needs `pattern`"),
        ("browser_route", {"pattern": ""}, "needs `pattern`"),
        ("browser_route", {"pattern": 7}, "needs `pattern`"),
        ("browser_network_state_set", {}, "needs `state`"),
        ("browser_network_state_set", {"state": "slow-3g"}, "needs `state`"),
    ],
)
async def test_a_network_call_without_what_it_needs_is_refused_before_the_browser_hears(
    broker: BrokerUnderTest, tool: str, arguments: dict[str, Any], says: str
) -> None:
    fake = await broker.extension(FakeTab(7, "https://page7.example/", "Page 7"), actions=list(ACTIONS))
    async with broker.mcp("Claude Code", MODERN, caps="network") as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await client.call(tool, arguments)
        assert refused.is_error and text(refused).startswith("invalid_request:"), text(refused)
        assert says in text(refused)
        assert not (await client.call("browser_route_list", {})).is_error
    assert [action["action"] for action in fake.received("browserAction")] == ["route_list"]


async def test_a_network_tool_of_a_group_not_asked_for_is_not_listed_nor_run(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(FakeTab(7, "https://page7.example/", "Page 7"), actions=list(ACTIONS))
    async with broker.mcp("Claude Code", MODERN) as client:
        listed = set(await client.tool_names())
        assert "browser_network_request" in listed and "browser_route" not in listed
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await client.call("browser_route", {"pattern": "**/api"})
        assert refused.is_error and text(refused).startswith("tool_not_found:") and "network" in text(refused)
    assert fake.received("browserAction") == []
