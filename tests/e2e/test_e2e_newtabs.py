"""End to end: tabs a client's page opens, downloads, and the tabs tools under Playwright MCP's names.

A real broker, the real extension in headless Chromium, and MCP clients (the SDK's). Pages from
``tests/pages/newtabs_*.html`` open tabs with ``window.open``, a ``target=_blank`` link and a form
with a target; a small route serves a file to download. What the person would see is read from
the browser's own tabs API: which tab is in front, which group a tab is in.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from ..harness.page_server import serve_test_pages
from ..harness.waiting import eventually
from ..support.extension_world import World, group_title, open_world
from ..support.mcp_clients import McpClient, text
from .test_e2e_browser_tools import ref_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

REPORT = b"name,count\napples,3\npears,5\n"
# How long an action gives a page it set off to arrive (extension/actions/load_wait.js).
PAGE_ARRIVAL_WAIT_S = 15


async def slow_report_download(request: web.Request) -> web.Response:
    """``/download/{name}``: the report as an attachment, only by its name, after half a second (a
    slow server: the click is handled well before the download begins, or fails)."""
    await asyncio.sleep(0.5)
    if request.match_info["name"] != "report.csv":
        raise web.HTTPNotFound()
    return web.Response(
        body=REPORT, content_type="text/csv", headers={"Content-Disposition": 'attachment; filename="report.csv"'}
    )


@contextlib.asynccontextmanager
async def serve_site() -> AsyncIterator[str]:
    """``tests/pages/`` under ``/pages/``, and a file to download under ``/download/``."""
    async with serve_test_pages(web.get("/download/{name}", slow_report_download)) as url:
        yield url


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    home = tmp_path_factory.mktemp("e2e-newtabs")
    async with serve_site() as site, open_world(home, site, World, no_viewport=True) as world:
        yield world


def page_url(world: World, page: str) -> str:
    return f"{world.site}/pages/{page}"


async def active_tab(world: World) -> int:
    found: int = await world.worker.evaluate(
        "chrome.tabs.query({active: true, lastFocusedWindow: true}).then(([tab]) => tab.id)"
    )
    return found


async def is_active(world: World, tab_id: int) -> bool:
    """Whether the tab is the one in front of its window."""
    return bool(await world.worker.evaluate("(id) => chrome.tabs.get(id).then((tab) => tab.active)", tab_id))


async def broker_tab(world: World, tab_id: int) -> dict[str, Any] | None:
    return next((t for t in await world.tabs() if t["id"] == tab_id), None)


async def open_opener(client: McpClient, world: World, tag: str) -> tuple[str, str]:
    """A tab of the client's at the opener page, behind the person's: its ref and its snapshot.

    Opened blank and then navigated, as browser_navigate answers once the page has loaded.
    """
    opened = await client.call_json("tabs", {"action": "open", "url": "about:blank", "focus": False})
    loaded = await client.call("browser_navigate", {"url": page_url(world, f"newtabs_opener.html?{tag}")})
    assert not loaded.is_error and 'heading "Opener"' in text(loaded), text(loaded)
    return str(opened["opened"]["ref"]), text(loaded)


def new_tab_of(result_text: str, page: str) -> int:
    """The tab a result's "New tabs" section names at ``page``."""
    found = re.search(
        rf"^- Tab b\d+:(\d+): \S*{re.escape(page)} \(yours; name it with tab: b\d+:\1\)$", result_text, re.M
    )
    assert found, f"no new tab at {page} named in:\n{result_text}"
    return int(found.group(1))


@pytest.mark.parametrize(
    ("control", "opened"),
    [
        (r'button "Open a popup"', "newtabs_child.html?popup"),
        (r'link "Open a link in a new tab"', "newtabs_child.html?link"),
        (r'button "Send the form to a new tab"', "newtabs_child.html?form=1"),
        (r'button "Open a popup window"', "newtabs_child.html?window"),
    ],
)
async def test_a_tab_a_clients_page_opens_is_the_clients_in_its_group_and_named_in_the_result(
    world: World, control: str, opened: str
) -> None:
    person, _ = await world.open_page("pages/newtabs_child.html", f"person-{len(control)}")
    await person.bring_to_front()
    person_tab = await active_tab(world)
    async with world.mcp("Popup Client") as client:
        _, snapshot = await open_opener(client, world, f"opener-{len(control)}")
        clicked = await client.call("browser_click", {"element": "opener", "target": ref_of(snapshot, control)})
        assert not clicked.is_error, text(clicked)
        new_tab = new_tab_of(text(clicked), opened)

        async def owned() -> bool:
            tab = await broker_tab(world, new_tab)
            return tab is not None and (tab["owner"] or {}).get("name") == "Popup Client"

        await eventually(owned, "the broker to give the new tab to the client")
        if "window" not in opened:  # a popup window's tab cannot be grouped
            await eventually(
                lambda: _equal(group_title(world, new_tab), "Popup Client"), "the new tab to join the client's group"
            )
        # Headless Chromium counts every window as focused and ignores focusing one, so a popup
        # window's giving focus back cannot be seen here; the person's tab in front of its own
        # window can.
        assert await is_active(world, person_tab), "the person's tab stays in front"
        # The client works in it, with no claim.
        await eventually(lambda: loaded(world, page_url(world, opened)), "the new tab's page to load")
        child = await client.call("browser_snapshot", {"tab": new_tab})
        assert not child.is_error and 'heading "Child"' in text(child), text(child)
        await client.call_json("tabs", {"action": "close", "tab": new_tab})
    await person.close()


async def _equal(value: Any, expected: Any) -> bool:
    return bool(await value == expected)


async def test_a_tab_the_persons_page_opens_stays_the_persons(world: World) -> None:
    page, _ = await world.open_page("pages/newtabs_opener.html", "person-opener")
    async with world.context.expect_page() as opening:
        await page.click("text=Open a popup")
    child = await opening.value
    await child.wait_for_load_state()
    listed = await world.tab_at(page_url(world, "newtabs_child.html?popup"))
    assert listed["owner"] is None
    assert await group_title(world, listed["id"]) is None
    await child.close()
    # Once a client claims that tab, what it opens is the client's.
    opener = await world.tab_at(page_url(world, "newtabs_opener.html?person-opener"))
    async with world.mcp("Claiming Client") as client:
        await client.call_json("tabs", {"action": "claim", "tab": opener["ref"]})
        snapshot = await client.call("browser_snapshot", {})
        clicked = await client.call(
            "browser_click", {"element": "popup", "target": ref_of(text(snapshot), r'button "Open a popup"')}
        )
        new_tab = new_tab_of(text(clicked), "newtabs_child.html?popup")
        await eventually(
            lambda: _equal(group_title(world, new_tab), "Claiming Client"), "the new tab to join the client's group"
        )
        assert ((await broker_tab(world, new_tab)) or {}).get("owner", {})["name"] == "Claiming Client"
    await page.close()


def listed_tabs(result_text: str) -> list[tuple[int, bool, str]]:
    """``browser_tabs``' lines as (index, current, url)."""
    return [
        (int(index), bool(current), url)
        for index, current, url in re.findall(r"^- (\d+): (\(current\) )?\[.*?\] \((\S*)\)", result_text, re.M)
    ]


async def loaded(world: World, url: str) -> bool:
    """Whether a tab shows ``url``, loaded (a snapshot of a page still loading may be refused)."""
    return bool(
        await world.worker.evaluate(
            "(url) => chrome.tabs.query({url}).then((tabs) => tabs.some((tab) => tab.status === 'complete'))", url
        )
    )


async def tabs_call(client: McpClient, **args: Any) -> str:
    result = await client.call("browser_tabs", args)
    assert not result.is_error, text(result)
    return text(result)


async def test_browser_tabs_lists_opens_selects_and_closes_only_the_clients_tabs(world: World) -> None:
    person, _ = await world.open_page("pages/newtabs_child.html", "tabs-person")
    await person.bring_to_front()
    person_tab = await active_tab(world)
    first, second = page_url(world, "newtabs_child.html?first"), page_url(world, "newtabs_child.html?second")
    async with world.mcp("Tabs Client") as client:
        assert "browser_tabs" in await client.tool_names()
        assert "- none" in await tabs_call(client, action="list")
        await tabs_call(client, action="new", url=first)
        assert listed_tabs(await tabs_call(client, action="new", url=second)) == [(0, False, first), (1, True, second)]
        assert listed_tabs(await tabs_call(client, action="select", index=0)) == [(0, True, first), (1, False, second)]
        assert await active_tab(world) == person_tab, "selecting leaves the person's tab in front"
        await eventually(lambda: loaded(world, first), "the first tab's page to load")
        snapshot = await client.call("browser_snapshot", {})
        assert "?first" in text(snapshot), text(snapshot)
        for bad in ({"action": "select", "index": 5}, {"action": "select"}, {"action": "shuffle"}):
            refused = await client.call("browser_tabs", bad)
            assert refused.is_error and text(refused).startswith("invalid_request:"), (bad, text(refused))
        assert listed_tabs(await tabs_call(client, action="close", index=1)) == [(0, True, first)]
        closed = await client.call("browser_close", {})
        assert not closed.is_error and "- none" in text(closed), text(closed)
        nothing = await client.call("browser_close", {})
        assert nothing.is_error, text(nothing)
    assert await active_tab(world) == person_tab
    await person.close()


async def window_size(world: World, window_id: int) -> tuple[int, int]:
    width, height = await world.worker.evaluate(
        "(id) => chrome.windows.get(id).then((w) => [w.width, w.height])", window_id
    )
    return int(width), int(height)


async def test_browser_resize_resizes_only_a_window_whose_every_tab_is_the_clients(world: World) -> None:
    person, _ = await world.open_page("pages/newtabs_child.html", "resize-person")
    async with world.mcp("Resizing Client") as client:
        await client.call_json("tabs", {"action": "open", "url": page_url(world, "newtabs_child.html?beside")})
        refused = await client.call("browser_resize", {"width": 800, "height": 600})
        assert refused.is_error and text(refused).startswith("window_not_owned:"), text(refused)
        assert "the person's tab" in text(refused)

        created = await client.call_json(
            "browser_windows", {"action": "create", "url": page_url(world, "newtabs_child.html?own")}
        )
        window_id = created["window"]["id"]
        for width, height in ((0, 600), (-5, 600), (800, 100_000), ("wide", 600), (True, 600)):
            bad = await client.call("browser_resize", {"width": width, "height": height})
            assert bad.is_error and text(bad).startswith("invalid_request:"), (width, text(bad))
        resized = await client.call_json("browser_resize", {"width": 900, "height": 700})
        assert resized["resized"]["id"] == window_id
        assert await window_size(world, window_id) == (900, 700)
    await person.close()


async def report_link_downloads(client: McpClient, snapshot: str) -> None:
    """A click on the page's "Download the report" link answers with the finished download: its
    name, size and place, and the file saved there holds what the site served. The answer comes
    as the download ends, not after the 15 s a page has to arrive: the load that became it is over."""
    started = time.monotonic()
    clicked = await client.call(
        "browser_click", {"element": "report", "target": ref_of(snapshot, r'link "Download the report"')}
    )
    assert not clicked.is_error, text(clicked)
    assert time.monotonic() - started < PAGE_ARRIVAL_WAIT_S, "the click waited for a page the download replaced"
    found = re.search(
        r"^### Downloads\n- report\.csv: finished, (\d+) bytes, saved to (.+) \(from (\S+)\)$", text(clicked), re.M
    )
    assert found, text(clicked)
    assert int(found.group(1)) == len(REPORT) and found.group(3).endswith("/download/report.csv")
    assert await asyncio.to_thread(Path(found.group(2)).read_bytes) == REPORT


async def test_a_download_a_clients_click_starts_is_reported_with_its_name_size_and_place(world: World) -> None:
    async with world.mcp("Downloading Client") as client:
        tab, snapshot = await open_opener(client, world, "download")
        await report_link_downloads(client, snapshot)
        failed = await client.call(
            "browser_click", {"element": "missing", "target": ref_of(snapshot, r'link "Download a missing file"')}
        )
        assert not failed.is_error and re.search(r"^- missing\.csv: failed \(\w+\)", text(failed), re.M), text(failed)
        listed = await client.call("browser_network_requests", {})
        downloads = text(listed).split("### Downloads\n", 1)[1].splitlines()
        assert [line.split(":", 1)[0] for line in downloads] == ["- report.csv", "- missing.csv"], text(listed)
        await client.call_json("tabs", {"action": "close", "tab": tab})


async def test_a_tab_the_person_opens_while_a_clients_tab_is_in_front_stays_the_persons(world: World) -> None:
    """Chromium names the tab in front as a new tab's opener (openerTabId) even when its page did
    not open it: that is no reason to give the tab to the client."""
    async with world.mcp("Front Client") as client:
        opened = await client.call_json(
            "tabs", {"action": "open", "url": page_url(world, "newtabs_child.html?front"), "focus": True}
        )
        await eventually(lambda: _equal(active_tab(world), opened["opened"]["id"]), "the client's tab in front")
        page, tab = await world.open_page("pages/newtabs_child.html", "person-new")
        assert tab["owner"] is None
        assert await group_title(world, tab["id"]) is None
        assert (await broker_tab(world, tab["id"]) or {}).get("owner") is None
    await page.close()
