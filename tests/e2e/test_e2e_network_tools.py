"""End to end in Chromium: one request's details (browser_network_request) and the network group
(browser_route, browser_route_list, browser_unroute, browser_network_state_set), through a real
broker, the real extension and MCP clients asking for the group (``/mcp?caps=network``).

The site is a small app of the test's own: a page that fetches JSON as it loads and on its Load
button, posts a search, and shows an image; the server counts what reaches it and remembers the
headers it got. What is attacked: a route or the offline state a client set must change nothing
for the person's own tab or another client's tab on the same site, and must be gone once the
client's session ends and once its tab closes. The Firefox counterpart is
``tests/firefox/test_firefox_network_tools.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from playwright.async_api import Page

from ..harness.page_server import serve_app
from ..harness.waiting import eventually
from ..support.extension_world import World, open_world
from ..support.mcp_clients import McpClient, text
from ..support.person_world import open_popup

pytestmark = pytest.mark.asyncio(loop_scope="module")

APP = """<!doctype html><title>Shop app</title><h1>Shop app</h1>
<button id="load" onclick="load()">Load</button> <button id="search" onclick="search()">Search</button>
<p id="out">nothing yet</p><p id="found">no search</p><img src="logo.png" alt="logo">
<script>
let loads = 0;
async function load() {
  const n = ++loads;
  try {
    const answer = await fetch("api/data.json", {cache: "no-store"});
    document.getElementById("out").textContent = `${n}: ${answer.status} ${await answer.text()}`;
  } catch (error) {
    document.getElementById("out").textContent = `${n}: failed ${error.name}`;
  }
}
async function search() {
  const answer = await fetch("api/search", {method: "POST", body: JSON.stringify({q: "shoes"}),
    headers: {"Content-Type": "application/json", "X-Trace": "t-1"}});
  document.getElementById("found").textContent = await answer.text();
  document.body.append(Object.assign(new Image(), {src: "logo.png?found", alt: "found"}));
}
load();
</script>"""
REAL = '{"real": true}'
MOCKED = '{"mocked": "yes"}'
# The smallest PNG: one transparent pixel.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


class Site:
    """The app's server: its address, and what reached it."""

    def __init__(self) -> None:
        self.url = ""
        self.hits: list[str] = []
        self.search_headers: list[dict[str, str]] = []


class NetworkWorld(World):
    app: Site


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[NetworkWorld]:
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

    app = web.Application()
    app.router.add_get("/app.html", page)
    app.router.add_get("/api/data.json", data)
    app.router.add_post("/api/search", search)
    app.router.add_get("/logo.png", logo)
    async with serve_app(app) as url:
        site.url = url
        async with open_world(tmp_path_factory.mktemp("e2e-network"), url, NetworkWorld, probed=False) as opened:
            opened.app = site
            yield opened


async def open_app(world: NetworkWorld, client: McpClient, tag: str) -> tuple[str, Page]:
    """The app opened by ``client`` in a tab of its own, once its first fetch showed; its ref and page."""
    url = f"{world.site}/app.html?{tag}"
    opened = await client.call_json("tabs", {"action": "open", "url": url, "focus": False})

    async def loaded() -> Page | None:
        return next((page for page in world.context.pages if page.url == url), None)

    page: Page = await eventually(loaded, f"the tab at {url}")
    await page.wait_for_function("document.getElementById('out').textContent.startsWith('1: ')")
    ref = str(opened["opened"]["ref"])
    # The tools attach to the tab: its requests from now on are heard whole.
    await ok(client, "browser_snapshot", {"tab": ref})
    return ref, page


async def person_app(world: NetworkWorld, tag: str) -> Page:
    """The app in a tab the person opened, which no client claimed."""
    page = await world.context.new_page()
    await page.goto(f"{world.site}/app.html?{tag}")
    await page.wait_for_function("document.getElementById('out').textContent.startsWith('1: ')")
    return page


async def load(page: Page) -> str:
    """Press the page's Load button, as the person would; what the page shows of that fetch."""
    before = int((await page.text_content("#out") or "0:").split(":")[0])
    await page.click("#load")
    await page.wait_for_function(f"document.getElementById('out').textContent.startsWith('{before + 1}: ')")
    shown = await page.text_content("#out") or ""
    return shown.split(": ", 1)[1]


async def ok(client: McpClient, tool: str, args: dict[str, Any]) -> str:
    result = await client.call(tool, args)
    assert not result.is_error, text(result)
    return text(result)


async def allowed(world: World, call: Awaitable[Any]) -> Any:
    """``call``, once the person allowed it in the approval window it opened."""
    asked = asyncio.ensure_future(call)
    window = await world.context.wait_for_event("page", lambda opened: "/person/approval.html" in opened.url)
    await window.wait_for_selector("#agent:not(:empty)")
    with contextlib.suppress(Exception):  # the window closes itself as it answers
        await window.get_by_role("button", name="Allow once").click()
    return await asked


async def route(world: World, client: McpClient, args: dict[str, Any]) -> str:
    result = await allowed(world, client.call("browser_route", args))
    assert not result.is_error, text(result)
    return text(result)


def number_of(listing: str, pattern: str, last: bool = False) -> int:
    """The number browser_network_requests lists the (first, or ``last``) request matching ``pattern`` by."""
    numbers = [
        int(found.group(1))
        for found in (re.match(r"(\d+)\. (.*)", line) for line in listing.splitlines())
        if found and re.search(pattern, found.group(2))
    ]
    assert numbers, f"no request matching {pattern!r} in:\n{listing}"
    return numbers[-1 if last else 0]


async def test_a_listed_request_is_shown_whole_by_its_number(world: NetworkWorld) -> None:
    async with world.mcp("Inspector") as client:
        tab, page = await open_app(world, client, "details")
        assert (await load(page)) == f"200 {REAL}"
        await page.click("#search")
        await page.wait_for_function("document.getElementById('found').textContent.startsWith('searched')")
        listing = await ok(client, "browser_network_requests", {"tab": tab, "static": True})
        data = number_of(listing, r"\[GET\] .*/api/data\.json => \[200\]")
        posted = number_of(listing, r"\[POST\] .*/api/search => \[200\]")
        logo = number_of(listing, r"/logo\.png\?found => \[200\]")
        # The numbers stay as the page makes more requests.
        assert (await load(page)) == f"200 {REAL}"
        again = await ok(client, "browser_network_requests", {"tab": tab, "static": True})
        assert number_of(again, r"\[GET\] .*/api/data\.json") == data
        assert number_of(again, r"\[POST\] .*/api/search") == posted

        details = await ok(client, "browser_network_request", {"tab": tab, "index": data})
        assert re.search(rf"#{data} \[GET\] .*/api/data\.json => \[200\] OK", details), details
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

        missing = await client.call("browser_network_request", {"tab": tab, "index": 999})
        assert missing.is_error and "#999 is not one of this page's" in text(missing), text(missing)
        await page.close()


async def test_a_mocked_body_reaches_the_clients_page_alone_and_unroute_restores_it(world: NetworkWorld) -> None:
    person = await person_app(world, "person-mock")
    async with world.mcp("Mocker", caps="network") as mocker, world.mcp("Neighbour", caps="network") as neighbour:
        assert {"browser_route", "browser_route_list", "browser_unroute"} <= set(await mocker.tool_names())
        tab, page = await open_app(world, mocker, "mocked")
        _, other = await open_app(world, neighbour, "neighbour")
        said = await route(
            world,
            mocker,
            {
                "tab": tab,
                "pattern": "**/api/*.json",
                "body": MOCKED,
                "contentType": "application/json",
                "headers": ["X-Mocked: 1"],
            },
        )
        assert "Route added for **/api/*.json" in said, said
        hits = len(world.app.hits)
        assert (await load(page)) == f"200 {MOCKED}"
        assert len(world.app.hits) == hits, "a fulfilled request never reaches the server"
        # The person's tab and the other client's, on the same site, get the real answer.
        assert (await load(person)) == f"200 {REAL}"
        assert (await load(other)) == f"200 {REAL}"
        listed = await ok(mocker, "browser_route_list", {"tab": tab})
        assert listed.startswith('### Result\n1. **/api/*.json (status=200, body="{\\"mocked\\": \\"yes\\"}"'), listed
        assert "No routes on this tab" in await ok(neighbour, "browser_route_list", {})
        # What the page got is what browser_network_request shows.
        listing = await ok(mocker, "browser_network_requests", {"tab": tab})
        mocked = number_of(listing, r"/api/data\.json => \[200\]", last=True)
        body = await ok(mocker, "browser_network_request", {"tab": tab, "index": mocked, "part": "response-body"})
        assert MOCKED in body, body

        status = await route(world, mocker, {"tab": tab, "pattern": "**/data.json", "status": 503, "body": "down"})
        assert "status 503" in status, status
        assert (await load(page)) == "503 down", "the route added last wins"
        removed = await ok(mocker, "browser_unroute", {"tab": tab, "pattern": "**/data.json"})
        assert "Removed 1 route(s) for **/data.json" in removed, removed
        assert (await load(page)) == f"200 {MOCKED}"
        assert "Removed all 1 route(s)" in await ok(mocker, "browser_unroute", {"tab": tab})
        assert (await load(page)) == f"200 {REAL}"
    await person.close()


async def test_a_route_that_lets_requests_through_alters_their_headers(world: NetworkWorld) -> None:
    async with world.mcp("Header changer", caps="network") as client:
        tab, page = await open_app(world, client, "headers")
        await route(
            world,
            client,
            {"tab": tab, "pattern": "**/api/search", "headers": ["X-Added: yes"], "removeHeaders": "X-Trace"},
        )
        await page.click("#search")
        await page.wait_for_function("document.getElementById('found').textContent.startsWith('searched')")
        seen = world.app.search_headers[-1]
        assert seen.get("x-added") == "yes" and "x-trace" not in seen, seen
        await page.close()


async def test_offline_fails_the_clients_fetches_alone_and_online_restores_them(world: NetworkWorld) -> None:
    person = await person_app(world, "person-offline")
    async with world.mcp("Offline tester", caps="network") as client:
        tab, page = await open_app(world, client, "offline")
        said = await ok(client, "browser_network_state_set", {"tab": tab, "state": "offline"})
        assert "offline" in said, said
        assert (await load(page)) == "failed TypeError"
        assert await page.evaluate("navigator.onLine") is False
        assert (await load(person)) == f"200 {REAL}"
        assert await person.evaluate("navigator.onLine") is True
        await ok(client, "browser_network_state_set", {"tab": tab, "state": "online"})
        assert (await load(page)) == f"200 {REAL}"
        wrong = await client.call("browser_network_state_set", {"tab": tab, "state": "flaky"})
        assert wrong.is_error, text(wrong)
        await page.close()
    await person.close()


async def test_a_route_and_offline_left_behind_end_with_the_clients_session(world: NetworkWorld) -> None:
    async with world.mcp("Leaver", caps="network") as client:
        tab, page = await open_app(world, client, "left-behind")
        await route(world, client, {"tab": tab, "pattern": "**/api/*", "body": MOCKED})
        assert (await load(page)) == f"200 {MOCKED}"
        await ok(client, "browser_network_state_set", {"tab": tab, "state": "offline"})
        assert await page.evaluate("navigator.onLine") is False
    # The session is over: its tab stays open, the person's now, with the real answers.

    async def real_again() -> bool:
        return (await load(page)) == f"200 {REAL}"

    await eventually(real_again, "the ended session's route and offline state to go")
    assert await page.evaluate("navigator.onLine") is True
    await page.close()


@pytest.mark.parametrize("button", ["End session", "Release"])
async def test_a_route_and_offline_end_when_the_person_ends_the_session_or_takes_the_tab_back(
    world: NetworkWorld, button: str
) -> None:
    async with world.mcp(f"Stopped by the person {button}", caps="network") as client:
        tab, page = await open_app(world, client, f"person-{len(button)}")
        await route(world, client, {"tab": tab, "pattern": "**/api/*", "body": MOCKED})
        await ok(client, "browser_network_state_set", {"tab": tab, "state": "offline"})
        assert await page.evaluate("navigator.onLine") is False
        popup = await open_popup(world)
        rows = "#sessions li" if button == "End session" else "#tabs li"
        row = popup.locator(rows, has_text=f"Stopped by the person {button}")
        await row.get_by_role("button", name=button).click()

        async def real_again() -> bool:
            return (await load(page)) == f"200 {REAL}"

        await eventually(real_again, f"the route to go once the person pressed {button}")
        assert await page.evaluate("navigator.onLine") is True
        await popup.close()
    await page.close()


async def test_a_route_ends_with_its_tab_and_goes_to_no_other(world: NetworkWorld) -> None:
    async with world.mcp("Closer", caps="network") as client:
        tab, page = await open_app(world, client, "closing")
        await route(world, client, {"tab": tab, "pattern": "**/api/*", "body": MOCKED})
        assert (await load(page)) == f"200 {MOCKED}"
        closed = await client.call_json("tabs", {"action": "close", "tab": tab})
        assert closed, closed
        again, reopened = await open_app(world, client, "closing-again")
        assert "No routes on this tab" in await ok(client, "browser_route_list", {"tab": again})
        assert (await load(reopened)) == f"200 {REAL}"
        await reopened.close()
