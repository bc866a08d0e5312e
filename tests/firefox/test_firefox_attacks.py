"""Attacks in Firefox ESR: a frame that navigates between finding an element and the input sent
to it, and a tab closed in the middle of an action.

A real broker, Firefox with the add-on and MCP clients, as ``test_firefox_pages.py`` has them. The
hostile pages come from a server of this module's own: a page on 127.0.0.1 holding a frame from
localhost (another site), and an address that never answers. Each attack must end in a clear
error (a code the client can act on, a message that says what happened), at once rather than at
a timeout, with the person's tab and the client's other tab untouched.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from ..e2e.test_e2e_browser_tools import ref_of
from ..harness.firefox import Context
from ..harness.page_server import serve_app
from ..harness.waiting import eventually
from ..support.firefox_world import Fox, joined_firefox
from ..support.mcp_clients import McpClient, text

pytestmark = pytest.mark.asyncio(loop_scope="module")

# An error must come this soon after the page did its worst: far below any of the driver's timeouts.
AT_ONCE = 10.0

COUNTER = """<!doctype html><title>Counter</title><button onclick="this.nextElementSibling.textContent =
  'Counted ' + (++this.dataset.n)" data-n="0">Count</button><p>Counted 0</p>"""
# The frame comes from another site: the same server, named localhost.
FRAMED = """<!doctype html><title>Framed</title><h1>Outer</h1><iframe id="inner"></iframe><script>
  document.getElementById("inner").src = location.origin.replace("127.0.0.1", "localhost") + "/inner.html";
</script>"""
INNER = """<!doctype html><title>Inner</title><button onclick="window.pressed = (window.pressed ?? 0) + 1;
  document.body.dataset.pressed = window.pressed">Inner button</button>"""
# Its button's click starts a navigation to an address that never answers: the click waits on it.
STALLING = """<!doctype html><title>Stalling</title>
<button onclick="location.href = '/never'">Go nowhere</button>"""
PAGES = {"counter.html": COUNTER, "framed.html": FRAMED, "inner.html": INNER, "stalling.html": STALLING}


class Attacked(Fox):
    """The module's Firefox, broker and site, and the sign that ``/never`` was asked for."""

    def __init__(self, fox: Fox, asked: asyncio.Event) -> None:
        super().__init__(fox.firefox, fox.control, fox.broker, fox.site)
        self.asked = asked


@contextlib.asynccontextmanager
async def serve_site(asked: asyncio.Event) -> AsyncIterator[str]:
    """The module's pages (half a second late when asked with ``late``: a slow server), and
    ``/never``, which holds every request until the server stops (setting ``asked``)."""
    stopping = asyncio.Event()

    async def page(request: web.Request) -> web.Response:
        body = PAGES.get(request.match_info["name"])
        if body is None:
            raise web.HTTPNotFound()
        if "late" in request.query:
            await asyncio.sleep(0.5)
        return web.Response(text=body, content_type="text/html")

    async def never(_: web.Request) -> web.Response:
        asked.set()
        await stopping.wait()
        raise web.HTTPServiceUnavailable()

    app = web.Application()
    app.router.add_get("/never", never)
    app.router.add_get("/{name}", page)
    async with serve_app(app) as url:
        try:
            yield url
        finally:
            stopping.set()  # before the server waits for its requests to end


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Attacked]:
    home: Path = tmp_path_factory.mktemp("firefox-attacks")
    asked = asyncio.Event()
    async with serve_site(asked) as site, joined_firefox(home, site) as world:
        yield Attacked(world, asked)


async def context_at(fox: Fox, url: str) -> Context:
    """The browsing context (tab) showing ``url``."""

    async def find() -> str | None:
        return next((c["context"] for c in await fox.firefox.contexts() if c["url"] == url), None)

    return Context(fox.firefox.bidi, await eventually(find, f"a tab at {url}"))


async def frame_of(tab: Context) -> Context:
    """The tab's one frame, once it has loaded its page."""

    async def find() -> str | None:
        tree = await tab.bidi.call("browsingContext.getTree", {"root": tab.id})
        children = tree["contexts"][0]["children"]
        loaded = [c["context"] for c in children if c["url"].endswith("/inner.html")]
        return loaded[0] if loaded else None

    return Context(tab.bidi, await eventually(find, "the frame's page"))


async def open_for(client: McpClient, fox: Fox, page: str, shows: str) -> tuple[dict[str, Any], str]:
    """A tab of the client's at ``page``, and its snapshot once it ``shows`` something (a frame's
    button included)."""
    opened = await client.call_json("tabs", {"action": "open", "url": f"{fox.site}/{page}", "focus": False})
    tab: dict[str, Any] = opened["opened"]

    async def loaded() -> str | None:
        snapshot = await client.call("browser_snapshot", {"tab": tab["ref"]})
        return None if snapshot.is_error or shows not in text(snapshot) else text(snapshot)

    return tab, await eventually(loaded, f"{page} to show {shows}")


async def bystanders(fox: Fox, client: McpClient, tag: str) -> tuple[Context, dict[str, Any]]:
    """The person's counter tab, and another tab of the client's, both to be left as they are."""
    persons = await fox.firefox.new_tab(f"{fox.site}/counter.html?person-{tag}")
    other, _ = await open_for(client, fox, f"counter.html?client-{tag}", 'button "Count"')
    return persons, other


async def untouched(fox: Fox, client: McpClient, persons: Context, other: dict[str, Any], tag: str) -> None:
    """The person's tab shows its page as it was, and the client's other tab still answers."""
    assert await persons.evaluate("[location.href, document.querySelector('p').textContent]") == [
        f"{fox.site}/counter.html?person-{tag}",
        "Counted 0",
    ]
    snapshot = await client.call("browser_snapshot", {"tab": other["ref"]})
    assert not snapshot.is_error and "Counted 0" in text(snapshot), text(snapshot)


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error, text(result)
    error: dict[str, Any] = result.structured_content["error"]
    return error


async def closing_ends_it_at_once(closing: Context, call: asyncio.Future[Any]) -> None:
    """Closing the tab ``closing`` ends the ``call`` running in it at once, as tab_not_found
    saying the tab was closed."""
    await closing.close()
    async with asyncio.timeout(AT_ONCE):
        result = await call
    error = error_of(result)
    assert error["code"] == "tab_not_found" and "was closed" in error["message"], error


async def test_a_frame_reloaded_between_the_snapshot_and_the_click_gets_a_stale_ref_not_a_click(fox: Fox) -> None:
    async with fox.mcp("Frame Clicker") as client:
        persons, other = await bystanders(fox, client, "reload")
        tab, snapshot = await open_for(client, fox, "framed.html?reload", 'button "Inner button"')
        frame = await frame_of(await context_at(fox, f"{fox.site}/framed.html?reload"))
        ref = ref_of(snapshot, r'button "Inner button"')
        assert ref.startswith("f"), snapshot
        # The same page again in the frame: an element of the same name, role and place, in a
        # document the ref was never given for.
        await frame.goto(f"{fox.site.replace('127.0.0.1', 'localhost')}/inner.html")
        clicked = await client.call("browser_click", {"element": "Inner button", "target": ref, "tab": tab["ref"]})
        error = error_of(clicked)
        assert error["pageCode"] == "stale_ref", clicked.structured_content
        assert "from an earlier page of this tab" in error["message"], error
        assert await frame.evaluate("window.pressed ?? 0") == 0
        await untouched(fox, client, persons, other, "reload")
        # A fresh snapshot gives the new document's refs, which work.
        fresh = text(await client.call("browser_snapshot", {"tab": tab["ref"]}))
        again = await client.call(
            "browser_click", {"element": "Inner button", "target": ref_of(fresh, r'button "Inner button"')}
        )
        assert not again.is_error, text(again)
        assert await frame.evaluate("window.pressed ?? 0") == 1
        await persons.close()


async def test_a_frame_that_navigates_away_as_it_is_pressed_ends_the_click_with_a_clear_answer(fox: Fox) -> None:
    async with fox.mcp("Frame Typist") as client:
        persons, other = await bystanders(fox, client, "away")
        tab, snapshot = await open_for(client, fox, "framed.html?away", 'button "Inner button"')
        frame = await frame_of(await context_at(fox, f"{fox.site}/framed.html?away"))
        # The frame leaves for another page the moment it is pressed, between the press and the
        # click that would follow; a page its server is slow to send, which the answer waits for.
        await frame.evaluate(
            """(to) => document.querySelector("button").addEventListener("pointerdown", () => {
                location.href = to;
            })""",
            f"{fox.site.replace('127.0.0.1', 'localhost')}/counter.html?frame-left&late",
        )
        ref = ref_of(snapshot, r'button "Inner button"')
        async with asyncio.timeout(AT_ONCE):
            clicked = await client.call("browser_click", {"element": "Inner button", "target": ref, "tab": tab["ref"]})
        # Either the sequence ran whole in the page being left, and the answer shows the frame's
        # new page, or it was cut off, and the error says so.
        if clicked.is_error:
            assert error_of(clicked)["pageCode"] in {"navigated", "stale_ref"}, clicked.structured_content
        else:
            shown = text(clicked)
            assert re.search(r'^-\s+- button "Inner button"', shown, re.M), shown
            assert re.search(r'^\+\s+- button "Count"', shown, re.M), shown
        later = await client.call("browser_click", {"element": "Inner button", "target": ref, "tab": tab["ref"]})
        assert error_of(later)["pageCode"] == "stale_ref", later.structured_content
        await untouched(fox, client, persons, other, "away")
        await persons.close()


async def test_a_tab_closed_while_a_wait_runs_in_it_ends_the_wait_at_once(fox: Fox) -> None:
    async with fox.mcp("Patient Client") as client:
        persons, other = await bystanders(fox, client, "wait")
        tab, _ = await open_for(client, fox, "counter.html?closing-wait", 'button "Count"')
        waiting = asyncio.ensure_future(
            client.call("browser_wait_for", {"text": "never shows", "time": 60, "tab": tab["ref"]})
        )
        closing = await context_at(fox, f"{fox.site}/counter.html?closing-wait")
        await asyncio.sleep(0.5)  # the wait polls the page meanwhile; nothing there signals it
        assert not waiting.done()
        await closing_ends_it_at_once(closing, waiting)
        await untouched(fox, client, persons, other, "wait")
        await persons.close()


async def test_a_tab_closed_while_a_click_waits_on_the_navigation_it_started_ends_the_click_at_once(
    fox: Attacked,
) -> None:
    async with fox.mcp("Stalled Clicker") as client:
        persons, other = await bystanders(fox, client, "click")
        tab, snapshot = await open_for(client, fox, "stalling.html?closing-click", 'button "Go nowhere"')
        closing = await context_at(fox, f"{fox.site}/stalling.html?closing-click")
        ref = ref_of(snapshot, r'button "Go nowhere"')
        clicking = asyncio.ensure_future(
            client.call("browser_click", {"element": "Go nowhere", "target": ref, "tab": tab["ref"]})
        )
        async with asyncio.timeout(AT_ONCE):
            await fox.asked.wait()  # the click's navigation waits on the server
        assert not clicking.done()
        await closing_ends_it_at_once(closing, clicking)
        await untouched(fox, client, persons, other, "click")
        await persons.close()
