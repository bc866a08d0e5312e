"""End to end: a page tool call called off reaches the page, with Chromium's WebMCP and the polyfill.

A client that cancels (MCP ``notifications/cancelled``), a call that times out, and a REST caller
that hangs up each fire the ``AbortSignal`` the running tool was given: ``client.signal`` for the
tool's ``execute(input, client)``. A tool that ignores it and never settles costs its client
nothing: the answer comes at the timeout all the same. A built-in ``browser_wait_for`` stops too,
and its tab takes the next action at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Page

from ..harness.page_server import serve_pages
from ..harness.waiting import WAIT, eventually
from ..support.extension_world import World, open_world
from ..support.mcp_clients import text

pytestmark = pytest.mark.asyncio(loop_scope="module")

SLOW = """<!doctype html><title>Slow tools</title><script>
window.calledOff = [];
document.modelContext.registerTool({
  name: "slow", description: "Works until called off",
  inputSchema: {type: "object", properties: {}},
  execute: (input, client) => new Promise((resolve) => {
    window.started = (window.started || 0) + 1;
    client.signal.addEventListener("abort", () => {
      window.calledOff.push(client.signal.reason?.name ?? "aborted");
      resolve("stopped");
    });
  }),
});
document.modelContext.registerTool({
  name: "stubborn", description: "Never settles, whatever it is told",
  inputSchema: {type: "object", properties: {}},
  execute: () => new Promise(() => { window.stubborn = true; }),
});
</script><h1>Slow tools</h1>"""


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["polyfill", "native"])
async def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    home: Path = tmp_path_factory.mktemp("e2e-cancel")
    flags = ("--enable-features=WebMCP",) if request.param == "native" else ()
    async with serve_pages({"slow.html": SLOW}) as site, open_world(home, site, World, request.param, flags) as world:
        yield world


async def called_off(page: Page) -> list[str]:
    found: list[str] = await page.evaluate("window.calledOff")
    return found


async def test_a_client_that_cancels_fires_the_tools_signal_in_the_page(world: World) -> None:
    page, tab = await world.open_page("slow.html", "cancel", {"slow", "stubborn"})
    async with world.mcp("canceller") as client:
        await client.call_json("tabs", {"action": "claim", "tab": tab["ref"]})
        call = asyncio.ensure_future(client.call("call_page_tool", {"tab": tab["ref"], "tool": "slow"}))
        await eventually(lambda: page.evaluate("window.started === 1"), "the tool to start")
        call.cancel()
        await eventually(lambda: called_off(page), "the tool's signal to fire")
        assert await called_off(page) == ["AbortError"]
        # The session goes on, and the page's tools still answer.
        assert (await client.call_json("tabs", {"action": "list"}))["tabs"]
    await page.close()


async def test_a_call_that_times_out_fires_the_signal_and_the_client_hears_the_timeout(world: World) -> None:
    page, tab = await world.open_page("slow.html", "timeout", {"slow", "stubborn"})
    await world.post(f"/tabs/{tab['ref']}/claim", {})
    status, body = await world.post(f"/tabs/{tab['ref']}/tools/slow?timeout=1", {})
    assert (status, body["error"]["code"]) == (504, "timeout"), body
    await eventually(lambda: called_off(page), "the tool's signal to fire")
    # One that ignores its signal and never settles: its caller hears the timeout all the same.
    status, body = await world.post(f"/tabs/{tab['ref']}/tools/stubborn?timeout=1", {})
    assert (status, body["error"]["code"]) == (504, "timeout"), body
    assert await page.evaluate("window.stubborn") is True
    status, _ = await world.post(f"/tabs/{tab['ref']}/release", {})
    assert status == 200
    await page.close()


async def test_a_rest_caller_that_hangs_up_fires_the_signal(world: World) -> None:
    page, tab = await world.open_page("slow.html", "hangup", {"slow", "stubborn"})
    await world.post(f"/tabs/{tab['ref']}/claim", {})
    call = asyncio.ensure_future(world.post(f"/tabs/{tab['ref']}/tools/slow", {}))
    await eventually(lambda: page.evaluate("window.started === 1"), "the tool to start")
    call.cancel()
    await eventually(lambda: called_off(page), "the tool's signal to fire")
    await world.post(f"/tabs/{tab['ref']}/release", {})
    await page.close()


async def test_a_wait_called_off_stops_and_its_tab_takes_the_next_action(world: World) -> None:
    page, tab = await world.open_page("slow.html", "wait", {"slow", "stubborn"})
    async with world.mcp("waiter") as client:
        await client.call_json("tabs", {"action": "claim", "tab": tab["ref"]})
        wait = asyncio.ensure_future(client.call("browser_wait_for", {"tab": tab["ref"], "time": 20}))

        async def in_flight() -> bool:
            return bool((await world.get("/status"))["pendingCalls"])

        await eventually(in_flight, "the wait to be under way")
        wait.cancel()
        # Queued behind the wait, the snapshot would take the rest of its 20 s; called off, the
        # wait frees the tab at once. The client sends the snapshot first and its cancel after,
        # and may hang up on the cancel's 202 (the broker once lost such a cancel, one run in
        # seven). The bound is 10 s for a loaded machine: still well short of what is left of the wait.
        async with asyncio.timeout(WAIT * 2 / 3):
            snapshot = await client.call("browser_snapshot", {"tab": tab["ref"]})
        assert not snapshot.is_error and "Slow tools" in text(snapshot), text(snapshot)
    await page.close()
