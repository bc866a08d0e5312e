"""Capability groups, as Playwright MCP's ``--caps``: which built-in tools each MCP client is offered.

The default list is Playwright MCP's default groups' tools and ours (tabs, page tools, windows,
history, bookmarks); a client that asks for a group (``/mcp?caps=vision,pdf``, ``browser-mcp mcp
--caps vision``, ``mcp-config --caps``) is offered its tools too, and only that client. A tool of a
group not asked for is refused, saying how to ask; REST serves every tool.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from broker.core.browser_tools import ACTIONS, GROUPS, TOOLS

from ..conftest import TOKEN, BrokerUnderTest, ConnectFake
from ..support.cli_helpers import CLI, SharedBroker, run_cli
from ..support.fakes import FakeTab
from ..support.mcp_clients import ERAS, MODERN, sdk_client, stdio_relay, text

ALL_ACTIONS = list(ACTIONS)
VISION = {tool.name for tool in TOOLS if tool.group == "vision"}
CORE = {tool.name for tool in TOOLS if tool.group == "core"}


def page() -> FakeTab:
    return FakeTab(7, "https://page7.example/", "Page 7")


def resolved(path: Path) -> Path:
    return path.resolve()


def builtin(names: list[str]) -> set[str]:
    return {name for name in names if name in {tool.name for tool in TOOLS}}


@pytest.mark.parametrize("era", ERAS)
async def test_each_client_is_offered_the_groups_it_asked_for(broker: BrokerUnderTest, era: str) -> None:
    await broker.extension(page(), actions=ALL_ACTIONS)
    async with (
        broker.mcp("plain", era) as plain,
        broker.mcp("drawer", era, caps="vision") as drawer,
        broker.mcp("everything", era, caps="all") as everything,
    ):
        assert builtin(await plain.tool_names()) == CORE
        assert builtin(await drawer.tool_names()) == CORE | VISION
        assert builtin(await everything.tool_names()) == {tool.name for tool in TOOLS}
        # Ours stay in every list.
        assert {"tabs", "browser_tabs", "browser_close"} <= set(await plain.tool_names())


async def test_a_tool_of_a_group_not_asked_for_is_refused_saying_how_to_ask(broker: BrokerUnderTest) -> None:
    fake = await broker.extension(page(), actions=ALL_ACTIONS)
    async with broker.mcp("plain", MODERN) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await client.call("browser_mouse_click_xy", {"x": 1, "y": 2})
        assert refused.is_error and text(refused).startswith("tool_not_found:")
        assert "caps=vision" in text(refused) and "--caps vision" in text(refused)
        assert not (await client.call("browser_snapshot", {})).is_error
    assert [sent["action"] for sent in fake.received("browserAction")] == ["snapshot"]
    # REST has no list to keep short: it serves every group.
    status, _ = await broker.post("/tabs/7/actions/mouse_click_xy", {"x": 1, "y": 2}, headers={"X-Session-Id": "r"})
    assert status == 409  # the MCP client's tab, not the group, is what stops it


@pytest.mark.parametrize("caps", ["vision,warp", "../etc", "core;all"])
async def test_an_unknown_capability_is_refused_naming_the_groups(broker: BrokerUnderTest, caps: str) -> None:
    await broker.mcp_running()
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    async with broker.client.post(
        f"/mcp?caps={caps}", json=request, headers={"Authorization": f"Bearer {TOKEN}"}
    ) as response:
        assert response.status == 400
        message = (await response.json())["error"]["message"]
    assert message.startswith("no capability") and "caps takes" in message
    assert all(group in message for group in GROUPS[1:])


async def test_the_stdio_relay_asks_for_what_mcp_caps_names(
    state_dir: Path, shared_broker: SharedBroker, connect_fake: ConnectFake
) -> None:
    await connect_fake(shared_broker, FakeTab(8, "https://page8.example/", "Page 8"), actions=ALL_ACTIONS)
    for extra, expected in (((), CORE), (("--caps", "vision"), CORE | VISION)):
        params = stdio_relay(shared_broker.discovery_dir, state_dir, *extra)
        async with sdk_client(params, "stdio-caps", MODERN) as client:
            assert builtin(await client.tool_names()) == expected


async def test_mcp_caps_refuses_an_unknown_group_before_it_starts(tmp_path: Path) -> None:
    printed = await run_cli("mcp", "--caps", "warp", discovery_dir=tmp_path)
    assert printed.returncode == 2 and "no capability 'warp'" in printed.stderr


async def test_mcp_config_carries_the_caps_into_both_forms(tmp_path: Path) -> None:
    discovery = resolved(tmp_path)
    printed = await run_cli("mcp-config", "--caps", "pdf,vision", discovery_dir=discovery)
    assert printed.returncode == 0, printed.stderr
    lines = printed.stdout.splitlines()
    stdio = shlex.split(next(line for line in lines if line.startswith("claude mcp add browser -- ")))
    assert stdio[5:] == [*CLI, "mcp", "--discovery-dir", str(discovery), "--caps", "vision,pdf"]
    http = shlex.split(next(line for line in lines if line.startswith("claude mcp add --transport http")))
    assert http[6].endswith("/mcp?caps=vision,pdf")
