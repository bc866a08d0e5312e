"""End to end in headless Firefox ESR: what a web app did, on the WebExtension driver, through a
real broker and the MCP SDK's client (the devtools group): browser_performance's vitals as far as
Firefox gives them, a page's WebSocket connection listed from its handshake with its frames
refused naming Firefox, and browser_a11y_audit with the vendored axe-core in the add-on's
isolated world. The pages are those of ``tests/e2e/test_e2e_app_telemetry.py``, each with its own
fakes of PerformanceObserver, WebSocket and axe set up first.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from ..harness.firefox import Context
from ..harness.waiting import eventually
from ..support.app_site import check_audit, late_hero_vitals, line_of, serve_app_site
from ..support.firefox_world import Fox, joined_firefox
from ..support.mcp_clients import LEGACY, McpClient, mcp_client, text
from ..support.testing_tools import ref_of

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fox]:
    home: Path = tmp_path_factory.mktemp("firefox-app-telemetry")
    async with serve_app_site() as site, joined_firefox(home, site) as world:
        yield world


@contextlib.asynccontextmanager
async def client_of(fox: Fox, name: str) -> AsyncIterator[McpClient]:
    async with mcp_client(f"{fox.broker_url}/mcp?caps=devtools", fox.broker.token, name, LEGACY) as client:
        yield client


async def open_page(client: McpClient, fox: Fox, name: str, tag: str) -> tuple[str, Context]:
    url = f"{fox.site}/{name}?{tag}"
    await client.call_json("tabs", {"action": "open", "url": url})
    snapshot = text(await client.call("browser_snapshot", {}))
    [page] = [Context(fox.firefox.bidi, c["context"]) for c in await fox.firefox.contexts() if c["url"] == url]
    return snapshot, page


async def test_the_vitals_in_firefox_name_the_late_hero_image_and_what_firefox_does_not_give(fox: Fox) -> None:
    async with client_of(fox, "vitals") as client:
        await open_page(client, fox, "app_vitals.html", "vitals")
        _, answer = await late_hero_vitals(client)
        # Firefox ESR has no layout-shift entries: said, not made up.
        assert line_of(answer, "- CLS: ") == "- CLS: not given by Firefox (no layout-shift entries)", answer


async def test_a_websocket_in_firefox_is_listed_and_its_frames_are_refused_naming_firefox(fox: Fox) -> None:
    async with client_of(fox, "chatter") as client:
        snapshot, page = await open_page(client, fox, "app_socket.html", "socket")
        await client.call("browser_click", {"element": "Talk", "target": ref_of(snapshot, 'button "Talk"')})
        await eventually(lambda: page.evaluate("document.getElementById('log').textContent === 'closed'"), "closed")
        await client.call("browser_click", {"element": "Lie", "target": ref_of(snapshot, 'button "Lie"')})
        listing = text(await client.call("browser_network_requests", {}))
        [socket] = [line for line in listing.splitlines() if "/ws" in line or "/lie" in line]
        number, rest = socket.split(". ", 1)
        host = fox.site.removeprefix("http://")
        assert rest == f"[GET] ws://{host}/ws => [101] WebSocket; its frames: not given by Firefox", listing

        frames = await client.call("browser_network_request", {"index": int(number)})
        assert frames.is_error and "not_supported" in text(frames) and "Firefox" in text(frames), text(frames)
        handshake = text(
            await client.call("browser_network_request", {"index": int(number), "part": "response-headers"})
        )
        assert handshake.startswith("### Response headers\n") and "websocket" in handshake.lower(), handshake


async def test_an_audit_in_firefox_finds_the_unlabeled_input_and_the_faint_text_despite_the_pages_own_axe(
    fox: Fox,
) -> None:
    async with client_of(fox, "auditor") as client:
        snapshot, page = await open_page(client, fox, "app_audit.html", "audit")
        await check_audit(client, snapshot, page)
