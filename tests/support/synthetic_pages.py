"""A page of ``tests/pages/`` open in a real browser, with calls into the tools' isolated world.

The synthetic input tests (``tests/e2e/test_e2e_synthetic_*.py``) run the same assertions in
Chromium and in Firefox (``tab_in_each_browser``, their module's fixture): each browser gives a
:class:`PageTab` that loads a page, calls a page function
(``tests/support/page_functions.py``) in an isolated world of it, as the WebExtension driver does through
``chrome.scripting.executeScript``, and reads what the page itself saw in its own (MAIN) world.
Chromium's isolated world is made over the DevTools protocol (Playwright's CDP session);
Firefox's is a WebDriver BiDi sandbox, a realm that sees the page through Xray vision as an
extension's content scripts do (``tests/harness/firefox.py``, with the extension installed as it ships).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Protocol

import pytest
import pytest_asyncio
from playwright.async_api import Page, async_playwright

from ..harness.chromium import CHROMIUM, chromium_args
from ..harness.firefox import BidiError, Context, extension_firefox
from ..harness.page_server import serve_test_pages

WORLD_NAME = "browser-mcp-tools"


class PageTab(Protocol):
    async def goto(self, page: str) -> None: ...

    async def call(self, declaration: str, request: Any) -> Any:
        """``declaration`` (a function of one argument) called with ``request`` in the isolated world."""
        ...

    async def page_value(self, expression: str) -> Any:
        """``expression`` evaluated in the page's own world, as JSON."""
        ...


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


class FirefoxTab:
    def __init__(self, tab: Context, site: str) -> None:
        self.tab = tab
        self.site = site

    async def goto(self, page: str) -> None:
        await self.tab.goto(f"{self.site}/pages/{page}")

    async def call(self, declaration: str, request: Any) -> Any:
        result = await self.tab.bidi.call(
            "script.callFunction",
            {
                "functionDeclaration": f"(json) => Promise.resolve(({declaration})(JSON.parse(json)))"
                ".then((value) => JSON.stringify(value === undefined ? null : value))",
                "arguments": [{"type": "string", "value": json.dumps(request)}],
                "target": {"context": self.tab.id, "sandbox": WORLD_NAME},
                "awaitPromise": True,
            },
        )
        if result["type"] == "exception":
            raise BidiError(f"page function threw: {result['exceptionDetails']}")
        return json.loads(result["result"]["value"])

    async def page_value(self, expression: str) -> Any:
        return await self.tab.evaluate(expression)


@contextlib.asynccontextmanager
async def firefox_tab(site: str, home: Path) -> AsyncIterator[FirefoxTab]:
    """A tab of a headless Firefox ESR (the extension installed, as the driver would have it)."""
    async with extension_firefox(home) as firefox:
        yield FirefoxTab(await firefox.new_tab(), site)


@contextlib.asynccontextmanager
async def browser_tab(browser: str, home: Path) -> AsyncIterator[PageTab]:
    """A tab of ``browser`` (chromium or firefox) on ``tests/pages/``."""
    async with serve_test_pages() as site:
        if browser == "chromium":
            async with chromium_tab(site) as tab:
                yield tab
        else:
            async with firefox_tab(site, home) as firefox:
                yield firefox


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["chromium", "firefox"])
async def tab_in_each_browser(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[PageTab]:
    """A module's tab in Chromium, then in Firefox: every test of the module runs in each, one
    browser at a time."""
    async with browser_tab(request.param, tmp_path_factory.mktemp(request.param)) as tab:
        yield tab
