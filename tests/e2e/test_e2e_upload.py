"""End to end: browser_file_upload answers the file chooser a click opened, with files from disk.

The real extension in headless Chromium, driven by ``tests/support/actions_world.py``'s fake broker
(its ``world``). The fake broker sends what the real one sends after checking the paths
(``broker/uploads.py``): absolute paths, and each file's name, size, flags and bytes, read when
checked. ``tests/pages/upload_page.html`` reads every file it gets back (name, type, size,
contents) and says when its chooser is cancelled.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import mimetypes
import os
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Page

from ..support import actions_world
from ..support.actions_world import World, ref_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

world = actions_world.world
PAGE = "upload_page.html"
OUTPUT = Path(os.environ.get("BROWSER_MCP_E2E_OUTPUT") or Path(__file__).parents[1] / "output") / "e2e_upload"
CHOOSER_LINE = "[File chooser"


@pytest_asyncio.fixture(loop_scope="module")
async def tab(world: World) -> AsyncIterator[tuple[int, Page]]:
    tab_id, page = await world.open(PAGE)
    yield tab_id, page
    await page.close()


def described(*paths: Path, flags: dict[Path, list[str]] | None = None) -> dict[str, Any]:
    """browser_file_upload's arguments as the broker sends them once it has checked and read the paths."""
    return {
        "paths": [str(path) for path in paths],
        "files": [
            {
                "path": str(path),
                "name": path.name,
                "size": path.stat().st_size,
                "flags": (flags or {}).get(path, []),
                "type": mimetypes.guess_type(path.name)[0] or "",
                "modified": path.stat().st_mtime_ns // 1_000_000,
                "data": base64.b64encode(path.read_bytes()).decode(),
            }
            for path in paths
        ],
    }


async def open_chooser(world: World, tab: int, line: str) -> str:
    """Click what opens a file chooser; the click's result."""
    ref = ref_of(await world.ok(tab, "snapshot"), line)
    return await world.ok(tab, "click", target=ref)


@contextlib.asynccontextmanager
async def denied_in_its_window(world: World, asked: Awaitable[dict[str, Any]]) -> AsyncIterator[Page]:
    """The approval window the upload ``asked`` opened, once it shows the call, for the test to
    read; then the person denies it there, and the upload fails as not_approved."""
    window = await world.context.wait_for_event(
        "page", lambda opened: "/person/approval.html" in opened.url, timeout=30_000
    )
    await window.wait_for_selector("#agent:not(:empty)")
    yield window
    with contextlib.suppress(Exception):  # the window closes itself as it answers
        await window.get_by_role("button", name="Deny").click()
    denied = await asked
    assert denied["error"]["code"] == "not_approved", denied


async def answer(page: Page, expected: str) -> None:
    await page.wait_for_function("(text) => document.getElementById('answer').textContent === text", arg=expected)


async def test_a_file_from_disk_reaches_the_page_whole(world: World, tab: tuple[int, Page], tmp_path: Path) -> None:
    tab_id, page = tab
    notes = tmp_path / "notes.txt"
    notes.write_text("first line\nsecond line, ünïcode\n", encoding="utf-8")
    clicked = await open_chooser(world, tab_id, 'button "Photo"')
    assert CHOOSER_LINE in clicked and "browser_file_upload" in clicked, clicked
    uploaded = await world.ok(tab_id, "file_upload", **described(notes))
    assert "Uploaded 1 file into the file chooser: notes.txt" in uploaded, uploaded
    assert CHOOSER_LINE not in uploaded, uploaded
    await answer(page, "photo: notes.txt")
    received = await page.evaluate("window.received")
    assert received == [
        {
            "input": "photo",
            "files": [
                {
                    "name": "notes.txt",
                    "type": "text/plain",
                    "size": notes.stat().st_size,
                    "text": notes.read_text(encoding="utf-8"),
                }
            ],
        }
    ]


async def test_a_button_that_opens_a_hidden_input_takes_several_files(
    world: World, tab: tuple[int, Page], tmp_path: Path
) -> None:
    tab_id, page = tab
    first, second = tmp_path / "a.csv", tmp_path / "b.bin"
    first.write_text("x,y\n1,2\n")
    second.write_bytes(bytes(range(256)) * 8)
    clicked = await open_chooser(world, tab_id, 'button "Attachments"')
    assert "takes several files" in clicked, clicked
    await world.ok(tab_id, "file_upload", **described(first, second))
    await answer(page, "attachments: a.csv, b.bin")
    files = (await page.evaluate("window.received"))[0]["files"]
    assert [(file["name"], file["size"]) for file in files] == [("a.csv", 8), ("b.bin", 2048)]
    # A single-file chooser opened by script through a button: one file at most.
    await open_chooser(world, tab_id, 'button "Choose a document"')
    refused = await world.fails(tab_id, "file_upload", **described(first, second))
    assert refused["code"] == "invalid_arguments" and "takes one file" in refused["message"], refused
    await world.ok(tab_id, "file_upload", **described(second))
    await answer(page, "document: b.bin")


async def test_an_empty_list_cancels_the_chooser(world: World, tab: tuple[int, Page]) -> None:
    tab_id, page = tab
    await open_chooser(world, tab_id, 'button "Photo"')
    cancelled = await world.ok(tab_id, "file_upload", paths=[])
    assert "Cancelled the file chooser" in cancelled, cancelled
    await answer(page, "photo: cancelled")
    assert await page.evaluate("window.received") == []
    assert await page.evaluate("document.getElementById('photo').files.length") == 0


async def test_an_upload_with_no_chooser_open_is_an_error(world: World, tab: tuple[int, Page], tmp_path: Path) -> None:
    tab_id, page = tab
    notes = tmp_path / "notes.txt"
    notes.write_text("never sent")
    refused = await world.fails(tab_id, "file_upload", **described(notes))
    assert refused["code"] == "no_file_chooser" and "click the page's file input" in refused["message"], refused
    # Answered once, a chooser is gone.
    await open_chooser(world, tab_id, 'button "Photo"')
    await world.ok(tab_id, "file_upload", **described(notes))
    again = await world.fails(tab_id, "file_upload", **described(notes))
    assert again["code"] == "no_file_chooser", again
    await answer(page, "photo: notes.txt")
    assert len(await page.evaluate("window.received")) == 1
    # Left open, the chooser is named in the tab's next results; a new page takes it away.
    await open_chooser(world, tab_id, 'button "Photo"')
    assert CHOOSER_LINE in await world.ok(tab_id, "snapshot")
    reloaded = await world.ok(tab_id, "reload")
    assert CHOOSER_LINE not in reloaded, reloaded
    gone = await world.fails(tab_id, "file_upload", **described(notes))
    assert gone["code"] == "no_file_chooser", gone


async def test_the_person_is_asked_before_an_upload_with_its_files_and_site(
    world: World, tab: tuple[int, Page], tmp_path: Path
) -> None:
    tab_id, page = tab
    report = tmp_path / "quarterly report.pdf"
    report.write_bytes(b"%PDF-1.4\n" + b"0" * 150_000)
    await open_chooser(world, tab_id, 'button "Photo"')
    # An upload counts as destructive: the default policy asks too, not only the stricter one.
    for policy in ("notReadOnly", "destructive"):
        await world.approval_policy(policy)
        try:
            asked = asyncio.ensure_future(world.act(tab_id, "file_upload", **described(report)))
            async with denied_in_its_window(world, asked) as window:
                assert await window.locator("#tool").text_content() == "browser_file_upload"
                assert await window.locator("#code-label").text_content() == "Files"
                assert await window.locator("#code").text_content() == f"quarterly report.pdf, 146.5 KB: {report}"
                assert await window.locator("#site").text_content() == world.site
                if policy == "notReadOnly":
                    OUTPUT.mkdir(parents=True, exist_ok=True)
                    await window.locator("body").screenshot(path=str(OUTPUT / "approval_upload.png"))
        finally:
            await world.approval_policy("never")
    assert await page.evaluate("window.received") == []
    # Denied, the chooser is still open for the client to answer otherwise.
    assert "Cancelled" in await world.ok(tab_id, "file_upload", paths=[])


async def test_the_approval_window_names_the_files_that_go_whatever_else_the_call_says(
    world: World, tab: tuple[int, Page], tmp_path: Path
) -> None:
    tab_id, page = tab
    secret = tmp_path / "secret.key"
    secret.write_text("key")
    await open_chooser(world, tab_id, 'button "Photo"')
    await world.approval_policy("destructive")
    try:
        # A description of some other, harmless file lends the upload neither its name nor its size.
        harmless = {"path": str(tmp_path / "cat.jpg"), "name": "cat.jpg", "size": 10}
        asked = asyncio.ensure_future(world.act(tab_id, "file_upload", paths=[str(secret)], files=[harmless]))
        async with denied_in_its_window(world, asked) as window:
            assert await window.locator("#code").text_content() == f"secret.key, size unknown: {secret}"
    finally:
        await world.approval_policy("never")
    assert await page.evaluate("window.received") == []


async def test_what_reaches_the_page_is_the_bytes_the_broker_read_not_what_the_path_holds_now(
    world: World, tab: tuple[int, Page], tmp_path: Path
) -> None:
    tab_id, page = tab
    cv = tmp_path / "cv.txt"
    cv.write_text("my cv")
    checked = described(cv)
    # Replaced on disk after the broker read it: the page still gets what was read (and shown).
    cv.unlink()
    cv.symlink_to(tmp_path / "token")
    (tmp_path / "token").write_text("the owner's token")
    # And a file large enough to reach the page in several parts.
    large = tmp_path / "large.txt"
    large.write_text("".join(f"line {number:07d}\n" for number in range(400_000)))
    await open_chooser(world, tab_id, 'button "Attachments"')
    await world.ok(
        tab_id,
        "file_upload",
        paths=[*checked["paths"], str(large)],
        files=[*checked["files"], *described(large)["files"]],
    )
    await answer(page, "attachments: cv.txt, large.txt")
    files = (await page.evaluate("window.received"))[-1]["files"]
    assert files[0] == {"name": "cv.txt", "type": "text/plain", "size": 5, "text": "my cv"}
    assert (files[1]["size"], files[1]["text"] == large.read_text()) == (large.stat().st_size, True)
    # Bytes that are not the size shown are refused.
    await open_chooser(world, tab_id, 'button "Photo"')
    forged = described(tmp_path / "token")
    forged["files"][0]["size"] = 3
    refused = await world.fails(tab_id, "file_upload", **forged)
    assert refused["code"] == "invalid_arguments" and "other bytes than its size" in refused["message"], refused
    assert "Cancelled" in await world.ok(tab_id, "file_upload", paths=[])


async def test_the_approval_window_lists_flagged_files_first(
    world: World, tab: tuple[int, Page], tmp_path: Path
) -> None:
    tab_id, _ = tab
    project = tmp_path / "project"
    project.mkdir()
    documents = []
    for number in range(40):
        document = project / f"chapter-{number:02d}.md"
        document.write_text(f"# Chapter {number}\n")
        documents.append(document)
    hidden = project / ".env"
    hidden.write_text("API_KEY=1234")
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("{}")
    # Buried among the others, as a client would bury them.
    paths = [*documents[:20], hidden, *documents[20:30], elsewhere, *documents[30:]]
    flags = {hidden: ["hidden"], elsewhere: ["outside the project folder", "through a symlink"]}
    await open_chooser(world, tab_id, 'button "Attachments"')
    await world.approval_policy("destructive")
    try:
        asked = asyncio.ensure_future(world.act(tab_id, "file_upload", **described(*paths, flags=flags)))
        async with denied_in_its_window(world, asked) as window:
            lines = (await window.locator("#code").text_content() or "").split("\n")
            assert lines[:2] == [
                f"⚠ hidden: .env, 12 B: {hidden}",
                f"⚠ outside the project folder, through a symlink: elsewhere.json, 2 B: {elsewhere}",
            ]
            assert len(lines) == 42 and all(not line.startswith("⚠") for line in lines[2:])
            OUTPUT.mkdir(parents=True, exist_ok=True)
            await window.locator("body").screenshot(path=str(OUTPUT / "approval_flagged_first.png"))
    finally:
        await world.approval_policy("never")
    assert "Cancelled" in await world.ok(tab_id, "file_upload", paths=[])


async def test_always_allow_given_on_the_site_never_covers_an_upload(
    world: World, tab: tuple[int, Page], tmp_path: Path
) -> None:
    tab_id, page = tab
    session = "mallory-session"
    link = world.link
    await link.send(
        {
            "type": "connect",
            "sessionId": session,
            "clientName": "Mallory",
            "credential": "mallory",
            "serverVersion": "fake",
        }
    )
    await link.wait_for("mallory's snapshot", lambda m: m.get("type") == "connected" and m.get("sessionId") == session)
    await open_chooser(world, tab_id, 'button "Photo"')  # the chooser waits for whoever holds the tab
    await world.claim(tab_id, session)
    # What "Always allow mallory on this site" leaves, given for a destructive tool there.
    await world.worker.evaluate(
        """async (site) => {
            const {settings} = await chrome.storage.local.get("settings");
            const changed = {approvalPolicy: "destructive", approvalTimeoutMs: 20000,
                             alwaysAllow: [{credential: "mallory", origin: site}]};
            await chrome.storage.local.set({settings: {...settings, ...changed}});
        }""",
        world.site,
    )
    calls = iter(range(1, 100))

    async def act(action: str, **args: Any) -> dict[str, Any]:
        call_id = f"mallory-{next(calls)}"
        frame = {"type": "browserAction", "sessionId": session, "callId": call_id, "tabId": tab_id, "action": action}
        await link.send({**frame, "args": args})
        return await link.wait_for(action, lambda m: m.get("type") == "toolResult" and m.get("callId") == call_id)

    try:
        # The site is allowed for mallory: a destructive tool runs without asking.
        assert (await act("evaluate", function="() => 6 * 7"))["error"] is None
        token = tmp_path / "server-4242.json"
        token.write_text('{"token": "the owner\'s"}')
        asked = asyncio.ensure_future(act("file_upload", **described(token)))
        async with denied_in_its_window(world, asked) as window:
            assert "via mallory" in await window.locator("#credential").inner_text()
            assert await window.locator("#always").is_hidden()  # an upload is allowed once at a time
    finally:
        await world.worker.evaluate(
            """async () => {
                const {settings} = await chrome.storage.local.get("settings");
                await chrome.storage.local.set({settings: {...settings, approvalPolicy: "never", alwaysAllow: []}});
            }"""
        )
        await world.claim(tab_id)
    assert await page.evaluate("window.received") == []
    assert "Cancelled" in await world.ok(tab_id, "file_upload", paths=[])
