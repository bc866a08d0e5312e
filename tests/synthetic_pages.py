"""A page of ``tests/pages/`` open in a real browser, with calls into the tools' isolated world.

The synthetic input tests (``tests/test_e2e_synthetic_*.py``) run the same assertions in Chromium
and in Firefox: each browser gives a :class:`PageTab` that loads a page, calls a page function
(``tests/page_functions.py``) in an isolated world of it, as the WebExtension driver does through
``chrome.scripting.executeScript``, and reads what the page itself saw in its own (MAIN) world.
Chromium's isolated world is made over the DevTools protocol (Playwright's CDP session).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Protocol

from aiohttp import web
from playwright.async_api import Page, async_playwright

from .chromium import CHROMIUM, chromium_args
from .test_e2e_extension import serve_app

PAGES = Path(__file__).resolve().parent / "pages"
WORLD_NAME = "browser-mcp-tools"


class PageTab(Protocol):
    async def goto(self, page: str) -> None: ...

    async def call(self, declaration: str, request: Any) -> Any:
        """``declaration`` (a function of one argument) called with ``request`` in the isolated world."""
        ...

    async def page_value(self, expression: str) -> Any:
        """``expression`` evaluated in the page's own world, as JSON."""
        ...


@contextlib.asynccontextmanager
async def serve_pages() -> AsyncIterator[str]:
    """``tests/pages/`` under ``/pages/`` on 127.0.0.1; yields the site's URL."""
    app = web.Application()
    app.router.add_static("/pages/", PAGES)
    async with serve_app(app) as url:
        yield url


class ChromiumTab:
    def __init__(self, page: Page, site: str) -> None:
        self.page = page
        self.site = site
        self.world: int | None = None

    async def goto(self, page: str) -> None:
        await self.page.goto(f"{self.site}/pages/{page}")
        cdp = await self.page.context.new_cdp_session(self.page)
        tree = await cdp.send("Page.getFrameTree")
        made = await cdp.send(
            "Page.createIsolatedWorld", {"frameId": tree["frameTree"]["frame"]["id"], "worldName": WORLD_NAME}
        )
        self.cdp, self.world = cdp, made["executionContextId"]

    async def call(self, declaration: str, request: Any) -> Any:
        answer = await self.cdp.send(
            "Runtime.callFunctionOn",
            {
                "functionDeclaration": declaration,
                "executionContextId": self.world,
                "arguments": [{"value": request}],
                "returnByValue": True,
                "awaitPromise": True,
            },
        )
        if "exceptionDetails" in answer:
            raise AssertionError(answer["exceptionDetails"])
        return answer["result"].get("value")

    async def page_value(self, expression: str) -> Any:
        return await self.page.evaluate(expression)


@contextlib.asynccontextmanager
async def chromium_tab(site: str) -> AsyncIterator[ChromiumTab]:
    """A tab of a headless Chromium with no extension: the page functions are the subject."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=chromium_args(extension=None))
        try:
            yield ChromiumTab(await browser.new_page(viewport={"width": 800, "height": 600}), site)
        finally:
            await browser.close()
