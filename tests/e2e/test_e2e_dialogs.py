"""End to end: a page's dialogs, left to the client to answer with browser_handle_dialog.

The real extension in headless Chromium, driven by ``tests/support/actions_world.py``'s fake broker
(its ``world``, one browser for this module). ``tests/pages/dialogs_page.html`` opens an alert,
a confirm, a prompt, a leave-page prompt and a confirm from a timer, and shows the answer it got.

Playwright keeps a DevTools session on every page and dismisses a dialog itself unless someone
listens for it: the module listens (and answers nothing), so the extension's answers, and the
person's dialogs that nobody answers, are what the pages see.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Dialog, Page

from ..support import actions_world
from ..support.actions_world import SESSION, World, ref_of
from ..support.fake_broker import WAIT

pytestmark = pytest.mark.asyncio(loop_scope="module")

world = actions_world.world
PAGE = "dialogs_page.html"
# Long enough for the test's own calls while the dialog waits; far below the default minute.
SHORT_TIMEOUT_MS = 4_000


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def dialogs(world: World) -> AsyncIterator[asyncio.Queue[Dialog]]:
    """Every dialog the browser opens, as Playwright sees it; none is answered by Playwright."""
    opened: asyncio.Queue[Dialog] = asyncio.Queue()
    world.context.on("dialog", opened.put_nowait)
    yield opened
    world.context.remove_listener("dialog", opened.put_nowait)


@pytest_asyncio.fixture(loop_scope="module")
async def tab(world: World, dialogs: asyncio.Queue[Dialog]) -> AsyncIterator[tuple[int, Page]]:
    tab_id, page = await world.open(PAGE)
    yield tab_id, page
    await page.close()


async def next_dialog(dialogs: asyncio.Queue[Dialog]) -> Dialog:
    async with asyncio.timeout(WAIT):
        return await dialogs.get()


async def answer(page: Page, expected: str) -> None:
    await page.wait_for_function("(text) => document.getElementById('answer').textContent === text", arg=expected)


async def click(world: World, tab_id: int, button: str) -> str:
    """Click the button; the text of the result."""
    ref = ref_of(await world.ok(tab_id, "snapshot"), f'button "{button}"')
    return await world.ok(tab_id, "click", target=ref)


async def call_page_tool(world: World, tab_id: int, tool: str) -> dict[str, Any]:
    """Send a callTool for one of the page's own tools and return its toolResult."""
    call_id = f"c{next(world.calls)}"
    await world.link.send(
        {"type": "callTool", "sessionId": SESSION, "callId": call_id, "tabId": tab_id, "toolName": tool, "args": {}}
    )
    return await world.link.wait_for(
        f"the answer to {tool}", lambda m: m.get("type") == "toolResult" and m.get("callId") == call_id
    )


async def set_dialog_timeout(world: World, timeout_ms: int) -> None:
    await world.worker.evaluate(
        """async (dialogTimeoutMs) => {
            const {settings} = await chrome.storage.local.get("settings");
            await chrome.storage.local.set({settings: {...settings, dialogTimeoutMs}});
        }""",
        timeout_ms,
    )


async def test_an_alert_ends_the_call_and_holds_the_tab_until_answered(world: World, tab: tuple[int, Page]) -> None:
    tab_id, page = tab
    clicked = await click(world, tab_id, "Alert")
    line = '- ["alert" dialog with message "Saved"]: can be handled by browser_handle_dialog'
    assert f"### Modal state\n{line}" in clicked, clicked
    assert f"- Page URL: {world.url(PAGE)}" in clicked

    for action, args in (("snapshot", {}), ("evaluate", {"function": "() => 1"}), ("navigate", {"url": "about:blank"})):
        refused = await world.fails(tab_id, action, **args)
        assert refused["code"] == "dialog_open", refused
        assert (
            f'browser_{action} cannot run in tab {tab_id}: a "alert" dialog with message "Saved" is open'
            in (refused["message"])
        )
        assert "answer it with browser_handle_dialog" in refused["message"]
    # The page's own tools could not run either: refused at once rather than left to time out.
    tool = await call_page_tool(world, tab_id, "read_answer")
    assert tool["error"]["code"] == "dialog_open" and "read_answer cannot run" in tool["error"]["message"], tool

    answered = await world.ok(tab_id, "handle_dialog", accept=True)
    assert answered.startswith('### Result\nAccepted the "alert" dialog with message "Saved"\n### Page'), answered
    assert "alert closed" in answered  # the page after the dialog, its script run on
    await answer(page, "alert closed")
    assert (await call_page_tool(world, tab_id, "read_answer"))["result"] == "alert closed"


@pytest.mark.parametrize(("accept", "expected"), [(True, "confirmed"), (False, "declined")])
async def test_a_confirm_is_accepted_or_dismissed_as_the_client_says(
    world: World, tab: tuple[int, Page], accept: bool, expected: str
) -> None:
    tab_id, page = tab
    assert '["confirm" dialog with message "Delete it?"]' in await click(world, tab_id, "Confirm")
    answered = await world.ok(tab_id, "handle_dialog", accept=accept)
    assert answered.startswith(f'### Result\n{"Accepted" if accept else "Dismissed"} the "confirm" dialog'), answered
    await answer(page, expected)


async def test_a_prompt_is_answered_with_the_clients_text(world: World, tab: tuple[int, Page]) -> None:
    tab_id, page = tab
    assert '["prompt" dialog with message "Your name?"]' in await click(world, tab_id, "Prompt")
    answered = await world.ok(tab_id, "handle_dialog", accept=True, promptText="Ada")
    assert 'Accepted the "prompt" dialog with message "Your name?", answering "Ada"' in answered
    await answer(page, "prompted: Ada")


async def test_a_leave_page_prompt_is_answered_and_the_page_leaves(world: World, tab: tuple[int, Page]) -> None:
    tab_id, page = tab
    snapshot = await world.ok(tab_id, "snapshot")
    await world.ok(tab_id, "click", target=ref_of(snapshot, 'checkbox "Unsaved changes"'))
    clicked = await world.ok(tab_id, "click", target=ref_of(snapshot, 'link "Leave"'))
    assert '- ["beforeunload" dialog with message ' in clicked, clicked
    left = await world.ok(tab_id, "handle_dialog", accept=True)
    assert 'Accepted the "beforeunload" dialog' in left
    assert f"- Page URL: {world.url('dialogs_left.html')}" in left, left  # the page it went to
    await page.wait_for_url(world.url("dialogs_left.html"))


async def test_handle_dialog_without_a_dialog_or_twice_is_a_clear_error(world: World, tab: tuple[int, Page]) -> None:
    tab_id, page = tab
    none = await world.fails(tab_id, "handle_dialog", accept=True)
    assert none["code"] == "no_dialog" and none["message"] == f"no dialog is open in tab {tab_id}", none
    assert (await world.fails(tab_id, "handle_dialog"))["code"] == "invalid_arguments"

    await click(world, tab_id, "Confirm")
    bad: dict[str, Any] = {"accept": True, "promptText": 7}
    assert (await world.fails(tab_id, "handle_dialog", **bad))["code"] == "invalid_arguments"
    await world.ok(tab_id, "handle_dialog", accept=False)
    twice = await world.fails(tab_id, "handle_dialog", accept=True)
    assert twice["code"] == "no_dialog"
    assert 'the "confirm" dialog with message "Delete it?" was answered already' in twice["message"], twice
    await answer(page, "declined")
    assert "declined" in await world.ok(tab_id, "snapshot")  # the tab works as before


async def test_a_dialog_between_calls_is_held_then_dismissed_after_the_timeout_and_the_persons_left_alone(
    world: World, dialogs: asyncio.Queue[Dialog]
) -> None:
    """A timer's confirm in the client's tab waits for the client and, unanswered, is dismissed and
    reported; an earlier one in the person's tab is never touched."""
    while not dialogs.empty():  # the earlier tests' dialogs, answered by the client
        dialogs.get_nowait()
    await set_dialog_timeout(world, SHORT_TIMEOUT_MS)
    try:
        _, persons = await world.open(PAGE, claimed=False)
        tab_id, page = await world.open(PAGE)
        await world.ok(tab_id, "snapshot")  # the client has acted in its tab before the dialog
        await persons.evaluate("document.getElementById('later').click()")
        persons_dialog = await next_dialog(dialogs)
        assert persons_dialog.page == persons

        await page.evaluate("document.getElementById('later').click()")  # not a client's call
        await next_dialog(dialogs)
        refused = await world.fails(tab_id, "snapshot")
        assert refused["code"] == "dialog_open"
        assert '"confirm" dialog with message "Still there?" is open' in refused["message"], refused

        await answer(page, "gone")  # dismissed by the extension once the timeout passed
        after = await world.ok(tab_id, "snapshot")
        dismissed = f'- ["confirm" dialog with message "Still there?": dismissed after {SHORT_TIMEOUT_MS // 1000} s'
        assert f"### Modal state\n{dismissed} without an answer]" in after, after
        assert "Modal state" not in await world.ok(tab_id, "snapshot")  # said once
        late = await world.fails(tab_id, "handle_dialog", accept=True)
        assert late["code"] == "no_dialog" and "was dismissed after 4 s without an answer" in late["message"], late

        # The person's dialog opened first and is still open: only the person answers it.
        await persons_dialog.accept()
        await answer(persons, "still there")
        await page.close()
        await persons.close()
    finally:
        await set_dialog_timeout(world, 60_000)


async def test_a_dialog_of_a_frame_of_another_site_names_that_frames_site(
    world: World, dialogs: asyncio.Queue[Dialog]
) -> None:
    tab_id, page = await world.open(f"frames_other_site.html?page={PAGE}")
    try:
        frame_origin = world.url(PAGE).split("/", 3)[:3]
        frame_origin[2] = frame_origin[2].replace("127.0.0.1", "localhost")
        site = "/".join(frame_origin)
        frame = await asyncio.wait_for(frame_of(page, site), WAIT)
        await frame.wait_for_selector("#confirm")
        snapshot = await world.ok(tab_id, "snapshot")
        found = re.search(r'^\s*- button "Confirm" \[ref=(f\d+e\d+)\]', snapshot, re.M)
        assert found, snapshot
        clicked = await world.ok(tab_id, "click", target=found.group(1))
        # The page that asks is the frame's, not the tab's: the client is told whose it is.
        line = f'- ["confirm" dialog with message "Delete it?" in a frame from {site}]: can be handled by'
        assert line in clicked, clicked
        answered = await world.ok(tab_id, "handle_dialog", accept=True)
        assert f'Accepted the "confirm" dialog with message "Delete it?" in a frame from {site}' in answered, answered
        await frame.wait_for_function("() => document.getElementById('answer').textContent === 'confirmed'")
    finally:
        await page.close()


async def frame_of(page: Page, origin: str) -> Any:
    """The page's frame from ``origin``, once it is there."""
    while True:
        for frame in page.frames:
            if frame.url.startswith(origin):
                return frame
        await page.wait_for_event("framenavigated")
