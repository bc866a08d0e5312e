"""End to end in headless Firefox ESR: a tab's video on the WebExtension driver (tabs.captureTab's
frames drawn on a canvas of the event page, recorded by its MediaRecorder), through a real broker
and the MCP SDK's client; the page moves a box and counts (tests/pages/video_motion.html), as in
tests/e2e/test_e2e_video_tools.py, and is opened behind the person's tab."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from ..harness.page_server import serve_pages
from ..harness.waiting import eventually
from ..support.firefox_world import Fox, joined_firefox
from ..support.mcp_clients import McpClient, refused, text
from ..support.webm import all_text, decoded_pixels, mean_colour, saved_video, webm_facts

pytestmark = pytest.mark.asyncio(loop_scope="module")

PAGE = (Path(__file__).resolve().parents[1] / "pages" / "video_motion.html").read_text()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fox]:
    home: Path = tmp_path_factory.mktemp("firefox-video")
    async with serve_pages({"motion.html": PAGE}) as site, joined_firefox(home, site) as world:
        yield world


async def open_motion(client: McpClient, fox: Fox, tag: str) -> int:
    opened = await client.call_json("tabs", {"action": "open", "url": f"{fox.site}/motion.html?{tag}", "focus": False})
    tab: int = opened["opened"]["id"]
    return tab


async def stopped_video(client: McpClient) -> tuple[bytes, dict[str, float]]:
    """The tab's video stopped: its bytes (its file then removed) and what the answer says of it."""
    stopped = await client.call("browser_stop_video", {})
    assert not stopped.is_error, all_text(stopped)
    path, said = saved_video(all_text(stopped))
    data = path.read_bytes()
    path.unlink()  # the broker's own output folder, outside the test's
    return data, said


async def test_a_video_of_a_tab_behind_the_persons_is_a_webm_of_frames_that_differ(fox: Fox) -> None:
    async with fox.mcp("video-client", caps="devtools") as client:
        await open_motion(client, fox, "moving")
        started = await client.call("browser_start_video", {"size": {"width": 480, "height": 320}, "fps": 10})
        assert not started.is_error, text(started)
        await asyncio.sleep(2.5)
        chapter = await client.call("browser_video_chapter", {"title": "Done", "duration": 600})
        assert not chapter.is_error, text(chapter)
        await asyncio.sleep(1)
        data, said = await stopped_video(client)
    facts = webm_facts(data)
    assert (said["width"], said["height"]) == (480, 320) == (facts.width, facts.height)
    assert said["bytes"] == len(data) and said["frames"] == len(facts.frames)
    assert 5 <= len(facts.frames) <= 60, len(facts.frames)
    assert len(set(facts.frames)) > 3
    assert 3.0 <= said["seconds"] <= 10.0, said


async def test_a_chapter_card_shows_on_the_videos_frames(fox: Fox) -> None:
    async with fox.mcp("chapter-client", caps="devtools") as client:
        await open_motion(client, fox, "chapter")
        assert not (await client.call("browser_start_video", {"size": {"width": 480, "height": 320}})).is_error
        await asyncio.sleep(0.5)
        assert not (await client.call("browser_video_chapter", {"title": "Checkout", "duration": 800})).is_error
        await asyncio.sleep(1.5)
        stopped = await client.call("browser_stop_video", {})
    path, _ = saved_video(all_text(stopped))
    pixels = decoded_pixels(path, 480, 320)
    assert pixels
    centre = [mean_colour(frame, 480, (160, 120, 320, 200)) for frame in pixels]
    carded = [i for i, (r, g, b) in enumerate(centre) if b > r + 10 and r < 120]
    path.unlink()
    assert carded and carded[0] > 0 and carded[-1] < len(pixels) - 1, centre


async def test_refusals_and_a_video_left_running_ends_with_its_clients_session(fox: Fox) -> None:
    async with fox.mcp("next-client", caps="devtools") as second:
        async with fox.mcp("leaving-client", caps="devtools") as first:
            tab = await open_motion(first, fox, "left")
            assert "no video" in await refused(first, "browser_stop_video", {}, "tool_failed")
            assert "no video" in await refused(first, "browser_video_chapter", {"title": "A"}, "tool_failed")
            assert not (await first.call("browser_start_video", {"fps": 5})).is_error
            assert "already recording" in await refused(first, "browser_start_video", {}, "tool_failed")

        async def released() -> bool:
            tabs = (await second.call_json("tabs", {"action": "list"}))["tabs"]
            return any(found["id"] == tab and not found.get("owner") for found in tabs)

        await eventually(released, "the leaving client's tab to be let go")
        await second.call_json("tabs", {"action": "claim", "tab": tab})
        assert "no video" in await refused(second, "browser_stop_video", {}, "tool_failed")
        assert not (await second.call("browser_start_video", {"fps": 5})).is_error
        await asyncio.sleep(1)
        _, said = await stopped_video(second)
        assert said["seconds"] < 5, said
