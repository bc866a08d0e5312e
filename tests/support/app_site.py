"""The site the app-telemetry tests (browser_performance, WebSocket frames, browser_a11y_audit)
serve, in Chromium and Firefox alike: ``tests/pages/app_*.html``, a large hero image that comes
late (``/slow/hero.png``, as a slow image server sends it), and a WebSocket echo at ``/ws``; and
the checks both browsers' tests make of the answers."""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import struct
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from aiohttp import WSMsgType, web

from ..harness.page_server import serve_app
from ..harness.waiting import eventually
from .mcp_clients import McpClient, text
from .testing_tools import ref_of

PAGES = Path(__file__).resolve().parents[1] / "pages"
HERO_DELAY = 0.6


def noisy_png(width: int, height: int) -> bytes:
    """A PNG of noise: an image of so little detail as one colour is no LCP candidate to Chromium."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    noise = random.Random(43)
    rows = b"".join(b"\0" + noise.randbytes(3 * width) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


@contextlib.asynccontextmanager
async def serve_app_site() -> AsyncIterator[str]:
    """The site on a free port of 127.0.0.1; yields its URL."""
    hero = noisy_png(900, 500)

    async def page(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if not re.fullmatch(r"app_\w+\.html", name) or not (PAGES / name).is_file():
            raise web.HTTPNotFound()
        return web.Response(text=(PAGES / name).read_text(), content_type="text/html")

    async def slow_hero(request: web.Request) -> web.Response:
        await asyncio.sleep(HERO_DELAY)
        return web.Response(body=hero, content_type="image/png")

    async def echo(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        async for message in socket:
            if message.type == WSMsgType.TEXT:
                await socket.send_str(f"echo: {message.data[:20]}")
            elif message.type == WSMsgType.BINARY:
                await socket.send_bytes(bytes(reversed(message.data)) + b"\xff")
        return socket

    app = web.Application()
    app.router.add_get("/slow/hero.png", slow_hero)
    app.router.add_get("/ws", echo)
    app.router.add_get("/{name}", page)
    async with serve_app(app) as url:
        yield url


async def answer_with(client: McpClient, tool: str, words: str) -> str | None:
    """The client's ``tool`` answer (no arguments) when it holds ``words``."""
    answer = text(await client.call(tool, {}))
    return answer if words in answer else None


def line_of(answer: str, start: str) -> str:
    [line] = [line for line in answer.splitlines() if line.startswith(start)]
    return line


async def late_hero_vitals(client: McpClient) -> tuple[str, str]:
    """The snapshot and browser_performance's answer of app_vitals.html once its late image is the
    LCP, checked: the image by its ref and address, after it came, and none of the page's fakes."""
    # The image comes 0.3 s after the page, and its bytes 0.6 s after that.
    snapshot = await eventually(lambda: answer_with(client, "browser_snapshot", "Rocket on the pad"), "the image")
    hero = ref_of(snapshot, 'img "Rocket on the pad"')
    answer = await eventually(lambda: answer_with(client, "browser_performance", "<img#hero>"), "the image as LCP")
    lcp = line_of(answer, "- LCP: ")
    assert f'<img#hero> "Rocket on the pad" [ref={hero}]' in lcp and "/slow/hero.png" in lcp, answer
    found = re.search(r"LCP: (\d+) ms", lcp)
    assert found and int(found.group(1)) >= 900, lcp
    assert "evil.example" not in answer and "99999" not in answer and "123456" not in answer
    assert re.search(r"- FCP: \d+ ms", answer) and re.search(r"- TTFB: \d+ ms", answer), answer
    assert re.search(r"- DOMContentLoaded: \d+ ms; load: \d+ ms", answer), answer
    return snapshot, answer


async def check_audit(client: McpClient, snapshot: str, page: Any) -> None:
    """browser_a11y_audit of app_audit.html (its snapshot ``snapshot``, the browser's ``page``) finds
    the unlabeled fields (in the page and its widget's shadow root, and in its frame by the frame's
    ref) and the faint text, by axe-core's own release and not the page's fake."""
    answer = text(await client.call("browser_a11y_audit", {}))
    assert "0.0.0-fake" not in answer and re.search(r"axe-core 4\.\d+\.\d+ found [2-9]", answer), answer
    label = answer.split("- label (critical): ", 1)[1].split("\n- ", 1)[0]
    assert f"[ref={ref_of(snapshot, 'textbox')}] #email" in label, answer
    # The field in the widget's open shadow root, by its ref and its path through the root.
    assert f"[ref={ref_of(snapshot, 'searchbox')}] #card >>> #inner" in label, answer
    contrast = answer.split("- color-contrast (serious): ", 1)[1].split("\n- ", 1)[0]
    assert "#faint" in contrast and "contrast" in contrast, answer
    # Nothing of the audit is in the page's own world, and its own axe is as it was.
    assert await page.evaluate("window.axe.version") == "0.0.0-fake"
    # The frame is a page of its own: left out of the page's audit, audited by its element's ref.
    assert "#news" not in answer, answer
    news = ref_of(snapshot, r"textbox.*\[ref=f\d+e\d+\]")
    framed = text(await client.call("browser_a11y_audit", {"target": news}))
    assert f"in {news}" in framed and f"[ref={news}] #news" in framed, framed

    section = ref_of(snapshot, 'region "Form"')
    scoped = text(await client.call("browser_a11y_audit", {"element": "the form", "target": section}))
    assert f"in the form ({section})" in scoped and "- label (critical)" in scoped, scoped
    assert "color-contrast" not in scoped, scoped
    stale = await client.call("browser_a11y_audit", {"target": "e99999"})
    assert stale.is_error and "never given by a snapshot" in text(stale), text(stale)
