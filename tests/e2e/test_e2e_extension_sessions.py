"""End to end: clients' tabs and the brokers the real extension joins, in headless Chromium.

The world of ``tests/support/extension_world.py`` (once with the polyfill, once with Chromium's
own WebMCP): a client opens, claims, focuses and closes tabs, each client's in a group of its own;
the extension joins every paired broker in the port range and no other program's server, a tab
one broker holds is refused to another, and a restarted broker or service worker finds the
tabs, tools and sessions again, as the popup shows them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from playwright.async_api import Page

from broker.core.security import PROJECT_EXTENSION_ID

from ..harness.chromium import trust_broker
from ..harness.waiting import WAIT, eventually
from ..support.cli_helpers import BrokerProcess, Brokers
from ..support.extension_world import World, group_title, site, stop_worker, tab_absent, tab_gone, tool_prefix, world
from ..support.mcp_clients import text
from ..support.probed_ports import serve_on_probed_port, start_probed_broker

__all__ = ["site", "world"]  # the module's browsers and pages, shared by these tests

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_a_client_opens_a_tab_in_its_group_and_closes_it(world: World) -> None:
    url = world.url("modern.html", "opened")
    async with world.mcp("Opening Client") as client:
        # Named, since a browser of another test run on this machine may join the same broker.
        opened = await client.call_json("tabs", {"action": "open", "url": url, "browser": world.browser_key})
        tab_id, ref = opened["opened"]["id"], opened["opened"]["ref"]
        await eventually(lambda: _tab_shows(world, tab_id, url), "the browser to show the opened tab")
        assert await group_title(world, tab_id) == "Opening Client"
        tab = await world.tab_at(url, {"echo", "fail", "temporary"})
        assert tab["owner"]["name"] == "Opening Client"
        names = await client.tool_names()
        assert tool_prefix(names, tab) + "echo" in names

        await client.call_json("tabs", {"action": "close", "tab": ref})
        await eventually(lambda: tab_absent(world, tab_id), "the closed tab to leave the broker's list")
        await eventually(lambda: tab_gone(world, tab_id), "the browser to close the tab")


async def test_two_clients_get_their_own_groups_and_cannot_use_each_others_tabs(world: World) -> None:
    async with world.mcp("Client One") as one, world.mcp("Client Two") as two:
        opened = []
        for client, tag in ((one, "one"), (two, "two")):
            url = world.url("modern.html", f"owned-by-{tag}")
            answer = await client.call_json("tabs", {"action": "open", "url": url, "browser": world.browser_key})
            opened.append(await world.tab_at(url, {"echo", "fail", "temporary"}))
            assert answer["opened"]["id"] == opened[-1]["id"]
        first, second = opened
        assert await group_title(world, first["id"]) == "Client One"
        assert await group_title(world, second["id"]) == "Client Two"

        refused = await two.call("call_page_tool", {"tab": first["ref"], "tool": "echo", "arguments": {"text": "x"}})
        assert refused.is_error and "tab_owned" in text(refused) and "Client One" in text(refused)
        refused = await one.call("tabs", {"action": "close", "tab": second["ref"]})
        assert refused.is_error and "Client Two" in text(refused)
        mine = await one.call("call_page_tool", {"tab": first["ref"], "tool": "echo", "arguments": {"text": "mine"}})
        assert not mine.is_error and json.loads(text(mine))["echoed"] == "mine"
        for client, tab in ((one, first), (two, second)):
            await client.call_json("tabs", {"action": "close", "tab": tab["ref"]})


async def test_a_claimed_tab_is_shown_in_the_clients_group_until_released(world: World) -> None:
    page, tab = await world.open_page("modern.html", "claimed", {"echo", "fail", "temporary"})
    assert await group_title(world, tab["id"]) is None
    async with world.mcp("Claiming Client") as client:
        await client.call_json("tabs", {"action": "claim", "tab": tab["ref"]})
        await eventually(lambda: _grouped_as(world, tab["id"], "Claiming Client"), "the claimed tab to join the group")
        # Asking the page afresh goes through the extension's discoverTools.
        listed = await client.call_json("page_tools", {"tab": tab["ref"], "refresh": True})
        assert {t["name"] for t in listed["tools"]} == {"echo", "fail", "temporary"}

        await client.call_json("tabs", {"action": "release", "tab": tab["ref"]})
        await eventually(lambda: _grouped_as(world, tab["id"], None), "the released tab to leave the group")
        await client.call_json("tabs", {"action": "claim", "tab": tab["ref"]})
        await eventually(lambda: _grouped_as(world, tab["id"], "Claiming Client"), "the tab to join the group again")
    # The session ended, so its tabs are released, and left open.
    await eventually(lambda: _grouped_as(world, tab["id"], None), "the ended session's group to go")
    assert not await tab_gone(world, tab["id"])
    await page.close()


async def _grouped_as(world: World, tab_id: int, title: str | None) -> bool:
    return await group_title(world, tab_id) == title


# Asked of the browser's own tabs API: Playwright's page list can trail tabs an extension opens.
async def _tab_shows(world: World, tab_id: int, url: str) -> bool:
    shown = await world.worker.evaluate(
        "async (id) => { try { const t = await chrome.tabs.get(id); return t.url || t.pendingUrl; }"
        " catch { return null; } }",
        tab_id,
    )
    return bool(shown == url)


async def test_a_client_focuses_and_closes_only_its_own_tabs(world: World) -> None:
    first, first_tab = await world.open_page("plain.html", "focus-1")
    second, second_tab = await world.open_page("plain.html", "focus-2")
    assert await _active(world, second_tab["id"])
    async with world.mcp("Focusing Client") as client:
        for action in ("focus", "close"):
            refused = await client.call("tabs", {"action": action, "tab": first_tab["ref"]})
            assert refused.is_error and text(refused).startswith("tab_not_claimed:"), text(refused)
        assert not await tab_gone(world, first_tab["id"]), "the person's tab stays open"
        await client.call_json("tabs", {"action": "claim", "tab": first_tab["ref"]})
        assert await _active(world, second_tab["id"]), "neither the refusal nor the claim brings a tab forward"
        await client.call_json("tabs", {"action": "focus", "tab": first_tab["ref"]})
        await eventually(lambda: _active(world, first_tab["id"]), "the browser to bring the tab to the front")

        async def reported() -> bool:
            return any(t["id"] == first_tab["id"] and t["active"] for t in await world.tabs())

        await eventually(reported, "the broker to hear which tab is in front")
    await first.close()
    await second.close()


async def _active(world: World, tab_id: int) -> bool:
    return bool(await world.worker.evaluate("async (id) => (await chrome.tabs.get(id)).active", tab_id))


async def test_the_extension_joins_every_paired_broker_in_the_port_range(world: World, tmp_path: Path) -> None:
    url = world.url("modern.html", "second-broker")
    page, _ = await world.open_page("modern.html", "second-broker", {"echo", "fail", "temporary"})
    async with second_broker(world, tmp_path) as http:
        tab = await tab_joined(http, url)
        async with http.post(f"/tabs/{tab['ref']}/claim") as response:
            assert response.status == 200, await response.text()
        async with http.post(f"/tabs/{tab['ref']}/tools/echo", json={"text": "both"}) as response:
            assert response.status == 200, await response.text()
            assert (await response.json())["result"] == {"echoed": "both", "from": "/modern.html"}
    assert (await world.browser() or {}).get("connected"), "the first broker lost the browser"
    await page.close()


async def test_a_tab_one_broker_holds_is_refused_to_another_brokers_claim_naming_the_holder(
    world: World, tmp_path: Path
) -> None:
    url = world.url("modern.html", "held")
    page, first_tab = await world.open_page("modern.html", "held", {"echo", "fail", "temporary"})
    await world.claim(first_tab["ref"])
    async with second_broker(world, tmp_path, {"X-Session-Name": "Second Agent"}) as http:
        tab = await tab_joined(http, url)
        async with http.post(f"/tabs/{tab['ref']}/claim") as response:
            body = await response.json()
            assert response.status == 409 and body["error"]["code"] == "tab_owned", body
            assert f"the broker on port {world.broker.port}" in body["error"]["message"], body
        async with http.get("/tabs") as response:
            again = next(t for t in (await response.json())["tabs"] if t["id"] == tab["id"])
        assert again["owner"] is None, "the refused claim was undone"
        status, body = await world.post(f"/tabs/{first_tab['ref']}/tools/echo", {"text": "still mine"})
        assert status == 200 and body["result"]["echoed"] == "still mine", body
        # Released by its holder, the tab may be claimed by the other broker's session.
        status, body = await world.post(f"/tabs/{first_tab['ref']}/release", {})
        assert status == 200, body
        async with http.post(f"/tabs/{tab['ref']}/claim") as response:
            assert response.status == 200, await response.text()
    await page.close()


@contextlib.asynccontextmanager
async def second_broker(
    world: World, home: Path, headers: dict[str, str] | None = None
) -> AsyncIterator[aiohttp.ClientSession]:
    """A second broker on a probed port, which the extension is paired with: REST to it, with its
    token and ``headers``."""
    async with Brokers(home / "discovery") as brokers:
        second = await start_probed_broker(brokers)
        await trust_broker(world.worker, second.token)
        sent = {"Authorization": f"Bearer {second.token}", **(headers or {})}
        async with aiohttp.ClientSession(f"http://127.0.0.1:{second.port}", headers=sent) as http:
            yield http


async def tab_joined(http: aiohttp.ClientSession, url: str) -> dict[str, Any]:
    """The tab at ``url`` with its three tools, once the broker ``http`` speaks to lists it (the
    extension probes the range again with backoff, at most 2 s apart)."""

    async def listed() -> dict[str, Any] | None:
        async with http.get("/tabs") as response:
            tabs = (await response.json())["tabs"]
        return next((t for t in tabs if t["url"] == url and len(t["tools"]) == 3), None)

    tab: dict[str, Any] = await eventually(listed, "the extension to join a second broker", within=WAIT * 2)
    return tab


async def test_another_programs_server_in_the_port_range_gets_no_websocket(world: World) -> None:
    """The extension probes with plain requests and opens a link only where a broker answers."""
    requests: list[web.Request] = []
    three = asyncio.Event()

    async def answer(request: web.Request) -> web.Response:
        requests.append(request)
        if len(requests) >= 3:
            three.set()
        return web.Response(status=404, text="not a broker")

    app = web.Application()
    app.router.add_route("*", "/{anything:.*}", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        await serve_on_probed_port(runner)
        # The extension sweeps the range at least every 2 s.
        async with asyncio.timeout(WAIT):
            await three.wait()
        upgrades = [r.headers.get("Upgrade") for r in requests if r.headers.get("Upgrade")]
        assert upgrades == [], "the extension opened a WebSocket to a server that is not a broker"
    finally:
        await runner.cleanup()


async def test_the_extension_rejoins_a_broker_restarted_on_its_port(world: World, tmp_path: Path) -> None:
    url = world.url("legacy.html", "broker-restart")
    page, _ = await world.open_page("legacy.html", "broker-restart", {"add", "shout"})
    async with Brokers(tmp_path / "discovery") as brokers:
        before = await start_probed_broker(brokers)
        # Paired once: the restarted broker keeps its token (the token file), so it is believed too.
        await trust_broker(world.worker, before.token)
        tab = await eventually(lambda: _listed(before, url), "the extension to join the broker")
        # A script's session (REST) claims the tab: the browser groups it under the session's name.
        claimed = await _claim(before, tab["ref"], "Old Client")
        assert claimed == 200
        await eventually(lambda: _grouped_as(world, tab["id"], "Old Client"), "the claimed tab to be grouped")
        popup = await world.context.new_page()
        await popup.goto(f"chrome-extension://{PROJECT_EXTENSION_ID}/person/popup.html")
        await eventually(lambda: _popup_lists_session(popup, "Old Client"), "the popup to show the session")
        before.send_signal(signal.SIGTERM)
        await before.exited()
        await eventually(
            lambda: _popup_says(popup, f"Port {before.port}: reconnecting"), "the popup to show the broker is gone"
        )
        after = await brokers.start(port=before.port)
        # The extension looks again half a second after a link closes, then backs off.
        tab = await eventually(lambda: _listed(after, url), "the extension to rejoin the restarted broker")
        assert {t["name"] for t in tab["tools"]} == {"add", "shout"}
        await eventually(lambda: _popup_says(popup, f"Port {after.port}: connected"), "the popup to show it is back")
        # The new broker has no such session: the extension forgets it and ungroups its tab.
        await eventually(lambda: _grouped_as(world, tab["id"], None), "the old session's group to go")
        assert not await _popup_lists_session(popup, "Old Client")
        await popup.close()
    await page.close()


async def _claim(broker: BrokerProcess, ref: str, client_name: str) -> int:
    token = broker.token
    session_id = client_name.lower().replace(" ", "-")
    headers = {"Authorization": f"Bearer {token}", "X-Session-Id": session_id, "X-Session-Name": client_name}
    async with (
        aiohttp.ClientSession(headers=headers) as http,
        http.post(f"http://127.0.0.1:{broker.port}/tabs/{ref}/claim") as response,
    ):
        return response.status


async def _popup_says(popup: Page, line: str) -> bool:
    """Whether a line of the popup's broker list starts with ``line`` (the broker's version may
    follow); it asks the worker again every two seconds."""
    return any(shown.startswith(line) for shown in (await popup.locator("#brokers").inner_text()).splitlines())


async def _popup_lists_session(popup: Page, name: str) -> bool:
    return name in await popup.locator("#sessions").inner_text()


async def _listed(broker: BrokerProcess, url: str) -> dict[str, Any] | None:
    token = broker.token
    async with (
        aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as http,
        http.get(f"http://127.0.0.1:{broker.port}/tabs") as response,
    ):
        tabs = (await response.json())["tabs"]
    return next((t for t in tabs if t["url"] == url and t["tools"]), None)


async def test_the_popup_shows_brokers_sessions_tabs_and_tools(world: World) -> None:
    page, tab = await world.open_page("modern.html", "popup", {"echo", "fail", "temporary"})
    popup = await world.context.new_page()
    async with world.mcp("Popup Client") as client:
        # A browser hears of a session once it acts there (docs/extension-link.md).
        await client.call_json("tabs", {"action": "claim", "tab": tab["ref"]})
        await popup.goto(f"chrome-extension://{PROJECT_EXTENSION_ID}/person/popup.html")
        body = popup.locator("body")

        async def shown() -> str | None:
            seen = await body.inner_text()
            return seen if "Popup Client" in seen and "Modern tools" in seen else None

        # The popup asks the worker again every two seconds while it is open.
        seen = await eventually(shown, "the popup to show the client's session and the tab")
        brokers = await popup.locator("#brokers").inner_text()
        assert f"Port {world.broker.port}: connected" in brokers, brokers
        sessions = await popup.locator("#sessions").inner_text()
        assert "Popup Client" in sessions and f"port {world.broker.port}" in sessions, sessions
        tabs = await popup.locator("#tabs").inner_text()
        assert "Modern tools" in tabs, tabs
        assert world.url("modern.html", "popup") in tabs, tabs
        assert "echo" in tabs and "temporary" in tabs, tabs
        # No native messaging host is installed in this profile: the popup says so and how.
        native = await popup.locator("#native").inner_text()
        assert "Native host missing" in native, native
        assert "browser-mcp install-native-host" in native, native
        assert "8765-8785" in native, native
        assert "Cannot reach" not in seen
    await popup.close()
    await page.close()


async def test_a_restarted_service_worker_rebuilds_tabs_and_tools(world: World) -> None:
    """MV3 stops workers at will: a new one rejoins as the same browser and asks pages for tools.

    Last in the module: Playwright does not hand out the new worker, so ``world.worker`` is stale.
    """
    page, tab = await world.open_page("modern.html", "restart", {"echo", "fail", "temporary"})
    # Claimed before the worker stops: the new one must still know whose tab it is and its group.
    headers = {"X-Session-Id": "kept-client", "X-Session-Name": "Kept Client"}
    async with world.http.post(f"/tabs/{tab['ref']}/claim", headers=headers) as response:
        assert response.status == 200, await response.text()
    await eventually(lambda: _grouped_as(world, tab["id"], "Kept Client"), "the claimed tab to be grouped")
    await stop_worker(world, page)
    # Any tab event wakes the worker again.
    other, _ = await world.open_page("plain.html", "restart-wake")

    async def rejoined() -> bool:
        browser = await world.browser()
        return browser is not None and browser["connected"]

    await eventually(rejoined, "the new worker to rejoin as the same browser")
    await world.tab_at(world.url("modern.html", "restart"), {"echo", "fail", "temporary"})
    async with world.http.post(f"/tabs/{tab['ref']}/tools/echo", json={"text": "again"}, headers=headers) as answer:
        assert answer.status == 200, await answer.text()
        assert (await answer.json())["result"] == {"echoed": "again", "from": "/modern.html"}
    # The broker listed the session to the new worker as its browser's: its group stays.
    popup = await world.context.new_page()
    await popup.goto(f"chrome-extension://{PROJECT_EXTENSION_ID}/person/popup.html")
    await eventually(lambda: _popup_lists_session(popup, "Kept Client"), "the popup to list the kept session")
    group = await popup.evaluate(
        "async (id) => (await chrome.tabGroups.get((await chrome.tabs.get(id)).groupId)).title", tab["id"]
    )
    assert group == "Kept Client"
    await popup.close()
    await page.close()
    await other.close()
