"""End to end in headless Chromium: what a web app did, through a real broker and the MCP SDK's
client (the devtools group): browser_performance's vitals, WebSocket connections and their frames
in browser_network_requests / browser_network_request, and browser_a11y_audit with the vendored
axe-core. Each page (``tests/pages/app_*.html``, served by ``tests/support/app_site.py``) first
sets up its own fakes of what the tools read, PerformanceObserver, WebSocket and axe, which must
change nothing of the answers.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Page

from ..harness.waiting import eventually
from ..support.app_site import answer_with, check_audit, late_hero_vitals, line_of, serve_app_site
from ..support.extension_world import World, open_world
from ..support.mcp_clients import LEGACY, McpClient, mcp_client, text
from ..support.person_world import page_at
from ..support.testing_tools import ref_of

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    home = tmp_path_factory.mktemp("e2e-app-telemetry")
    async with serve_app_site() as site, open_world(home, site, World, probed=False) as world:
        yield world


@contextlib.asynccontextmanager
async def client_of(world: World, name: str, caps: str = "devtools") -> AsyncIterator[McpClient]:
    async with mcp_client(f"http://127.0.0.1:{world.broker.port}/mcp?caps={caps}", world.token, name, LEGACY) as client:
        yield client


async def open_page(client: McpClient, world: World, name: str, tag: str) -> tuple[str, Page]:
    """The page, opened by ``client`` in front (its current tab), its snapshot and the browser's page."""
    url = f"{world.site}/{name}?{tag}"
    await client.call_json("tabs", {"action": "open", "url": url})
    snapshot = text(await client.call("browser_snapshot", {}))
    page = await page_at(world, url)
    return snapshot, page


async def test_the_vitals_name_the_late_hero_image_as_lcp_and_the_slow_click_as_inp(world: World) -> None:
    async with client_of(world, "vitals") as client:
        await open_page(client, world, "app_vitals.html", "vitals")
        listed = {tool.name for tool in (await client.client.list_tools()).tools}
        assert {"browser_performance", "browser_a11y_audit"} <= listed
        snapshot, answer = await late_hero_vitals(client)
        # The image pushed the paragraph under it down: the shift names it.
        assert "<p#lede>" in line_of(answer, "- CLS: "), answer
        assert "no interaction" in line_of(answer, "- INP: "), answer

        await client.call("browser_click", {"element": "Slow button", "target": ref_of(snapshot, 'button "Slow')})
        answer = await eventually(lambda: answer_with(client, "browser_performance", "slowest"), "the interaction")
        inp = line_of(answer, "- INP: ")
        assert int(re.search(r"INP: (\d+) ms", inp).group(1)) >= 250, inp
        assert "<button#slow>" in inp, inp


async def test_the_devtools_tools_are_listed_only_to_a_client_that_asks(world: World) -> None:
    async with client_of(world, "plain", caps="") as client:
        listed = {tool.name for tool in (await client.client.list_tools()).tools}
        assert "browser_performance" not in listed and "browser_a11y_audit" not in listed
        assert "browser_network_requests" in listed


async def test_a_pages_websocket_frames_both_ways_are_listed_as_the_wire_carried_them(world: World) -> None:
    async with client_of(world, "chatter", caps="core") as client:
        snapshot, page = await open_page(client, world, "app_socket.html", "socket")
        await client.call("browser_click", {"element": "Talk", "target": ref_of(snapshot, 'button "Talk"')})
        await page.wait_for_function("document.getElementById('log').textContent === 'closed'")
        # The page's own fake WebSocket "sends" too: no connection, no frame of it is listed.
        await client.call("browser_click", {"element": "Lie", "target": ref_of(snapshot, 'button "Lie"')})
        listing = text(await client.call("browser_network_requests", {}))
        [socket] = [line for line in listing.splitlines() if "/ws" in line or "/lie" in line]
        number, rest = socket.split(". ", 1)
        host = world.site.removeprefix("http://")
        assert rest == f"[GET] ws://{host}/ws => [101] WebSocket closed, 4 frames (2 sent, 2 received)", listing

        details = text(await client.call("browser_network_request", {"index": int(number)}))
        frames = details.split("### Frames\n", 1)[1].splitlines()
        assert len(frames) == 4, details
        assert re.fullmatch(r'- \+\d+ ms -> sent, 306 bytes: "hello x{194}" \[first 200 of 306 characters\]', frames[0])
        assert re.fullmatch(r"- \+\d+ ms -> sent, binary, 3 bytes", frames[1]), frames
        patterns = [
            r'- \+\d+ ms <- received, 26 bytes: "echo: hello x{14}"',
            r"- \+\d+ ms <- received, binary, 4 bytes",
        ]
        assert all(any(re.fullmatch(pattern, frame) for frame in frames[2:]) for pattern in patterns), frames
        assert "I was never sent" not in details and "Upgrade: websocket" in details.replace("upgrade", "Upgrade")

        sent = text(await client.call("browser_network_request", {"index": int(number), "part": "request-body"}))
        assert sent.startswith("### Frames sent\n") and "received" not in sent and sent.count("\n- +") == 2, sent
        got = text(await client.call("browser_network_request", {"index": int(number), "part": "response-body"}))
        assert got.startswith("### Frames received\n") and "-> sent" not in got and got.count("\n- +") == 2, got


async def test_an_audit_finds_the_unlabeled_input_and_the_faint_text_despite_the_pages_own_axe(
    world: World,
) -> None:
    async with client_of(world, "auditor") as client:
        snapshot, page = await open_page(client, world, "app_audit.html", "audit")
        await check_audit(client, snapshot, page)


async def test_a_connections_frames_are_kept_to_its_last_200(world: World) -> None:
    async with client_of(world, "flooder", caps="core") as client:
        snapshot, page = await open_page(client, world, "app_socket.html", "flood")
        await client.call("browser_click", {"element": "Flood", "target": ref_of(snapshot, 'button "Flood"')})
        await page.wait_for_function("document.getElementById('log').textContent === 'flooded'")
        listing = text(await client.call("browser_network_requests", {}))
        [socket] = [line for line in listing.splitlines() if "/ws?flood" in line]
        assert socket.endswith("WebSocket closed, 260 frames (130 sent, 130 received)"), listing
        details = text(await client.call("browser_network_request", {"index": int(socket.split(".")[0])}))
        frames = details.split("### Frames\n", 1)[1].splitlines()
        assert frames[0] == "(the last 200 of 260 frames)" and len(frames) == 201, details
        assert '"message 1"' not in details and '"echo: message 130"' in details, details
