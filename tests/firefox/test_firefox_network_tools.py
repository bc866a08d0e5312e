"""End to end in Firefox ESR: browser_network_request and the network group (browser_route,
browser_route_list, browser_unroute, browser_network_state_set) through a real broker, the add-on
and MCP clients asking for the group (``/mcp?caps=network``).

The app and its server are ``tests/e2e/test_e2e_network_tools.py``'s, and so are the attacks: a
route or the offline state a client set changes nothing for the person's own tab or another
client's tab on the same site, and is gone once the client's session ends and once its tab closes.
What Firefox does otherwise is asserted as such: a routed request still reaches the server, a route
given a status is not_supported, and offline leaves navigator.onLine true.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from mcp_types import CallToolResult

from ..e2e.test_e2e_network_tools import APP, MOCKED, PNG, REAL, Site, number_of
from ..harness.firefox import Context
from ..harness.page_server import serve_app
from ..harness.waiting import WAIT, eventually
from ..support.firefox_world import Fox, joined_firefox
from ..support.mcp_clients import McpClient, text
from .test_firefox_pages import approval_window

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def app() -> AsyncIterator[Site]:
    """The app's server, counting what reaches it."""
    site = Site()

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=APP, content_type="text/html")

    async def data(request: web.Request) -> web.Response:
        site.hits.append(request.path_qs)
        return web.Response(text=REAL, content_type="application/json", headers={"X-Server": "real"})

    async def search(request: web.Request) -> web.Response:
        site.search_headers.append({name.lower(): value for name, value in request.headers.items()})
        return web.Response(text=f"searched {await request.text()}", content_type="text/plain")

    async def logo(request: web.Request) -> web.Response:
        return web.Response(body=PNG, content_type="image/png")

    served = web.Application()
    served.router.add_get("/app.html", page)
    served.router.add_get("/api/data.json", data)
    served.router.add_post("/api/search", search)
    served.router.add_get("/logo.png", logo)
    async with serve_app(served) as url:
        site.url = url
        yield site


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory, app: Site) -> AsyncIterator[Fox]:
    home: Path = tmp_path_factory.mktemp("firefox-network")
    async with joined_firefox(home, app.url) as world:
        yield world


async def ok(client: McpClient, tool: str, args: dict[str, Any]) -> str:
    result = await client.call(tool, args)
    assert not result.is_error, text(result)
    return text(result)


async def tab_context(fox: Fox, url: str) -> Context | None:
    for found in await fox.firefox.contexts():
        if found["url"] == url:
            return Context(fox.firefox.bidi, found["context"])
    return None


async def open_app(fox: Fox, client: McpClient, tag: str) -> tuple[str, Context]:
    """The app opened by ``client`` in a tab of its own, the tools acting in it; its ref and context."""
    url = f"{fox.site}/app.html?{tag}"
    opened = await client.call_json("tabs", {"action": "open", "url": url, "focus": False})
    ref = str(opened["opened"]["ref"])
    page: Context = await eventually(lambda: tab_context(fox, url), f"the tab at {url}")

    async def first_fetch_shown() -> bool:
        return bool(await page.evaluate("document.getElementById('out')?.textContent.startsWith('1: ') ?? false"))

    await eventually(first_fetch_shown, "the page's first fetch")
    await ok(client, "browser_snapshot", {"tab": ref})
    return ref, page


async def load(page: Context) -> str:
    """The page's own fetch of its data, as its Load button makes it; what the page shows of it."""
    shown = await page.evaluate("load().then(() => document.getElementById('out').textContent)")
    return str(shown).split(": ", 1)[1]


async def allowed_route(fox: Fox, client: McpClient, args: dict[str, Any]) -> CallToolResult:
    """browser_route's result, once the person allowed it in its approval window."""
    call = asyncio.ensure_future(client.call("browser_route", args))
    window = await eventually(lambda: approval_window(fox), "the route's approval window")
    await window.click("#once")
    async with asyncio.timeout(WAIT):
        return await call


async def route(fox: Fox, client: McpClient, args: dict[str, Any]) -> str:
    result = await allowed_route(fox, client, args)
    assert not result.is_error, text(result)
    return text(result)


async def test_a_listed_request_is_shown_whole_by_its_number(fox: Fox) -> None:
    async with fox.mcp("Inspector") as client:
        tab, page = await open_app(fox, client, "details")
        assert await load(page) == f"200 {REAL}"
        found = await page.evaluate("search().then(() => document.getElementById('found').textContent)")
        assert found == 'searched {"q":"shoes"}'
        await page.evaluate(
            "new Promise((done) => { const img = document.querySelector('img[alt=found]');"
            " img.complete ? done(true) : img.addEventListener('load', () => done(true)); })"
        )
        listing = await ok(client, "browser_network_requests", {"tab": tab, "static": True})
        data = number_of(listing, r"\[GET\] .*/api/data\.json => \[200\]")
        posted = number_of(listing, r"\[POST\] .*/api/search => \[200\]")
        logo = number_of(listing, r"/logo\.png\?found => \[200\]")
        assert await load(page) == f"200 {REAL}"
        again = await ok(client, "browser_network_requests", {"tab": tab, "static": True})
        assert number_of(again, r"\[GET\] .*/api/data\.json") == data
        assert number_of(again, r"\[POST\] .*/api/search") == posted

        details = await ok(client, "browser_network_request", {"tab": tab, "index": data})
        assert f"#{data} [GET] {fox.site}/api/data.json => [200] OK" in details, details
        assert "x-server: real" in details.lower(), details
        assert '  {"real": true}' in details, details
        sent = await ok(client, "browser_network_request", {"tab": tab, "index": posted, "part": "request-body"})
        assert sent == '### Request body\n{"q":"shoes"}', sent
        headers = await ok(client, "browser_network_request", {"tab": tab, "index": posted, "part": "request-headers"})
        assert "X-Trace: t-1" in headers, headers
        answered = await ok(client, "browser_network_request", {"tab": tab, "index": posted, "part": "response-body"})
        assert answered == '### Response body\nsearched {"q":"shoes"}', answered
        image = await ok(client, "browser_network_request", {"tab": tab, "index": logo, "part": "response-body"})
        assert image == f"### Response body\n(binary, image/png, {len(PNG)} bytes: not shown)", image
        await client.call_json("tabs", {"action": "close", "tab": tab})


async def test_a_mocked_body_reaches_the_clients_page_alone_and_unroute_restores_it(fox: Fox) -> None:
    person = await fox.firefox.new_tab(f"{fox.site}/app.html?person-mock")
    async with fox.mcp("Mocker", caps="network") as mocker, fox.mcp("Neighbour", caps="network") as neighbour:
        tab, page = await open_app(fox, mocker, "mocked")
        other_tab, other = await open_app(fox, neighbour, "neighbour")
        said = await route(
            fox, mocker, {"tab": tab, "pattern": "**/api/*.json", "body": MOCKED, "contentType": "application/json"}
        )
        assert "Route added for **/api/*.json" in said and "still reaches the server" in said, said
        assert await load(page) == f"200 {MOCKED}"
        assert await load(person) == f"200 {REAL}"
        assert await load(other) == f"200 {REAL}"
        assert "No routes on this tab" in await ok(neighbour, "browser_route_list", {"tab": other_tab})
        listed = await ok(mocker, "browser_route_list", {"tab": tab})
        assert listed.startswith("### Result\n1. **/api/*.json (status=200"), listed
        listing = await ok(mocker, "browser_network_requests", {"tab": tab})
        mocked = number_of(listing, r"/api/data\.json => \[200\]", last=True)
        body = await ok(mocker, "browser_network_request", {"tab": tab, "index": mocked, "part": "response-body"})
        assert MOCKED in body, body
        # Firefox cannot set a response's status: refused, not pretended.
        status = await allowed_route(fox, mocker, {"tab": tab, "pattern": "**/x", "status": 503})
        assert status.is_error and "Firefox's extension cannot set a response's status" in text(status), text(status)
        assert "No routes" not in await ok(mocker, "browser_route_list", {"tab": tab})
        assert "Removed all 1 route(s)" in await ok(mocker, "browser_unroute", {"tab": tab})
        assert await load(page) == f"200 {REAL}"
    await person.close()


async def test_a_route_that_lets_requests_through_alters_their_headers(fox: Fox, app: Site) -> None:
    async with fox.mcp("Header changer", caps="network") as client:
        tab, page = await open_app(fox, client, "headers")
        await route(
            fox,
            client,
            {"tab": tab, "pattern": "**/api/search", "headers": ["X-Added: yes"], "removeHeaders": "X-Trace"},
        )
        await page.evaluate("search()")
        seen = app.search_headers[-1]
        assert seen.get("x-added") == "yes" and "x-trace" not in seen, seen
        await client.call_json("tabs", {"action": "close", "tab": tab})


async def test_offline_fails_the_clients_fetches_alone_and_online_restores_them(fox: Fox) -> None:
    person = await fox.firefox.new_tab(f"{fox.site}/app.html?person-offline")
    async with fox.mcp("Offline tester", caps="network") as client:
        tab, page = await open_app(fox, client, "offline")
        await ok(client, "browser_network_state_set", {"tab": tab, "state": "offline"})
        assert await load(page) == "failed TypeError"
        assert await load(person) == f"200 {REAL}"
        await ok(client, "browser_network_state_set", {"tab": tab, "state": "online"})
        assert await load(page) == f"200 {REAL}"
        await client.call_json("tabs", {"action": "close", "tab": tab})
    await person.close()


async def test_a_route_and_offline_left_behind_end_with_the_clients_session(fox: Fox) -> None:
    async with fox.mcp("Leaver", caps="network") as client:
        tab, page = await open_app(fox, client, "left-behind")
        await route(fox, client, {"tab": tab, "pattern": "**/api/*", "body": MOCKED})
        assert await load(page) == f"200 {MOCKED}"
    async with fox.mcp("Offline leaver", caps="network") as client:
        tab, offline = await open_app(fox, client, "offline-left-behind")
        await ok(client, "browser_network_state_set", {"tab": tab, "state": "offline"})
        assert await load(offline) == "failed TypeError"

    async def real_again() -> bool:
        return await load(page) == f"200 {REAL}" and await load(offline) == f"200 {REAL}"

    await eventually(real_again, "the ended sessions' route and offline state to go")
    await page.close()
    await offline.close()


async def test_a_route_ends_with_its_tab_and_goes_to_no_other(fox: Fox) -> None:
    async with fox.mcp("Closer", caps="network") as client:
        tab, page = await open_app(fox, client, "closing")
        await route(fox, client, {"tab": tab, "pattern": "**/api/*", "body": MOCKED})
        assert await load(page) == f"200 {MOCKED}"
        await client.call_json("tabs", {"action": "close", "tab": tab})
        again, reopened = await open_app(fox, client, "closing-again")
        assert "No routes on this tab" in await ok(client, "browser_route_list", {"tab": again})
        assert await load(reopened) == f"200 {REAL}"
        await client.call_json("tabs", {"action": "close", "tab": again})
