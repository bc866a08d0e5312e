"""End to end in Chromium: browser_start_recording and browser_stop_recording through a real
broker, the real extension and the MCP SDK's client, on ``tests/pages/recording_form.html`` (a text
field, a select, a checkbox, a password field and a field of a one-time code, a submit button, a
cookie banner, a frame with a field of its own, a link to a second page).

The person agrees in the approval window (or refuses, and nothing is recorded); their actions are
made as a person's are (Playwright's trusted input); the code recorded, replayed by Playwright in a
plain Chromium, leaves the same page showing the same values. The passwords typed appear nowhere in
the answer, and events the page makes up are not recorded. While it records, the toolbar's badge
and the popup say so; the popup's Stop ends it, and so does the end of the client's session.
Pictures of the popup go to ``tests/output/e2e_recording/``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Page

from ..harness.page_server import serve_test_pages
from ..harness.waiting import WAIT, eventually
from ..support.extension_world import World, open_world
from ..support.mcp_clients import McpClient, refused, text
from ..support.person_world import answer, approval_window, open_popup, page_at
from ..support.recording import CODE, COMMENT, DONE, FORM, NAME, PASSWORD, SAVED, everything_said, replayed_state

pytestmark = pytest.mark.asyncio(loop_scope="module")

OUTPUT = Path(os.environ.get("BROWSER_MCP_E2E_OUTPUT") or Path(__file__).parents[1] / "output") / "e2e_recording"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    async with (
        serve_test_pages() as site,
        open_world(tmp_path_factory.mktemp("e2e-recording"), site, World, probed=False) as world,
    ):
        yield world


async def open_form(client: McpClient, world: World, tag: str) -> Page:
    """The form in a tab of the client's own, as the person's Playwright page."""
    url = f"{world.site}/{FORM}?{tag}"
    await client.call_json("tabs", {"action": "open", "url": url, "focus": False})
    page = await page_at(world, url)
    await page.frame_locator("iframe").locator("#comment").wait_for()
    return page


async def start(world: World, client: McpClient, decision: str = "Allow once") -> tuple[Any, str]:
    """browser_start_recording, answered by the person in the window: its result, what the window said."""
    call = asyncio.ensure_future(client.call("browser_start_recording", {}))
    window = await approval_window(world, call)
    shown = await window.locator("body").inner_text()
    assert not await window.get_by_role("button", name="Always allow").is_visible()
    await answer(window, decision)
    async with asyncio.timeout(WAIT):
        return await call, shown


async def badge(world: World) -> tuple[str, str]:
    text_: str = await world.worker.evaluate("chrome.action.getBadgeText({})")
    title: str = await world.worker.evaluate("chrome.action.getTitle({})")
    return text_, title


async def fill_in_as_the_person(page: Page) -> None:
    """The person's own input (trusted, as Chromium's input is), the page forging some between."""
    await page.get_by_role("button", name="OK").click()
    await page.locator("#name").click()
    await page.keyboard.type(NAME)
    # The page makes up events of its own: a field "typed", a button "clicked", a key "pressed".
    await page.evaluate(
        """() => {
        const name = document.getElementById("name");
        const was = name.value;
        name.value = "Mallory";
        name.dispatchEvent(new InputEvent("input", { bubbles: true }));
        name.value = was;
        document.getElementById("trap").click();
        name.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
        document.getElementById("agree").dispatchEvent(new Event("change", { bubbles: true }));
    }"""
    )
    await page.locator("#colour").focus()
    await page.keyboard.press("ArrowDown")
    await page.locator("#agree").click()
    await page.frame_locator("iframe").locator("#comment").click()
    await page.keyboard.type(COMMENT)
    await page.locator("#code").click()
    await page.keyboard.type(CODE)
    await page.locator("#password").click()
    await page.keyboard.type(PASSWORD)
    await page.keyboard.press("Enter")
    await page.get_by_text(f"Saved {NAME}").wait_for()
    await page.get_by_role("link", name="Next page").click()
    await page.wait_for_url(f"**/{DONE}")
    await page.get_by_text(SAVED).wait_for()


async def test_the_recording_tools_are_listed_to_a_client_of_the_devtools_group(world: World) -> None:
    async with world.mcp("plain") as plain, world.mcp("recorder", caps="devtools") as recorder:
        assert "browser_start_recording" not in await plain.tool_names()
        tools = await recorder.tools()
        for name in ("browser_start_recording", "browser_stop_recording"):
            assert set(tools[name].input_schema["properties"]) == {"tab"}, name


async def test_the_persons_actions_replay_to_the_same_page_and_no_password_leaves(world: World) -> None:
    async with world.mcp("Demo Agent", caps="devtools") as client:
        page = await open_form(client, world, "whole")
        assert await badge(world) == ("", (await badge(world))[1])
        started, shown = await start(world, client)
        assert not started.is_error, text(started)
        assert "Demo Agent" in shown and "Sign up" in shown and "password" in shown.lower(), shown

        # The toolbar and the popup say so while it records.
        shown_badge, title = await badge(world)
        assert shown_badge == "REC" and "Demo Agent" in title and "Sign up" in title, title
        popup = await open_popup(world)
        line = popup.get_by_text("Recording for Demo Agent in Sign up")
        await line.wait_for()
        await popup.wait_for_timeout(150)
        await popup.locator("body").screenshot(path=str(OUTPUT / "popup-recording.png"))

        await fill_in_as_the_person(page)
        stopped = await client.call("browser_stop_recording", {})
        assert not stopped.is_error, text(stopped)
        code, said = text(stopped), everything_said(stopped)

        # Nothing of the passwords leaves the page, and nothing the page made up is recorded.
        for secret in (PASSWORD, CODE, "hunter", "4242"):
            assert secret not in said, said
        assert "Mallory" not in said and "Trap" not in said and "Escape" not in said, code
        assert code.count("fill('<password withheld>')") == 2, code
        assert "withheld" in said.split(code, 1)[1]
        # The page at the start is the one goto; the link's page comes of the click.
        assert code.count("page.goto(") == 1 and code.startswith(f"await page.goto('{world.site}/{FORM}?whole');")
        assert f"await page.getByLabel('Name').fill('{NAME}');" in code, code
        assert "await page.getByRole('checkbox', { name: 'I agree' }).check();" in code, code
        assert ".selectOption('green');" in code and ".press('Enter');" in code, code
        assert f".contentFrame().getByLabel('Comment').fill('{COMMENT}');" in code, code
        assert "getByRole('button', { name: 'Save' })" not in code, "the Enter's submission is the press's"
        assert "await page.getByRole('link', { name: 'Next page' }).click();" in code, code

        # The indicator is gone with the recording.
        assert (await badge(world))[0] == ""
        await line.wait_for(state="detached")
        await popup.close()

        url, saved = await replayed_state(code)
        assert url == page.url and saved == SAVED == await page.locator("#saved").inner_text()


async def test_a_refusal_records_nothing(world: World) -> None:
    async with world.mcp("Nosy Agent", caps="devtools") as client:
        page = await open_form(client, world, "refused")
        started, _ = await start(world, client, "Deny")
        assert started.is_error and text(started).startswith("not_approved:"), text(started)
        assert (await badge(world))[0] == ""
        await page.locator("#name").click()
        await page.keyboard.type(NAME)
        said = await refused(client, "browser_stop_recording", {}, "tool_failed")
        assert "no recording runs in the tab" in said and NAME not in said


async def test_the_popups_stop_ends_it_and_the_client_hears_the_person_stopped_it(world: World) -> None:
    async with world.mcp("Stopped Agent", caps="devtools") as client:
        page = await open_form(client, world, "stop")
        started, _ = await start(world, client)
        assert not started.is_error, text(started)
        await page.locator("#name").click()
        await page.keyboard.type("Grace")
        popup = await open_popup(world)
        await popup.get_by_text("Recording for Stopped Agent").wait_for()
        await popup.get_by_role("button", name="Stop").click()
        await popup.get_by_text("Recording for Stopped Agent").wait_for(state="detached")

        async def cleared() -> bool:
            return (await badge(world))[0] == ""

        await eventually(cleared, "the badge to go with the recording")
        await popup.close()
        # What the person does after Stop is not recorded.
        await page.locator("#agree").click()
        stopped = await client.call("browser_stop_recording", {})
        assert not stopped.is_error, text(stopped)
        assert ".fill('Grace');" in text(stopped) and "check()" not in text(stopped)
        assert "The person stopped the recording" in everything_said(stopped)


async def test_a_recording_left_running_ends_with_the_clients_session(world: World) -> None:
    async with world.mcp("Leaving Agent", caps="devtools") as client:
        page = await open_form(client, world, "leave")
        started, _ = await start(world, client)
        assert not started.is_error, text(started)
        assert (await badge(world))[0] == "REC"

    async def cleared() -> bool:
        shown, title = await badge(world)
        return shown == "" and "Leaving Agent" not in title

    await eventually(cleared, "the recording to end with the session")
    popup = await open_popup(world)
    await popup.get_by_role("heading", name="AI sessions").wait_for()
    assert await popup.get_by_text("Recording for").count() == 0
    await popup.close()
    # The person's typing is theirs again: a new client of the tab finds no recording.
    await page.locator("#name").click()
    await page.keyboard.type("after")
    async with world.mcp("Next Agent", caps="devtools") as client:
        await client.call_json("tabs", {"action": "claim", "tab": (await world.tab_at(page.url))["id"]})
        said = await refused(client, "browser_stop_recording", {}, "tool_failed")
        assert "no recording runs in the tab" in said
