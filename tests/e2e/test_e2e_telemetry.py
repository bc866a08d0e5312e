"""End to end in Chromium: what ``browser_console_messages`` tells a client, as attacks on what it reads.

The browser, fake broker and page server are ``tests/support/actions_world.py``'s (its ``world``).
``tests/pages/console_forging.html`` dispatches an ``ErrorEvent`` of its own making that names a
bank's script, throws an error for real, and holds a frame of another site
(``console_inner.html``, reached as localhost: an out-of-process frame) that logs an error. The
client must be able to tell the page's own report from an error the browser raised, and a frame's
line from the top page's. The Firefox counterpart is ``tests/firefox/test_firefox_telemetry.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Frame, Page

from ..harness.page_server import serve_test_pages
from ..harness.waiting import eventually
from ..support import actions_world
from ..support.actions_world import World

pytestmark = pytest.mark.asyncio(loop_scope="module")

# The browser of actions_world, one for this module.
world = actions_world.world


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def other_origin() -> AsyncIterator[str]:
    """``tests/pages/`` again, on another port: another origin of the same site."""
    async with serve_test_pages() as url:
        yield url


async def logged_frame(page: Page, url: str) -> Frame:
    """The page's frame at ``url``, once its script has logged."""

    async def found() -> Frame | None:
        return next((frame for frame in page.frames if frame.url == url), None)

    frame: Frame = await eventually(found, f"the frame at {url}")
    await frame.wait_for_function("window.logged")
    return frame


async def test_a_cross_site_frames_console_line_names_the_frame_and_a_pages_own_error_event_passes_for_no_error(
    world: World,
) -> None:
    tab, page = await world.open("console_forging.html")
    inner = world.site.replace("127.0.0.1", "localhost")
    await logged_frame(page, f"{inner}/pages/console_inner.html")
    await world.ok(tab, "snapshot")  # the frame's own target is attached by now
    text = await world.ok(tab, "console_messages")
    lines = text.split("\n\n", 1)[1].splitlines()
    framed = [line for line in lines if "inner broke" in line]
    assert framed == [f"[frame {inner}] [ERROR] inner broke @ {inner}/pages/console_inner.html:7"], lines
    top = [line for line in lines if "top broke" in line]
    assert len(top) == 1 and top[0].startswith("[ERROR] top broke @ "), lines
    assert any(line.startswith("TypeError: raised for real") for line in lines), lines
    # Chromium reports only the errors it raised: the page's own ErrorEvent is not one of them.
    assert not any("bank.example" in line or "forged" in line for line in lines), lines
    await page.close()


async def test_a_frame_of_another_origin_in_the_pages_own_process_names_its_origin_too(
    world: World, other_origin: str
) -> None:
    inner = f"{other_origin}/pages/console_inner.html"
    tab, page = await world.open(f"console_framed.html?frame={inner}")
    await logged_frame(page, inner)
    text = await world.ok(tab, "console_messages")
    lines = text.split("\n\n", 1)[1].splitlines()
    assert [line.split(" @ ")[0] for line in lines] == [
        "[LOG] top says hello",
        f"[frame {other_origin}] [ERROR] inner broke",
    ], lines
    await page.close()
