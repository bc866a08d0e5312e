"""Pages and small web apps a test serves on 127.0.0.1 (a secure context), each on a free port:
pages given as text, the files of ``tests/pages/``, or an app of the test's own."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from aiohttp import web

PAGES = Path(__file__).resolve().parents[1] / "pages"
# Long enough for a client's next call to reach the browser before the page does.
LATE_SECONDS = 1.5


@contextlib.asynccontextmanager
async def serve_pages(pages: dict[str, str]) -> AsyncIterator[str]:
    """``pages`` (file name -> HTML) served on 127.0.0.1, a secure context; yields the site's URL.
    Each is also at ``/late/<name>``, answered only after LATE_SECONDS, as a slow server would."""

    def page(request: web.Request) -> web.Response:
        body = pages.get(request.match_info["name"])
        if body is None:
            raise web.HTTPNotFound()
        return web.Response(text=body, content_type="text/html")

    async def serve(request: web.Request) -> web.Response:
        return page(request)

    async def serve_late(request: web.Request) -> web.Response:
        await asyncio.sleep(LATE_SECONDS)
        return page(request)

    app = web.Application()
    app.router.add_get("/{name}", serve)
    app.router.add_get("/late/{name}", serve_late)
    async with serve_app(app) as url:
        yield url


@contextlib.asynccontextmanager
async def serve_test_pages(*routes: web.AbstractRouteDef) -> AsyncIterator[str]:
    """``tests/pages/`` under ``/pages/``, and ``routes`` of the test's own beside; yields the site's URL."""
    app = web.Application()
    app.router.add_static("/pages/", PAGES)
    app.add_routes(routes)
    async with serve_app(app) as url:
        yield url


@contextlib.asynccontextmanager
async def serve_app(app: web.Application) -> AsyncIterator[str]:
    """``app`` served on a free port of 127.0.0.1; yields its URL."""
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()
