"""End to end in headless Chromium: browser_drop, browser_emulate_media, browser_snapshot's boxes,
WebP screenshots and browser_highlight, through a real broker, the real extension and the MCP
SDK's client (asking for every tool group, ``/mcp?caps=all``, and declaring its project as its
MCP root, where drops may take files from).

``tests/pages/page_effects.html`` is a site's upload area: its drop zone takes drops and writes
what its handler got (names, sizes, contents, data types) onto the page; beside it an element
that takes none, a button at a known place, and the page's own scripts that walk the DOM and
watch its mutations for a highlight to read or remove.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Page

from ..harness.page_server import serve_pages
from ..harness.waiting import WAIT
from ..support.extension_world import World, open_world
from ..support.mcp_clients import LEGACY, McpClient, mcp_client, text
from ..support.person_world import page_at

pytestmark = pytest.mark.asyncio(loop_scope="module")

PAGES = Path(__file__).resolve().parents[1] / "pages"
PAGE = (PAGES / "page_effects.html").read_text()
OUTPUT = Path(os.environ.get("BROWSER_MCP_E2E_OUTPUT") or Path(__file__).parents[1] / "output") / "e2e_page_effects"
# The highlight's default colour (page/page_effects.js), as it shows over a white page.
MAGENTA = (230, 0, 120)


class EffectsWorld(World):
    home: Path
    project: Path


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[EffectsWorld]:
    home = tmp_path_factory.mktemp("e2e-effects")
    async with (
        serve_pages(
            {
                "effects.html": PAGE,
                "framed.html": (PAGES / "page_effects_framed.html").read_text(),
                "page_effects_zone.html": (PAGES / "page_effects_zone.html").read_text(),
            }
        ) as site,
        open_world(home, site, EffectsWorld, probed=False) as world,
    ):
        world.home = home
        world.project = home / "project"
        world.project.mkdir()
        yield world


@contextlib.asynccontextmanager
async def client_of(world: EffectsWorld, name: str) -> AsyncIterator[McpClient]:
    url = f"http://127.0.0.1:{world.broker.port}/mcp?caps=all"
    async with mcp_client(url, world.token, name, LEGACY, roots=[world.project.as_uri()]) as client:
        yield client


async def open_effects(client: McpClient, world: World, tag: str) -> tuple[str, Page]:
    """The page, opened by ``client`` (its current tab), and the browser's page of it."""
    url = f"{world.site}/effects.html?{tag}"
    await client.call_json("tabs", {"action": "open", "url": url, "focus": False})
    snapshot = text(await client.call("browser_snapshot", {}))
    page = await page_at(world, url)
    return snapshot, page


def ref_of(snapshot: str, pattern: str) -> str:
    for line in snapshot.splitlines():
        if re.search(pattern, line) and (found := re.search(r"\[ref=((?:f\d+)?e\d+)\]", line)):
            return found.group(1)
    raise AssertionError(f"no line matching {pattern!r} in:\n{snapshot}")


def approval_pages(world: World) -> list[Page]:
    return [page for page in world.context.pages if "/person/approval.html" in page.url]


async def test_files_and_data_dropped_reach_the_pages_handler_once_the_person_allows_each_file(
    world: EffectsWorld,
) -> None:
    notes = world.project / "notes.txt"
    notes.write_text("dropped notes\n")
    sheet = world.project / "sheet.csv"
    sheet.write_text("a,b\n1,2\n")
    async with client_of(world, "dropper") as client:
        snapshot, page = await open_effects(client, world, "drop")
        zone = ref_of(snapshot, 'region "Drop zone"')
        asked = asyncio.ensure_future(
            client.call(
                "browser_drop",
                {
                    "element": "Drop zone",
                    "target": zone,
                    "paths": [str(notes), str(sheet)],
                    "data": {"text/plain": "hello", "text/uri-list": "https://example.com/"},
                },
            )
        )
        window = await world.context.wait_for_event("page", lambda opened: "/person/approval.html" in opened.url)
        await window.wait_for_selector("#agent:not(:empty)")
        # The person is shown each file, by name, size and path.
        assert (await window.locator("#code").text_content()).splitlines() == [
            f"notes.txt, 14 B: {notes.resolve()}",
            f"sheet.csv, 8 B: {sheet.resolve()}",
        ]
        assert await page.evaluate("window.dropped") == []
        with contextlib.suppress(Exception):  # the window closes itself as it answers
            await window.get_by_role("button", name="Allow once").click()
        dropped = await asyncio.wait_for(asked, WAIT)
        assert not dropped.is_error, text(dropped)
        assert "Dropped 2 files (notes.txt, 14 B; sheet.csv, 8 B) and data of type text/plain, text/uri-list" in text(
            dropped
        )
        assert "dropped notes.txt (14), sheet.csv (8) text/plain, text/uri-list" in text(dropped)
        [seen] = await page.evaluate("window.dropped")
        assert seen == {
            "files": [
                {"name": "notes.txt", "size": 14, "type": "text/plain", "text": "dropped notes\n"},
                {"name": "sheet.csv", "size": 8, "type": "text/csv", "text": "a,b\n1,2\n"},
            ],
            "data": {"text/plain": "hello", "text/uri-list": "https://example.com/"},
            "trusted": False,
        }
        assert await page.evaluate("window.dragEvents") == ["dragenter", "dragover", "drop"]


async def test_data_alone_is_dropped_without_asking_and_an_element_that_takes_no_drop_is_an_error(
    world: EffectsWorld,
) -> None:
    async with client_of(world, "data dropper") as client:
        snapshot, page = await open_effects(client, world, "data")
        dropped = await client.call(
            "browser_drop", {"target": ref_of(snapshot, 'region "Drop zone"'), "data": {"text/html": "<b>hi</b>"}}
        )
        assert not dropped.is_error, text(dropped)
        [seen] = await page.evaluate("window.dropped")
        assert seen["files"] == [] and seen["data"] == {"text/html": "<b>hi</b>"}
        refused = await client.call(
            "browser_drop", {"target": ref_of(snapshot, 'region "Not a drop zone"'), "data": {"text/plain": "x"}}
        )
        assert refused.is_error and "did not take the drop" in text(refused), text(refused)
        assert (await page.evaluate("window.dragEvents"))[-3:] == [
            "plain dragenter",
            "plain dragover",
            "plain dragleave",
        ]
        assert approval_pages(world) == []


async def test_drops_of_files_outside_the_roots_of_secrets_or_of_nothing_are_refused_before_the_page(
    world: EffectsWorld,
) -> None:
    outside = world.home / "elsewhere.txt"
    outside.write_text("not the project's\n")
    key = world.project / "deploy_key"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n")
    async with client_of(world, "sneaky dropper") as client:
        snapshot, page = await open_effects(client, world, "refused")
        zone = ref_of(snapshot, 'region "Drop zone"')
        far = await client.call("browser_drop", {"target": zone, "paths": [str(outside)]})
        assert far.is_error and text(far).startswith("upload_not_allowed:"), text(far)
        assert "outside the folders" in text(far)
        secret = await client.call("browser_drop", {"target": zone, "paths": [str(key)], "data": {"text/plain": "x"}})
        assert secret.is_error and "holds a private key" in text(secret), text(secret)
        nothing = await client.call("browser_drop", {"target": zone})
        assert nothing.is_error and text(nothing).startswith("invalid_request:"), text(nothing)
        assert "browser_drop needs `paths`" in text(nothing)
        empty = await client.call("browser_drop", {"target": zone, "paths": [], "data": {}})
        assert empty.is_error and text(empty).startswith("invalid_request:"), text(empty)
        assert await page.evaluate("window.dragEvents") == []
        assert approval_pages(world) == []


async def test_dark_colour_scheme_is_the_clients_tab_alone_and_null_clears_it(world: EffectsWorld) -> None:
    persons = await world.context.new_page()
    await persons.goto(f"{world.site}/effects.html?person")
    dark = "matchMedia('(prefers-color-scheme: dark)').matches"
    async with client_of(world, "dark mode") as client:
        _, page = await open_effects(client, world, "media")
        assert await page.evaluate(dark) is False
        set_dark = await client.call("browser_emulate_media", {"colorScheme": "dark", "reducedMotion": "reduce"})
        assert not set_dark.is_error, text(set_dark)
        assert "colorScheme dark, reducedMotion reduce" in text(set_dark)
        assert await page.evaluate(dark) is True
        assert await page.evaluate("matchMedia('(prefers-reduced-motion: reduce)').matches") is True
        assert await page.text_content("#scheme") == "scheme dark"
        # Another tab of the same site, the person's, is untouched.
        assert await persons.evaluate(dark) is False
        # An omitted feature stays; null clears one.
        cleared = await client.call("browser_emulate_media", {"colorScheme": None})
        assert not cleared.is_error and "reducedMotion reduce" in text(cleared), text(cleared)
        assert "colorScheme" not in text(cleared)
        assert await page.evaluate(dark) is False
        assert await page.evaluate("matchMedia('(prefers-reduced-motion: reduce)').matches") is True
        wrong = await client.call("browser_emulate_media", {"colorScheme": "purple"})
        assert wrong.is_error and text(wrong).startswith("invalid_request:"), text(wrong)
    await persons.close()


async def test_boxes_give_each_elements_rect_and_a_later_action_tells_no_change_for_them(world: EffectsWorld) -> None:
    async with client_of(world, "measurer") as client:
        _, page = await open_effects(client, world, "boxes")
        boxed = text(await client.call("browser_snapshot", {"boxes": True}))
        [line] = [line for line in boxed.splitlines() if 'button "Send"' in line]
        rect = await page.evaluate(
            "(() => { const r = document.getElementById('send').getBoundingClientRect();"
            " return [r.x, r.y, r.width, r.height].map(Math.round); })()"
        )
        assert rect == [40, 300, 120, 30]
        assert re.search(r'button "Send" \[ref=e\d+\] \[box=40,300,120,30\]', line), line
        assert "[box=" not in text(await client.call("browser_snapshot", {}))
        # Boxes are where an element is, not what it is: the page scrolled, nothing changed.
        await page.evaluate("scrollTo(0, 100)")
        again = text(await client.call("browser_snapshot", {"changes": True, "boxes": True}))
        assert "No changes since your last snapshot" in again, again


async def pixel(world: World, png: str, x: int, y: int) -> tuple[int, int, int]:
    """The colour of the image's pixel at (x, y), decoded by the extension's worker."""
    value = await world.worker.evaluate(
        """async ([data, x, y]) => {
          const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
          const bitmap = await createImageBitmap(new Blob([bytes]));
          const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
          const paint = canvas.getContext("2d");
          paint.drawImage(bitmap, 0, 0);
          return [...paint.getImageData(x, y, 1, 1).data.slice(0, 3)];
        }""",
        [png, x, y],
    )
    return (value[0], value[1], value[2])


def near(colour: tuple[int, int, int], wanted: tuple[int, int, int]) -> bool:
    return all(abs(a - b) <= 40 for a, b in zip(colour, wanted, strict=True))


async def screenshot(client: McpClient, **args: Any) -> tuple[str, str]:
    shot = await client.call("browser_take_screenshot", args)
    assert not shot.is_error, text(shot)
    [image] = [part for part in shot.content if part.type == "image"]
    return image.data, image.mime_type


async def test_a_webp_screenshot_decodes_as_webp(world: EffectsWorld) -> None:
    async with client_of(world, "photographer") as client:
        await open_effects(client, world, "webp")
        data, mime = await screenshot(client, type="webp")
        raw = base64.b64decode(data)
        assert mime == "image/webp" and raw[:4] == b"RIFF" and raw[8:12] == b"WEBP", raw[:16]
        # The button's grey at its middle, as the image shows it.
        assert sum(await pixel(world, data, 100, 315)) > 0


async def test_a_highlight_follows_its_element_and_the_page_can_neither_read_nor_remove_it(
    world: EffectsWorld,
) -> None:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    async with client_of(world, "highlighter") as client:
        snapshot, page = await open_effects(client, world, "highlight")
        send = ref_of(snapshot, 'button "Send"')
        shown = await client.call("browser_highlight", {"element": "Send", "target": send})
        assert not shown.is_error and f"Highlighted <button#send> ({send})" in text(shown), text(shown)
        data, _ = await screenshot(client)
        (OUTPUT / "highlight.png").write_bytes(base64.b64decode(data))
        # The box's border, just inside the button's left edge, and not far outside it.
        assert near(await pixel(world, data, 41, 315), MAGENTA)
        assert not near(await pixel(world, data, 30, 315), MAGENTA)
        # What the page's scripts find: one bare element, nothing in it to read.
        assert await page.evaluate("window.walk()") == ['div ""  0']
        # The page scrolls: the box goes with the button.
        await page.evaluate("scrollTo(0, 200)")
        await page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        data, _ = await screenshot(client)
        (OUTPUT / "highlight_scrolled.png").write_bytes(base64.b64decode(data))
        assert near(await pixel(world, data, 41, 115), MAGENTA)
        assert not near(await pixel(world, data, 41, 315), MAGENTA)
        # The page removes what is not its own: the highlight comes back.
        assert await page.evaluate("window.sweep()") == 1
        await page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        data, _ = await screenshot(client)
        assert near(await pixel(world, data, 41, 115), MAGENTA)
        assert await page.evaluate("window.walk()") == ['div ""  0']
        # Hidden: gone, and the host with it.
        hidden = await client.call("browser_hide_highlight", {"target": send})
        assert not hidden.is_error and "Removed the highlight" in text(hidden), text(hidden)
        data, _ = await screenshot(client)
        assert not near(await pixel(world, data, 41, 115), MAGENTA)
        assert await page.evaluate("window.walk()") == []
        assert set(await page.evaluate("window.mutations")) <= {"DIV", "#text"}


async def test_hiding_every_highlight_and_a_page_that_empties_its_body(world: EffectsWorld) -> None:
    async with client_of(world, "highlighter 2") as client:
        snapshot, page = await open_effects(client, world, "many")
        for pattern in ('button "Send"', 'region "Drop zone"', 'button "Far"'):
            styled = await client.call(
                "browser_highlight", {"target": ref_of(snapshot, pattern), "style": "border-color: lime"}
            )
            assert not styled.is_error, text(styled)
        await page.evaluate("document.body.replaceChildren()")
        # Their elements are gone: their boxes went with them, and the tools still answer.
        after = await client.call("browser_highlight", {"target": ref_of(snapshot, 'button "Send"')})
        assert after.is_error and "no longer on the page" in text(after), text(after)
        everything = await client.call("browser_hide_highlight", {})
        assert not everything.is_error and "Removed 0 highlights" in text(everything), text(everything)
        await page.evaluate("document.body.innerHTML = '<button id=\"b\">Back</button>'")
        fresh = text(await client.call("browser_snapshot", {}))
        await client.call("browser_highlight", {"target": ref_of(fresh, 'button "Back"')})
        await client.call("browser_highlight", {"target": "#b", "style": "border-color: lime"})
        everything = await client.call("browser_hide_highlight", {})
        assert "Removed 1 highlight" in text(everything), text(everything)


async def test_a_drop_and_a_highlight_reach_an_element_inside_a_frame(world: EffectsWorld) -> None:
    async with client_of(world, "frame dropper") as client:
        url = f"{world.site}/framed.html?frame"
        await client.call_json("tabs", {"action": "open", "url": url, "focus": False})
        snapshot = text(await client.call("browser_snapshot", {}))
        page = await page_at(world, url)
        [frame] = [f for f in page.frames if f.url.endswith("/page_effects_zone.html")]
        zone = ref_of(snapshot, 'region "Frame drop zone"')
        assert zone.startswith("f"), snapshot
        dropped = await client.call("browser_drop", {"target": zone, "data": {"text/plain": "into the frame"}})
        assert not dropped.is_error, text(dropped)
        assert await frame.evaluate("window.dropped") == [{"text/plain": "into the frame"}]
        assert await frame.text_content("#zone") == "dropped into the frame"
        inner = ref_of(snapshot, 'button "Inner send"')
        shown = await client.call("browser_highlight", {"element": "Inner send", "target": inner})
        assert not shown.is_error, text(shown)
        data, _ = await screenshot(client)
        OUTPUT.mkdir(parents=True, exist_ok=True)
        (OUTPUT / "highlight_in_frame.png").write_bytes(base64.b64decode(data))
        # The frame is at (20, 80) and the button at (60, 170) in it: its left edge at x 80, its middle at y 265.
        assert near(await pixel(world, data, 81, 265), MAGENTA)
        assert not near(await pixel(world, data, 70, 265), MAGENTA)
        hidden = await client.call("browser_hide_highlight", {})
        assert not hidden.is_error, text(hidden)
        data, _ = await screenshot(client)
        assert not near(await pixel(world, data, 81, 265), MAGENTA)


async def test_print_media_is_emulated_and_cleared(world: EffectsWorld) -> None:
    async with client_of(world, "printer") as client:
        _, page = await open_effects(client, world, "print")
        printing = "matchMedia('print').matches"
        assert await page.evaluate(printing) is False
        set_print = await client.call("browser_emulate_media", {"media": "print"})
        assert not set_print.is_error and "media print" in text(set_print), text(set_print)
        assert await page.evaluate(printing) is True
        cleared = await client.call("browser_emulate_media", {"media": None})
        assert not cleared.is_error, text(cleared)
        assert await page.evaluate(printing) is False
