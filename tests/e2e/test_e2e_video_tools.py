"""End to end: a tab's video (browser_start_video, browser_stop_video, browser_video_chapter,
browser_video_show_actions, browser_video_hide_actions) through a real broker and the real
extension in headless Chromium, over MCP.

The tab is opened behind the person's (``focus: false``): headless Chromium still paints it, and
its screencast gives frames. ``tests/pages/video_motion.html`` moves a box and counts, so every
frame differs from the one before. The broker (``serve --output-dir``) writes the WebM 0600 into
the client's folder; these tests read it as a player would (tests/support/webm.py), and
decode its frames with Debian's ffmpeg to find the chapter card and the action's caption.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from ..harness.chromium import extension_chromium, probe_only, trust_broker
from ..harness.page_server import serve_test_pages
from ..harness.waiting import WAIT, eventually
from ..support.cli_helpers import Brokers
from ..support.extension_world import World
from ..support.mcp_clients import LEGACY, McpClient, mcp_client, refused, text
from ..support.webm import all_text, decoded_pixels, frame_png, mean_colour, saved_video, webm_facts

pytestmark = pytest.mark.asyncio(loop_scope="module")

MOTION = "pages/video_motion.html"


class VideoWorld(World):
    output: Path

    def client(self, name: str) -> contextlib.AbstractAsyncContextManager[McpClient]:
        return mcp_client(f"http://127.0.0.1:{self.broker.port}/mcp?caps=devtools", self.token, name, LEGACY)

    async def open_tab(self, client: McpClient, tag: str) -> int:
        opened = await client.call_json("tabs", {"action": "open", "url": self.url(MOTION, tag), "focus": False})
        tab: int = opened["opened"]["id"]
        return tab


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[VideoWorld]:
    home = tmp_path_factory.mktemp("e2e-video")
    async with serve_test_pages() as site, Brokers(home / "discovery") as brokers:
        broker = await brokers.start("--output-dir", str(home / "output"))
        async with extension_chromium(home, wait=WAIT, no_viewport=True) as (context, worker):
            await trust_broker(worker, broker.token)
            await probe_only(worker, broker.port)
            world = VideoWorld(context, worker, broker, broker.token, site, "polyfill")
            world.output = home / "output"
            try:
                await world.joined()
                yield world
            finally:
                await world.http.close()


async def test_a_video_of_a_tab_behind_the_persons_is_a_webm_of_frames_that_differ(world: VideoWorld) -> None:
    async with world.client("video-client") as client:
        await world.open_tab(client, "moving")
        started = await client.call(
            "browser_start_video", {"filename": "demo.webm", "size": {"width": 640, "height": 400}, "fps": 10}
        )
        assert not started.is_error, text(started)
        assert "5 minutes" in text(started), text(started)
        # The page moves all the while: the video is of time passing, so time passes.
        await asyncio.sleep(2.5)
        stopped = await client.call("browser_stop_video", {})
        assert not stopped.is_error, all_text(stopped)
    path, said = saved_video(all_text(stopped), world.output)
    assert path.name.startswith("demo"), path
    data = path.read_bytes()
    facts = webm_facts(data)
    assert (said["width"], said["height"]) == (640, 400) == (facts.width, facts.height)
    assert said["bytes"] == len(data) and said["frames"] == len(facts.frames)
    # 10 frames a second for 2.5 s, give or take the start; the box moved between them.
    assert 10 <= len(facts.frames) <= 40, len(facts.frames)
    assert len(set(facts.frames)) > len(facts.frames) // 2
    assert 2.0 <= said["seconds"] <= 8.0, said
    pixels = decoded_pixels(path, 640, 400)
    assert len(pixels) == len(facts.frames)
    assert len(set(pixels)) > len(pixels) // 2


async def test_a_second_start_a_stop_without_start_and_a_chapter_without_video_are_refused(
    world: VideoWorld,
) -> None:
    async with world.client("careless-client") as client:
        await world.open_tab(client, "errors")
        assert "no video is recording in the tab" in await refused(client, "browser_stop_video", {}, "tool_failed")
        assert "browser_start_video starts one" in await refused(
            client, "browser_video_chapter", {"title": "Intro"}, "tool_failed"
        )
        assert "no video" in await refused(client, "browser_video_show_actions", {}, "tool_failed")
        assert "no video" in await refused(client, "browser_video_hide_actions", {}, "tool_failed")
        bad = await client.call("browser_start_video", {"fps": 500})
        assert bad.is_error and "fps" in text(bad), text(bad)
        assert not (await client.call("browser_start_video", {})).is_error
        again = await refused(client, "browser_start_video", {}, "tool_failed")
        assert "already recording in the tab" in again, again
        stopped = await client.call("browser_stop_video", {})
        assert not stopped.is_error, all_text(stopped)
        saved_video(all_text(stopped), world.output)
        assert "no video" in await refused(client, "browser_stop_video", {}, "tool_failed")


async def test_a_video_left_running_ends_with_its_clients_session(world: VideoWorld) -> None:
    async with world.client("next-client") as second:
        async with world.client("leaving-client") as first:
            tab = await world.open_tab(first, "left")
            assert not (await first.call("browser_start_video", {"fps": 5})).is_error
            # Not the other client's to stop, nor to see.
            taken = await second.call("browser_stop_video", {"tab": tab})
            assert taken.is_error and "no video" not in text(taken), text(taken)

        async def released() -> bool:
            return any(found["id"] == tab and found["owner"] is None for found in await world.tabs())

        await eventually(released, "the leaving client's tab to be let go")
        await second.call_json("tabs", {"action": "claim", "tab": tab})
        # Nothing of the first client's video is left: no video to stop, and a new one starts.
        assert "no video" in await refused(second, "browser_stop_video", {}, "tool_failed")
        assert not (await second.call("browser_start_video", {"fps": 5})).is_error
        await asyncio.sleep(1)
        stopped = await second.call("browser_stop_video", {})
        _, said = saved_video(all_text(stopped), world.output)
        assert said["seconds"] < 5, said


async def test_a_chapter_card_and_an_actions_caption_show_on_the_videos_frames(world: VideoWorld) -> None:
    async with world.client("chapter-client") as client:
        await world.open_tab(client, "chapter")
        assert not (await client.call("browser_start_video", {"size": {"width": 640, "height": 400}})).is_error
        await asyncio.sleep(0.5)
        chapter = await client.call(
            "browser_video_chapter", {"title": "Checkout", "description": "The second step", "duration": 1000}
        )
        assert not chapter.is_error, text(chapter)
        await asyncio.sleep(1.5)
        shown = await client.call("browser_video_show_actions", {"position": "bottom-left", "duration": 800})
        assert not shown.is_error, text(shown)
        page = text(await client.call("browser_snapshot", {}))
        next_step = re.search(r'button "Next step" \[ref=(e\d+)\]', page)
        assert next_step, page
        assert not (await client.call("browser_click", {"element": "Next step", "target": next_step.group(1)})).is_error
        await asyncio.sleep(1.5)
        assert not (await client.call("browser_video_hide_actions", {})).is_error
        stopped = await client.call("browser_stop_video", {})
    path, _ = saved_video(all_text(stopped), world.output)
    pixels = decoded_pixels(path, 640, 400)
    assert pixels
    # The page is light; the card darkens the whole frame blue, the caption its bottom-left corner.
    centre = [mean_colour(frame, 640, (220, 150, 420, 250)) for frame in pixels]
    carded = [i for i, (r, g, b) in enumerate(centre) if b > r + 10 and r < 120]
    assert carded and carded[0] > 0 and carded[-1] < len(pixels) - 1, centre
    corner = [sum(mean_colour(frame, 640, (20, 364, 120, 378))) / 3 for frame in pixels]
    captioned = [i for i, light in enumerate(corner) if light < corner[0] * 0.6 and i > carded[-1]]
    assert captioned, corner[carded[-1] :]
    assert corner[-1] > corner[0] * 0.9, "the caption is gone by the end"
    frame_png(path, carded[0] / 25 + 0.3, world.output / "chapter.png")
    frame_png(path, captioned[0] / 25 + 0.2, world.output / "caption.png")
