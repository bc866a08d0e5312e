"""End to end in headless Firefox ESR: browser_drop, browser_snapshot's boxes, WebP screenshots
and browser_highlight on the WebExtension driver, and browser_emulate_media refused naming
Firefox, through a real broker and the MCP SDK's client (every tool group, ``/mcp?caps=all``, its
project declared as its MCP root). The page is ``tests/pages/page_effects.html``, as in
``tests/e2e/test_e2e_page_effects.py``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from ..harness.firefox import Context
from ..harness.page_server import serve_pages
from ..harness.waiting import WAIT, eventually
from ..support.firefox_world import Fox, joined_firefox
from ..support.mcp_clients import LEGACY, McpClient, mcp_client, text

pytestmark = pytest.mark.asyncio(loop_scope="module")

PAGES = Path(__file__).resolve().parents[1] / "pages"
PAGE = (PAGES / "page_effects.html").read_text()
FRAMED = {
    "framed.html": (PAGES / "page_effects_framed.html").read_text(),
    "page_effects_zone.html": (PAGES / "page_effects_zone.html").read_text(),
}
MAGENTA = (230, 0, 120)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fox]:
    home: Path = tmp_path_factory.mktemp("firefox-effects")
    (home / "project").mkdir()
    async with serve_pages({"effects.html": PAGE, **FRAMED}) as site, joined_firefox(home, site) as world:
        yield world


def project(fox: Fox) -> Path:
    return fox.firefox.profile.parents[1] / "project"


@contextlib.asynccontextmanager
async def client_of(fox: Fox, name: str) -> AsyncIterator[McpClient]:
    async with mcp_client(
        f"{fox.broker_url}/mcp?caps=all", fox.broker.token, name, LEGACY, roots=[project(fox).as_uri()]
    ) as client:
        yield client


async def open_effects(client: McpClient, fox: Fox, tag: str) -> tuple[str, Context]:
    url = f"{fox.site}/effects.html?{tag}"
    await client.call_json("tabs", {"action": "open", "url": url, "focus": False})
    snapshot = text(await client.call("browser_snapshot", {}))
    [page] = [Context(fox.firefox.bidi, c["context"]) for c in await fox.firefox.contexts() if c["url"] == url]
    return snapshot, page


def ref_of(snapshot: str, pattern: str) -> str:
    for line in snapshot.splitlines():
        if re.search(pattern, line) and (found := re.search(r"\[ref=((?:f\d+)?e\d+)\]", line)):
            return found.group(1)
    raise AssertionError(f"no line matching {pattern!r} in:\n{snapshot}")


async def approval_window(fox: Fox) -> Context | None:
    for found in await fox.firefox.contexts():
        if found["url"].startswith(f"{fox.firefox.extension_origin}/person/approval.html"):
            window = Context(fox.firefox.bidi, found["context"])
            if await window.evaluate("document.querySelector('#agent')?.textContent ?? ''"):
                return window
    return None


async def test_files_and_data_dropped_in_firefox_reach_the_page_once_allowed(fox: Fox) -> None:
    notes = project(fox) / "notes.txt"
    notes.write_text("dropped notes\n")
    async with client_of(fox, "dropper") as client:
        snapshot, page = await open_effects(client, fox, "drop")
        zone = ref_of(snapshot, 'region "Drop zone"')
        asked = asyncio.ensure_future(
            client.call("browser_drop", {"target": zone, "paths": [str(notes)], "data": {"text/plain": "hello"}})
        )
        window = await eventually(lambda: approval_window(fox), "the approval window")
        assert await window.evaluate("document.querySelector('#code').textContent") == (
            f"notes.txt, 14 B: {notes.resolve()}"
        )
        assert await page.evaluate("window.dropped") == []
        await window.click("#once")
        async with asyncio.timeout(WAIT):
            dropped = await asked
        assert not dropped.is_error and "Dropped 1 file (notes.txt, 14 B) and data of type text/plain" in text(dropped)
        [seen] = await page.evaluate("window.dropped")
        assert seen == {
            "files": [{"name": "notes.txt", "size": 14, "type": "text/plain", "text": "dropped notes\n"}],
            "data": {"text/plain": "hello"},
            "trusted": False,
        }
        refused = await client.call(
            "browser_drop", {"target": ref_of(snapshot, 'region "Not a drop zone"'), "data": {"text/plain": "x"}}
        )
        assert refused.is_error and "did not take the drop" in text(refused), text(refused)


async def test_a_secret_or_nothing_is_not_dropped_and_media_emulation_is_refused_naming_firefox(fox: Fox) -> None:
    key = project(fox) / "deploy_key"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n")
    async with client_of(fox, "sneaky") as client:
        snapshot, page = await open_effects(client, fox, "refused")
        zone = ref_of(snapshot, 'region "Drop zone"')
        secret = await client.call("browser_drop", {"target": zone, "paths": [str(key)]})
        assert secret.is_error and "holds a private key" in text(secret), text(secret)
        nothing = await client.call("browser_drop", {"target": zone})
        assert nothing.is_error and "browser_drop needs `paths`" in text(nothing), text(nothing)
        assert await page.evaluate("window.dragEvents") == []
        dark = await client.call("browser_emulate_media", {"colorScheme": "dark"})
        assert dark.is_error and "Firefox" in text(dark), text(dark)
        assert await page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") is False


async def pixel(fox: Fox, png: str, x: int, y: int) -> tuple[int, int, int]:
    """The image's pixel at (x, y), decoded in one of the extension's pages."""
    value = await fox.control.evaluate(
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


async def test_boxes_webp_and_a_highlight_the_page_cannot_read_in_firefox(fox: Fox) -> None:
    async with client_of(fox, "highlighter") as client:
        snapshot, page = await open_effects(client, fox, "highlight")
        boxed = text(await client.call("browser_snapshot", {"boxes": True}))
        assert re.search(r'button "Send" \[ref=e\d+\] \[box=40,300,120,30\]', boxed), boxed
        shot = await client.call("browser_take_screenshot", {"type": "webp"})
        assert not shot.is_error, text(shot)
        [image] = [part for part in shot.content if part.type == "image"]
        raw = base64.b64decode(image.data)
        assert image.mime_type == "image/webp" and raw[:4] == b"RIFF" and raw[8:12] == b"WEBP", raw[:16]
        send = ref_of(snapshot, 'button "Send"')
        shown = await client.call("browser_highlight", {"target": send})
        assert not shown.is_error and "Highlighted <button#send>" in text(shown), text(shown)
        [image] = [p for p in (await client.call("browser_take_screenshot", {})).content if p.type == "image"]
        (fox.firefox.profile.parent / "highlight.png").write_bytes(base64.b64decode(image.data))
        assert near(await pixel(fox, image.data, 41, 315), MAGENTA)
        assert await page.evaluate("window.walk()") == ['div ""  0']
        assert await page.evaluate("window.sweep()") == 1
        await page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        [image] = [p for p in (await client.call("browser_take_screenshot", {})).content if p.type == "image"]
        assert near(await pixel(fox, image.data, 41, 315), MAGENTA)
        await page.evaluate("document.body.replaceChildren()")
        everything = await client.call("browser_hide_highlight", {})
        assert not everything.is_error and "Removed 0 highlights" in text(everything), text(everything)
        assert await page.evaluate("window.walk()") == []


async def test_a_drop_and_a_highlight_reach_an_element_inside_a_frame_in_firefox(fox: Fox) -> None:
    async with client_of(fox, "frame dropper") as client:
        url = f"{fox.site}/framed.html?frame"
        await client.call_json("tabs", {"action": "open", "url": url, "focus": False})
        snapshot = text(await client.call("browser_snapshot", {}))
        [page] = [Context(fox.firefox.bidi, c["context"]) for c in await fox.firefox.contexts() if c["url"] == url]
        zone = ref_of(snapshot, 'region "Frame drop zone"')
        dropped = await client.call("browser_drop", {"target": zone, "data": {"text/plain": "into the frame"}})
        assert not dropped.is_error, text(dropped)
        inner = "document.querySelector('iframe').contentWindow"
        assert await page.evaluate(f"{inner}.dropped") == [{"text/plain": "into the frame"}]
        shown = await client.call("browser_highlight", {"target": ref_of(snapshot, 'button "Inner send"')})
        assert not shown.is_error, text(shown)
        [image] = [p for p in (await client.call("browser_take_screenshot", {})).content if p.type == "image"]
        (fox.firefox.profile.parent / "highlight_in_frame.png").write_bytes(base64.b64decode(image.data))
        # The frame is at (20, 80) and the button at (60, 170) in it: its left edge at x 80, its middle at y 265.
        assert near(await pixel(fox, image.data, 81, 265), MAGENTA)
        assert not near(await pixel(fox, image.data, 70, 265), MAGENTA)
