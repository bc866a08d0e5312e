"""End to end in headless Firefox ESR: a page's dialogs and console on the WebExtension page driver.

Firefox gives extensions no DevTools protocol, so the driver puts page hooks in the client's tabs
(``extension/actions/webext/page_hooks.js``): ``alert``, ``confirm`` and ``prompt`` hold the page on a
request the driver answers when ``browser_handle_dialog`` does, ``console.*`` is kept for
``browser_console_messages``. The extension's Firefox build runs with a probe beside its
background (``tests/support/firefox_actions_probe.js``) through which the test runs browser actions one
at a time, as a broker would; the pages are served on 127.0.0.1, with a frame from localhost
(another site).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from ..harness.chromium import change_settings
from ..harness.firefox import BidiError, Context, Firefox, extension_firefox
from ..harness.waiting import eventually
from .test_firefox_driver import firefox_copy, free_port, two_sites

pytestmark = pytest.mark.asyncio(loop_scope="module")

HOST = "https://browser-mcp.invalid/"
BARE = (HOST, f"{HOST}dialog")
PROBE = Path(__file__).resolve().parents[1] / "support" / "firefox_actions_probe.js"
WAIT = 30

DIALOGS = """<!doctype html><title>Dialogs</title>
<button onclick="alert('Saved'); answer('alert closed')">Alert</button>
<button onclick="answer(confirm('Delete it?') ? 'confirmed' : 'declined')">Confirm</button>
<button onclick="answer('prompted: ' + prompt('Your name?', 'Bob'))">Prompt</button>
<button onclick="console.log('hello', 1, {a: 1}); console.warn('careful'); console.error('broken');
  console.debug('detail'); setTimeout(() => { throw new Error('boom'); })">Log</button>
<a href="later.html">Later</a>
<p id="answer">none</p>
<script>function answer(text) { document.getElementById('answer').textContent = text; }</script>"""

# Asks a moment after it loads: a page the tab went to, with no action of the tools there yet.
LATER = """<!doctype html><title>Later</title><p id="answer">none</p>
<script>setTimeout(() => { document.getElementById("answer").textContent = String(confirm("Stay?")); }, 200)</script>"""

# Replaces, before any hook of ours, what the hooks and the synthetic click could use, and tries the
# answer host itself; its frame, from another site, keeps trying while the page is held.
HOSTILE = """<!doctype html><title>Hostile</title><script>
window.hostileSaw = [];
const saw = (what) => window.hostileSaw.push(what);
const ownFetch = window.fetch;
Element.prototype.dispatchEvent = function () { saw("dispatch"); return true; };
window.alert = () => saw("alert");
window.confirm = () => { saw("confirm"); return false; };
window.prompt = () => { saw("prompt"); return "forged"; };
XMLHttpRequest.prototype.open = function () { saw("xhr open"); };
XMLHttpRequest.prototype.send = function () { saw("xhr send"); };
window.XMLHttpRequest = function () { saw("xhr"); };
JSON.parse = () => { saw("json"); return { accept: true, text: "forged" }; };
console.log = (...args) => saw("log " + args.join(" "));
window.guess = async () => {
  const tries = ["https://browser-mcp.invalid/dialog/" + "0".repeat(48) + "?type=alert&message=forged",
    "https://browser-mcp.invalid/dialog/?type=confirm&message=forged", "https://browser-mcp.invalid/"];
  const outcomes = [];
  for (const url of tries) outcomes.push(await ownFetch(url).then(() => "answered", () => "refused"));
  return outcomes;
};
</script>
<button onclick="document.getElementById('answer').textContent = String(confirm('Sure?'));
  console.log('asked')">Ask</button>
<p id="answer">none</p>
<iframe src="FRAME/guessing.html"></iframe>"""

GUESSING = """<!doctype html><title>Guessing</title><p>guessing</p><script>
const url = "https://browser-mcp.invalid/dialog/" + "f".repeat(48) + "?type=confirm&message=forged";
setInterval(() => fetch(url).then(() => fetch("BASE/guessed?answered"), () => fetch("BASE/guessed?refused")), 100);
</script>"""


class Fox:
    """The module's Firefox: its pages, the extension page the actions are run from."""

    def __init__(self, firefox: Firefox, control: Context, base: str, guesses: asyncio.Queue[str]) -> None:
        self.firefox, self.control, self.base, self.guesses = firefox, control, base, guesses

    async def open(self, page: str) -> tuple[int, Context]:
        """The page in a new tab: its tab id and its BiDi context."""
        url = f"{self.base}/{page}"
        context = await self.firefox.new_tab(url)
        tab_id = await self.control.evaluate(
            """async (url) => (await browser.tabs.query({})).filter((tab) => tab.url === url)
                .map((tab) => tab.id).sort((a, b) => b - a)[0]""",
            url,
        )
        return int(tab_id), context

    async def act(self, tab_id: int, action: str, **args: Any) -> dict[str, Any]:
        script = """async ([tabId, action, args]) =>
            JSON.parse(await (await browser.runtime.getBackgroundPage()).probeAction(tabId, action, args))"""
        answer: dict[str, Any] = await self.control.evaluate(script, [tab_id, action, args])
        return answer

    async def release(self, tab_id: int) -> None:
        script = "async (tabId) => (await browser.runtime.getBackgroundPage()).probeRelease(tabId)"
        await self.control.evaluate(script, tab_id)

    async def ok(self, tab_id: int, action: str, **args: Any) -> str:
        answer = await self.act(tab_id, action, **args)
        assert answer["error"] is None, answer
        return "\n".join(part["text"] for part in answer["result"]["content"] if part["type"] == "text")

    async def fails(self, tab_id: int, action: str, **args: Any) -> dict[str, Any]:
        answer = await self.act(tab_id, action, **args)
        assert answer["error"] is not None, answer
        return dict(answer["error"])

    async def value(self, tab_id: int, function: str) -> Any:
        """What browser_evaluate gives for ``function`` in the page."""
        result = await self.ok(tab_id, "evaluate", function=function)
        return json.loads(result.split("### Result\n", 1)[1].split("\n###", 1)[0])

    async def click(self, tab_id: int, button: str) -> str:
        snapshot = await self.act(tab_id, "snapshot")
        assert snapshot["error"] is None, snapshot
        yaml = snapshot["page"]["yaml"]
        found = re.search(rf'button "{button}"[^\n]*\[ref=(\w+)\]', yaml)
        assert found, yaml
        ref = found.group(1)
        return await self.ok(tab_id, "click", target=ref)


@contextlib.asynccontextmanager
async def firefox_with_pages(folder: Path, prefs: dict[str, Any] | None = None) -> AsyncIterator[Fox]:
    """Firefox with the probe's copy of the extension, and this module's pages served."""
    page_port, frame_port = free_port(), free_port()
    base = f"http://127.0.0.1:{page_port}"
    pages = {
        "dialogs.html": DIALOGS,
        "later.html": LATER,
        "hostile.html": HOSTILE.replace("FRAME", f"http://localhost:{frame_port}"),
        "guessing.html": GUESSING.replace("BASE", base),
    }
    guesses: asyncio.Queue[str] = asyncio.Queue()

    async def page(request: web.Request) -> web.Response:
        text = pages.get(request.match_info["name"])
        return web.Response(text=text, content_type="text/html") if text else web.Response(status=404)

    async def guessed(request: web.Request) -> web.Response:
        guesses.put_nowait(request.query_string)
        return web.Response(text="ok", headers={"Access-Control-Allow-Origin": "*"})

    app = web.Application()
    app.router.add_get("/guessed", guessed)
    app.router.add_get("/{name}", page)
    extension = firefox_copy(folder, {}, probe=PROBE)
    # The extension's APIs in a page of its own that, unlike the popup, asks the background nothing.
    (extension / "blank.html").write_text("<!doctype html><title>Tests</title>")
    async with (
        two_sites(app, page_port, frame_port),
        extension_firefox(folder, extension=extension, prefs=prefs) as firefox,
    ):
        yield Fox(firefox, await firefox.extension_page("blank.html"), base, guesses)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fox]:
    async with firefox_with_pages(tmp_path_factory.mktemp("firefox_dialogs")) as world:
        yield world


async def shown(page: Context, before: str = "none") -> str:
    """The page's answer line once it is no longer ``before``: its script, held by a dialog, ran on.
    ``before`` is written into the script (an argument would go through the page's JSON.parse)."""
    script = f"""new Promise((done) => {{
        const line = document.getElementById("answer");
        const changed = () => line.textContent !== {json.dumps(before)} && done(line.textContent);
        new MutationObserver(changed).observe(line, {{ childList: true, characterData: true, subtree: true }});
        changed();
    }})"""
    async with asyncio.timeout(WAIT):
        return str(await page.evaluate(script))


async def test_an_alert_ends_the_click_holds_the_tab_and_is_answered_by_the_client(fox: Fox) -> None:
    tab_id, page = await fox.open("dialogs.html")
    clicked = await fox.click(tab_id, "Alert")
    assert '### Modal state\n- ["alert" dialog with message "Saved"]: can be handled by browser_handle_dialog' in (
        clicked
    ), clicked
    for action, args in (("snapshot", {}), ("evaluate", {"function": "() => 1"}), ("console_messages", {})):
        refused = await fox.fails(tab_id, action, **args)
        assert refused["code"] == "dialog_open" and f"browser_{action} cannot run" in refused["message"], refused
    # The page's own tools could not run either: refused at once rather than left to time out.
    script = """async ([tabId, tool]) =>
        JSON.parse(await (await browser.runtime.getBackgroundPage()).probePageTool(tabId, tool))"""
    tool = await fox.control.evaluate(script, [tab_id, "read_answer"])
    assert tool["code"] == "dialog_open" and "read_answer cannot run" in tool["message"], tool
    answered = await fox.ok(tab_id, "handle_dialog", accept=True)
    assert answered.startswith('### Result\nAccepted the "alert" dialog with message "Saved"'), answered
    assert await shown(page) == "alert closed"
    none = await fox.fails(tab_id, "handle_dialog", accept=True)
    assert none["code"] == "no_dialog" and "answered already" in none["message"], none


@pytest.mark.parametrize(("accept", "expected"), [(True, "confirmed"), (False, "declined")])
async def test_a_confirm_is_accepted_or_dismissed_as_the_client_says(fox: Fox, accept: bool, expected: str) -> None:
    tab_id, page = await fox.open("dialogs.html")
    assert '["confirm" dialog with message "Delete it?"]' in await fox.click(tab_id, "Confirm")
    answered = await fox.ok(tab_id, "handle_dialog", accept=accept)
    assert f'{"Accepted" if accept else "Dismissed"} the "confirm" dialog' in answered, answered
    assert await shown(page) == expected


async def test_a_prompt_gets_the_clients_text_or_null_when_dismissed(fox: Fox) -> None:
    tab_id, page = await fox.open("dialogs.html")
    assert '["prompt" dialog with message "Your name?"]' in await fox.click(tab_id, "Prompt")
    answered = await fox.ok(tab_id, "handle_dialog", accept=True, promptText="Ada")
    assert 'Accepted the "prompt" dialog with message "Your name?", answering "Ada"' in answered
    assert await shown(page) == "prompted: Ada"
    await fox.click(tab_id, "Prompt")
    await fox.ok(tab_id, "handle_dialog", accept=False)
    assert await shown(page, "prompted: Ada") == "prompted: null"


async def test_the_next_page_of_a_clients_tab_has_its_dialogs_held_before_any_action_there(fox: Fox) -> None:
    tab_id, page = await fox.open("dialogs.html")
    yaml = (await fox.act(tab_id, "snapshot"))["page"]["yaml"]
    link = re.search(r'link "Later" \[ref=(\w+)\]', yaml)
    assert link, yaml
    # The click's answer shows the next page, or (the page asking before it is read) its dialog.
    clicked = await fox.ok(tab_id, "click", target=link.group(1))
    assert re.search(r"- Page URL: \S+/later\.html\n", clicked), clicked
    # The page asks 200 ms after it loads: the wait begins before that, and is cut short by the
    # held dialog, or (on a machine slow enough) after, and is refused for it. Held either way.
    waited = await fox.act(tab_id, "wait_for", text="true")
    if waited["error"] is None:
        told = "\n".join(part["text"] for part in waited["result"]["content"] if part["type"] == "text")
        assert '["confirm" dialog with message "Stay?"]: can be handled by browser_handle_dialog' in told, told
    else:
        assert waited["error"]["code"] == "dialog_open", waited
        assert 'a "confirm" dialog with message "Stay?" is open there' in waited["error"]["message"], waited
    await fox.ok(tab_id, "handle_dialog", accept=True)
    assert await shown(page) == "true"


async def test_a_tab_the_client_let_go_of_shows_firefoxs_own_dialogs_to_the_person(fox: Fox) -> None:
    tab_id, page = await fox.open("dialogs.html")
    await fox.ok(tab_id, "snapshot")  # the hooks are in
    await fox.release(tab_id)
    bidi = fox.firefox.bidi
    async with bidi.events("browsingContext.userPromptOpened") as prompts:
        clicking = asyncio.ensure_future(page.click("button"))  # the person's click on "Alert"
        async with asyncio.timeout(WAIT):
            opened = await prompts.get()
        assert (opened["context"], opened["type"], opened["message"]) == (page.id, "alert", "Saved"), opened
        with contextlib.suppress(BidiError):  # WebDriver may have dismissed it already
            await bidi.call("browsingContext.handleUserPrompt", {"context": page.id, "accept": True})
        await clicking
    assert await shown(page) == "alert closed"
    assert (await fox.fails(tab_id, "handle_dialog", accept=True))["code"] == "no_dialog"


async def test_a_dialog_held_when_the_client_lets_go_of_its_tab_is_handed_to_the_person(fox: Fox) -> None:
    tab_id, page = await fox.open("dialogs.html")
    await fox.click(tab_id, "Confirm")
    bidi = fox.firefox.bidi
    async with bidi.events("browsingContext.userPromptOpened") as prompts:
        await fox.release(tab_id)
        async with asyncio.timeout(WAIT):
            opened = await prompts.get()
        assert (opened["context"], opened["type"], opened["message"]) == (page.id, "confirm", "Delete it?"), opened
        with contextlib.suppress(BidiError):
            await bidi.call("browsingContext.handleUserPrompt", {"context": page.id, "accept": True})
    # WebDriver, standing in for the person, dismisses a prompt itself unless told otherwise.
    assert await shown(page) in ("confirmed", "declined")
    assert (await fox.fails(tab_id, "handle_dialog", accept=True))["code"] == "no_dialog"


async def test_a_dialog_nobody_answers_is_dismissed_after_the_timeout_and_the_next_result_says_so(fox: Fox) -> None:
    tab_id, page = await fox.open("dialogs.html")
    await change_settings(fox.control, dialogTimeoutMs=1_000)  # type: ignore[arg-type]
    try:
        await fox.click(tab_id, "Confirm")
        assert await shown(page) == "declined"  # the page runs on once it is dismissed
    finally:
        await change_settings(fox.control, dialogTimeoutMs=60_000)  # type: ignore[arg-type]
    after = await fox.ok(tab_id, "snapshot")
    assert '- ["confirm" dialog with message "Delete it?": dismissed after 1 s without an answer]' in after, after


async def test_console_messages_lists_the_pages_console_and_uncaught_errors_by_level(fox: Fox) -> None:
    tab_id, page = await fox.open("dialogs.html")
    await fox.click(tab_id, "Log")
    async with asyncio.timeout(WAIT):  # the error is thrown from a timer
        await page.evaluate("new Promise((done) => setTimeout(done, 0))")
    listed = await fox.ok(tab_id, "console_messages", level="debug")
    assert "Total messages: 5 (Errors: 2, Warnings: 1)" in listed, listed
    lines = listed.split("\n\n", 1)[1].splitlines()
    assert lines[:4] == ['[LOG] hello 1 {"a":1}', "[WARNING] careful", "[ERROR] broken", "[DEBUG] detail"], lines
    assert lines[4].startswith("Uncaught Error: boom @ http://127.0.0.1:"), lines
    errors = await fox.ok(tab_id, "console_messages", level="error")
    assert 'Returning 2 messages for level "error"' in errors and "[LOG]" not in errors
    assert (await fox.fails(tab_id, "console_messages", level="loud"))["code"] == "invalid_arguments"


async def test_console_messages_are_kept_within_bounds_of_count_and_length(fox: Fox) -> None:
    tab_id, _ = await fox.open("dialogs.html")
    flood = '() => { for (let i = 0; i < 250; i++) console.log("n" + i); console.log("x".repeat(5000)); }'
    await fox.ok(tab_id, "evaluate", function=flood)
    listed = await fox.ok(tab_id, "console_messages")
    assert "Total messages: 200 (Errors: 0, Warnings: 0)" in listed, listed[:200]
    lines = listed.split("\n\n", 1)[1].splitlines()
    assert lines[0] == "[LOG] n51" and lines[-1] == f"[LOG] {'x' * 2000}…", (lines[0], len(lines[-1]))


async def test_a_hostile_page_that_replaced_alert_dispatch_and_xhr_first_still_has_its_dialog_held(
    fox: Fox,
) -> None:
    tab_id, page = await fox.open("hostile.html")
    assert '["confirm" dialog with message "Sure?"]' in await fox.click(tab_id, "Ask")
    # Its frame, on another site and not held, keeps calling the answer address meanwhile.
    drained(fox.guesses)
    async with asyncio.timeout(WAIT):
        assert await fox.guesses.get() == "refused"
    await fox.ok(tab_id, "handle_dialog", accept=False)
    assert await shown(page) == "false"
    # Read over BiDi: browser_evaluate's own way into the page is not what this tests.
    seen = await page.evaluate("window.hostileSaw")
    assert seen == ["log asked"], seen  # its own console.log, called by ours
    listed = await fox.ok(tab_id, "console_messages")
    assert "[LOG] asked" in listed, listed
    assert "answered" not in drained(fox.guesses)
    await page.close()


async def test_a_page_calling_the_answer_address_itself_is_refused_at_once_and_opens_no_dialog(fox: Fox) -> None:
    tab_id, page = await fox.open("hostile.html")
    await fox.ok(tab_id, "snapshot")  # the hooks are in
    assert await fox.value(tab_id, "() => window.guess()") == ["refused", "refused", "refused"]
    assert (await fox.fails(tab_id, "handle_dialog", accept=True))["code"] == "no_dialog"
    # Nor does the page's timeline, after a dialog of its own, show more than the bare address the
    # hooks hold it on (what it holds is in the body), nor the answer's.
    await fox.click(tab_id, "Ask")
    await fox.ok(tab_id, "handle_dialog", accept=False)
    assert await shown(page) == "false"
    timeline = await page.evaluate("performance.getEntries().map((entry) => entry.name)")
    ours = [name for name in timeline if "invalid" in name and "forged" not in name and name not in BARE]
    assert not ours, timeline
    await page.close()


def drained(queue: asyncio.Queue[str]) -> list[str]:
    taken = []
    while not queue.empty():
        taken.append(queue.get_nowait())
    return taken


async def test_hooks_put_in_before_the_event_page_unloaded_still_have_their_dialogs_held(tmp_path: Path) -> None:
    async with firefox_with_pages(tmp_path, {"extensions.background.idle.timeout": 2_000}) as fox:
        tab_id, page = await fox.open("dialogs.html")
        await fox.ok(tab_id, "snapshot")  # the hooks are in, with a secret of the event page's

        async def unloaded() -> bool:
            views = await fox.control.evaluate("browser.extension.getViews().map((view) => view.location.href)")
            return not [view for view in views if "background" in view]

        # Unloaded as its idle time or about:debugging would: with no broker joined, discovery's
        # failing probes reach the driver's webRequest listener, which Firefox counts as activity.
        await fox.firefox.unload_background()
        await eventually(unloaded, "the event page to unload", within=30)
        # The page asks with no action of the tools' to wake the event page: its request does.
        await page.evaluate("setTimeout(() => document.querySelectorAll('button')[1].click()), 'asked'")

        async def answered() -> str | None:
            answer = await fox.act(tab_id, "handle_dialog", accept=True)
            if answer["error"] and answer["error"]["code"] == "no_dialog":
                return None
            assert answer["error"] is None, answer
            return str(answer["result"]["content"][0]["text"])

        said = await eventually(answered, "the page's dialog to be held")
        assert 'Accepted the "confirm" dialog with message "Delete it?"' in said, said
        assert await shown(page) == "confirmed"
        # And the next action gives the hooks a new secret, which serves as well.
        assert '["confirm" dialog with message "Delete it?"]' in await fox.click(tab_id, "Confirm")
        await fox.ok(tab_id, "handle_dialog", accept=False)
        assert await shown(page, "confirmed") == "declined"
