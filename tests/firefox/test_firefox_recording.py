"""End to end in Firefox ESR: browser_start_recording and browser_stop_recording through a real
broker and the real add-on, on ``tests/pages/recording_form.html``, the person's input real
(trusted) over WebDriver BiDi's input.performActions.

The person agrees in the approval window (a refusal records nothing); the code recorded, replayed
by Playwright in a plain Chromium, leaves the same page showing the same values; the passwords
typed appear nowhere in the answer; events the page makes up are not recorded; the toolbar's badge
says REC while it records, and the recording ends with the client's session.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from ..harness.firefox import Context
from ..harness.page_server import serve_test_pages
from ..harness.waiting import WAIT, eventually
from ..support.firefox_world import Fox, joined_firefox
from ..support.mcp_clients import McpClient, refused, text
from ..support.recording import CODE, COMMENT, DONE, FORM, NAME, PASSWORD, SAVED, everything_said, replayed_state
from .test_firefox_storage_tools import open_tab, window_after

pytestmark = pytest.mark.asyncio(loop_scope="module")

ENTER = "\ue007"
ARROW_DOWN = "\ue015"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fox]:
    home: Path = tmp_path_factory.mktemp("firefox-recording")
    async with serve_test_pages() as site, joined_firefox(home, site) as world:
        await world.control.evaluate(
            "async () => { await chrome.storage.local.set({ approvalTimeoutMs: 20000 }); return true; }", {}
        )
        yield world


async def start(fox: Fox, client: McpClient, button: str) -> tuple[Any, str]:
    call = asyncio.ensure_future(client.call("browser_start_recording", {}))
    window = await window_after(fox, call, set())
    assert await window.evaluate("document.querySelector('#always').hidden")
    shown = str(await window.evaluate("document.body.innerText"))
    await window.click(button)
    async with asyncio.timeout(WAIT):
        return await call, shown


async def badge(fox: Fox) -> str:
    return str(await fox.control.evaluate("chrome.action.getBadgeText({})"))


async def opened_form(client: McpClient, fox: Fox, tag: str) -> Context:
    _, page = await open_tab(client, fox, f"{fox.site}/{FORM}?{tag}")

    async def framed() -> bool:
        return bool(
            await page.evaluate("!!document.querySelector('iframe').contentDocument?.getElementById('comment')")
        )

    await eventually(framed, "the form's frame")
    return page


async def click_in_frame(page: Context, selector: str) -> None:
    box = await page.evaluate(
        """(selector) => { const frame = document.querySelector("iframe").getBoundingClientRect();
            const r = document.querySelector("iframe").contentDocument.querySelector(selector).getBoundingClientRect();
            return [Math.round(frame.x + r.x + r.width / 2), Math.round(frame.y + r.y + r.height / 2)]; }""",
        selector,
    )
    await page.click_at(box[0], box[1])


async def test_the_persons_actions_replay_to_the_same_page_and_no_password_leaves(fox: Fox) -> None:
    async with fox.mcp("Fox Agent", caps="devtools") as client:
        page = await opened_form(client, fox, "whole")
        started, shown = await start(fox, client, "#once")
        assert not started.is_error, text(started)
        assert "Fox Agent" in shown and "Sign up" in shown, shown
        assert await badge(fox) == "REC"
        assert "Fox Agent" in str(await fox.control.evaluate("chrome.action.getTitle({})"))

        await page.click("#cookies button")
        await page.click("#name")
        await page.type_text(NAME)
        await page.evaluate(
            """() => { const name = document.getElementById("name"); const was = name.value;
            name.value = "Mallory"; name.dispatchEvent(new InputEvent("input", { bubbles: true }));
            name.value = was; document.getElementById("trap").click(); return true; }""",
            {},
        )
        await page.evaluate("document.getElementById('colour').focus() ?? true")
        await page.type_text(ARROW_DOWN)
        await page.click("#agree")
        await click_in_frame(page, "#comment")
        await page.type_text(COMMENT)
        await page.click("#code")
        await page.type_text(CODE)
        await page.click("#password")
        await page.type_text(PASSWORD + ENTER)

        async def saved() -> bool:
            return bool(await page.evaluate("document.getElementById('saved').textContent"))

        await eventually(saved, "the form saved")
        await page.click("a")

        async def landed() -> bool:
            return await page.evaluate("document.getElementById('saved')?.textContent ?? ''") == SAVED

        await eventually(landed, "the second page")
        stopped = await client.call("browser_stop_recording", {})
        assert not stopped.is_error, text(stopped)
        code, said = text(stopped), everything_said(stopped)
        for secret in (PASSWORD, CODE, "hunter", "Mallory", "Trap"):
            assert secret not in said, said
        assert code.count("fill('<password withheld>')") == 2 and code.count("page.goto(") == 1, code
        assert ".contentFrame()." in code and ".press('Enter');" in code, code
        assert await badge(fox) == ""

        url, shown_saved = await replayed_state(code)
        assert url == f"{fox.site}/{DONE}" and shown_saved == SAVED


async def test_a_refusal_records_nothing_and_a_recording_ends_with_its_session(fox: Fox) -> None:
    async with fox.mcp("Nosy Fox", caps="devtools") as client:
        await opened_form(client, fox, "refused")
        started, _ = await start(fox, client, "#deny")
        assert started.is_error and text(started).startswith("not_approved:"), text(started)
        assert await badge(fox) == ""
        said = await refused(client, "browser_stop_recording", {}, "tool_failed")
        assert "no recording runs in the tab" in said
    async with fox.mcp("Leaving Fox", caps="devtools") as client:
        await opened_form(client, fox, "leave")
        started, _ = await start(fox, client, "#once")
        assert not started.is_error, text(started)
        assert await badge(fox) == "REC"

    async def cleared() -> bool:
        return await badge(fox) == ""

    await eventually(cleared, "the recording to end with the session")
