"""End to end: frames in the snapshot and input into them, carried out by the real extension.

The browser, fake broker and page server are ``tests/test_e2e_actions.py``'s (its ``world``); a
second server on another port of 127.0.0.1 serves the same pages as another origin of the same
site, and ``localhost`` reaches the first server as another site (an out-of-process frame). The
pages are ``tests/pages/frames_*.html``: each frame's form posts what it got to the top page,
which keeps it in ``window.messages``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from playwright.async_api import Page

from . import test_e2e_actions
from .test_e2e_actions import PAGES, World
from .test_e2e_extension import eventually, serve_app

pytestmark = pytest.mark.asyncio(loop_scope="module")

# The browser of test_e2e_actions, one for this module.
world = test_e2e_actions.world


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def other_origin() -> AsyncIterator[str]:
    """``tests/pages/`` again, on another port: another origin of the same site."""
    app = web.Application()
    app.router.add_static("/pages/", PAGES)
    async with serve_app(app) as url:
        yield url


async def open_frames(world: World, other_origin: str) -> tuple[int, Page]:
    tab, page = await world.open(f"frames_page.html?other={other_origin}")

    async def loaded() -> bool:
        names = [await frame.evaluate("document.getElementById('where')?.textContent ?? ''") for frame in page.frames]
        return sorted(names) == ["", "port", "same", "same-nested", "site"]

    await eventually(loaded, "every frame to load")
    return tab, page


@pytest_asyncio.fixture(loop_scope="module")
async def frames(world: World, other_origin: str) -> AsyncIterator[tuple[int, Page]]:
    tab, page = await open_frames(world, other_origin)
    yield tab, page
    await page.close()


def frame_ref(snapshot: str, line: str) -> str:
    """The ref (of a frame's element: ``f2e3``) on the snapshot line that starts with ``line``."""
    found = re.search(rf"^\s*- {re.escape(line)}.*?\[ref=((?:f\d+)?e\d+)\]", snapshot, re.M)
    assert found, f"no line {line!r} with a ref in:\n{snapshot}"
    return found.group(1)


async def messages(page: Page) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = await page.evaluate("window.messages")
    return found


def under(snapshot: str, line: str) -> str:
    """The lines under the snapshot line that starts with ``line`` (after its indent and dash)."""
    found = re.search(rf"^( *)- {re.escape(line)}.*:\n((?:\1  .*\n)+)", snapshot, re.M)
    assert found, f"no line {line!r} with content under it in:\n{snapshot}"
    return found.group(2)


async def test_the_snapshot_shows_each_frames_content_under_its_line(world: World, frames: tuple[int, Page]) -> None:
    tab, _ = frames
    snapshot = await world.ok(tab, "snapshot")
    same = under(snapshot, 'iframe "Same origin"')
    assert re.search(r'^ {4}\s*- textbox "Name in same" \[ref=f\d+e\d+\]$', same, re.M), snapshot
    # The nested frame, inside the first one, one step deeper than its iframe line.
    nested = under(same, 'iframe "Nested"')
    assert re.search(r'^ {8}\s*- textbox "Name in same-nested" \[ref=f\d+e\d+\]$', nested, re.M), snapshot
    # A frame of another origin says which; the page's own do not.
    origin = r"\[origin=http://127\.0\.0\.1:\d+\]"
    assert re.search(rf'^  - iframe "Other origin" \[ref=e\d+\] {origin}:$', snapshot, re.M), snapshot
    assert not re.search(rf'"(Same origin|Nested)".*{origin}', snapshot), snapshot
    # The frame of another site, out of process, as well.
    site = re.escape(world.site.replace("127.0.0.1", "localhost"))
    assert re.search(rf'^  - iframe "Other site" \[ref=e\d+\] \[origin={site}\]:$', snapshot, re.M), snapshot
    for name in ("same", "same-nested", "port", "site"):
        frame_ref(snapshot, f'textbox "Name in {name}"')
    refs = re.findall(r"\[ref=([^\]]+)\]", snapshot)
    assert len(refs) == len(set(refs)), "every ref names one element of one frame"


@pytest.mark.parametrize("name", ["same", "port", "site", "same-nested"])
async def test_type_and_click_reach_a_frame_as_trusted_input(world: World, frames: tuple[int, Page], name: str) -> None:
    tab, page = frames
    snapshot = await world.ok(tab, "snapshot")
    field = frame_ref(snapshot, f'textbox "Name in {name}"')
    await world.ok(tab, "type", target=field, text=f"Ada in {name}")
    # The button under this frame's field: its frame's prefix.
    prefix = field.split("e")[0]
    send = re.search(rf'- button "Send" \[ref=({prefix}e\d+)\]', snapshot)
    assert send, snapshot
    await world.ok(tab, "click", target=send.group(1))

    async def sent() -> list[dict[str, Any]] | None:
        return [m for m in await messages(page) if m.get("frame") == name] or None

    assert await eventually(sent, f"the {name} frame's form to send") == [
        {"frame": name, "value": f"Ada in {name}", "isTrusted": True}
    ]
