"""End to end: the page hooks of the WebExtension driver (extension/actions/main_world_hooks.js).

Firefox ESR with the extension installed as it ships (``tests/firefox.py``); the hooks are run as
the driver runs them, with ``scripting.executeScript`` from one of the extension's pages, into a
page of ``tests/pages/``. The test's server stands in for the driver's answer URL: it hears each
dialog in the request that holds the page, and answers when the test says.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from .firefox import Context, Firefox, extension_firefox
from .page_functions import hooks_call
from .synthetic_pages import PAGES, browser_tab
from .test_e2e_extension import serve_app

pytestmark = pytest.mark.asyncio(loop_scope="module")


class Dialogs:
    """The answer URL: each request is a dialog, held until :meth:`answer`."""

    def __init__(self) -> None:
        self.heard: asyncio.Queue[dict[str, str]] = asyncio.Queue()
        self.answers: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def handle(self, request: web.Request) -> web.Response:
        await self.heard.put(dict(request.query))
        return web.json_response(await self.answers.get())


class World:
    def __init__(self, firefox: Firefox, site: str, dialogs: Dialogs) -> None:
        self.firefox, self.site, self.dialogs = firefox, site, dialogs

    async def open(self, page: str) -> tuple[Context, Context]:
        """The page in a tab, and an extension page to run executeScript from."""
        tab = await self.firefox.new_tab(f"{self.site}/pages/{page}")
        return tab, await self.firefox.extension_page()

    async def run(self, tools: Context, page: str, function: str, request: Any) -> Any:
        source = hooks_call(function)
        script = f"""async (request) => {{
            const tab = (await browser.tabs.query({{}})).findLast((t) => t.url === "{self.site}/pages/{page}");
            const [done] = await browser.scripting.executeScript({{
                target: {{ tabId: tab.id }}, func: {source}, args: [request] }});
            return done.result;
        }}"""
        return await tools.evaluate(script, request)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    dialogs = Dialogs()
    app = web.Application()
    app.router.add_static("/pages/", PAGES)
    app.router.add_get("/answer", dialogs.handle)
    async with serve_app(app) as site, extension_firefox(Path(tmp_path_factory.mktemp("hooks"))) as firefox:
        yield World(firefox, site, dialogs)


PAGE = "synthetic_dialogs.html"


def settled(name: str) -> str:
    """The page's `window[name]` once its script, held by the dialog, has set it."""
    return f"""new Promise((done) => {{
        const check = () => ("{name}" in window ? done(window["{name}"]) : setTimeout(check, 10));
        check();
    }})"""


async def test_a_confirm_holds_the_page_until_answered_and_a_prompt_gets_the_answer_text(world: World) -> None:
    tab, tools = await world.open(PAGE)
    installed = await world.run(tools, PAGE, "installPageHooks", {"answerUrl": f"{world.site}/answer"})
    assert installed == {"ok": True, "installed": True}
    await tab.evaluate("setTimeout(() => { window.confirmed = confirm('Delete it?'); }, 0)")
    assert await world.dialogs.heard.get() == {"type": "confirm", "message": "Delete it?", "default": ""}
    await world.dialogs.answers.put({"accept": True})
    assert await tab.evaluate(settled("confirmed")) is True

    await tab.evaluate("setTimeout(() => { window.named = prompt('Name?', 'Bob'); }, 0)")
    assert (await world.dialogs.heard.get())["default"] == "Bob"
    await world.dialogs.answers.put({"accept": True, "text": "Ada"})
    assert await tab.evaluate(settled("named")) == "Ada"


async def test_a_page_that_replaced_alert_first_loses_it_and_cannot_forge_what_is_reported(world: World) -> None:
    tab, tools = await world.open(PAGE)
    await world.run(tools, PAGE, "installPageHooks", {"answerUrl": f"{world.site}/answer"})
    forged = "{ toString() { return 'forged'; }, toJSON() { return 'forged too'; } }"
    await tab.evaluate(f"setTimeout(() => {{ window.alertGave = alert({forged}); }}, 0)")
    heard = await world.dialogs.heard.get()
    assert (heard["type"], heard["message"]) == ("alert", "{}")
    await world.dialogs.answers.put({"accept": True})
    assert await tab.evaluate(settled("alertGave")) is None
    assert await tab.evaluate("window.ownAlertCalls") == 0
    # What the page reaches of the hooks is the functions alone: no state, nothing to call.
    assert await tab.evaluate("Object.keys(window).filter((key) => key.includes('browserMcp'))") == []
    records = await world.run(tools, PAGE, "pageHookRecords", {})
    assert [dialog["message"] for dialog in records["dialogs"]] == ["{}"]


async def test_console_messages_and_uncaught_errors_are_kept_within_bounds(world: World) -> None:
    tab, tools = await world.open(PAGE)
    await world.run(tools, PAGE, "installPageHooks", {"answerUrl": f"{world.site}/answer", "consoleLimit": 3})
    await tab.evaluate("console.log('hi', 1, {a: 1}), console.warn('careful')")
    await tab.evaluate("setTimeout(() => { throw new Error('boom'); }, 0), new Promise((done) => setTimeout(done, 50))")
    records = await world.run(tools, PAGE, "pageHookRecords", {"take": True})
    texts = [(entry["level"], entry["text"].split(" (")[0]) for entry in records["console"]]
    assert texts == [("log", 'hi 1 {"a":1}'), ("warn", "careful"), ("error", "Uncaught Error: boom")]
    await tab.evaluate("Array.from({length: 5}, (_, i) => console.log(i))")
    records = await world.run(tools, PAGE, "pageHookRecords", {})
    assert ([entry["text"] for entry in records["console"]], records["dropped"]) == (["2", "3", "4"], 2)


async def test_in_chromium_the_hooks_answer_not_supported_and_change_nothing(tmp_path: Path) -> None:
    async with browser_tab("chromium", tmp_path) as tab:
        await tab.goto(PAGE)
        answer = await tab.call(hooks_call("installPageHooks"), {"answerUrl": "http://127.0.0.1:9/"})
        assert answer["code"] == "not_supported"
        assert await tab.page_value("window.alert.toString().includes('ownAlertCalls')") is True
