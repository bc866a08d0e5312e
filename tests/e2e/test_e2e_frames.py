"""End to end: frames in the snapshot and input into them, carried out by the real extension.

The browser, fake broker and page server are ``tests/support/actions_world.py``'s (its ``world``); a
second server on another port of 127.0.0.1 serves the same pages as another origin of the same
site, and ``localhost`` reaches the first server as another site (an out-of-process frame). The
pages are ``tests/pages/frames_*.html``: each frame's form posts what it got to the top page,
which keeps it in ``window.messages``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import pytest_asyncio
from playwright.async_api import Dialog, Frame, Page
from playwright.async_api import Error as PlaywrightError

from ..harness.page_server import serve_test_pages
from ..harness.waiting import eventually
from ..support import actions_world
from ..support.actions_world import World
from ..support.page_functions import matched_ref

pytestmark = pytest.mark.asyncio(loop_scope="module")

# The browser of actions_world, one for this module.
world = actions_world.world


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def other_origin() -> AsyncIterator[str]:
    """``tests/pages/`` again, on another port: another origin of the same site."""
    async with serve_test_pages() as url:
        yield url


# The frames' names: of this origin, of another origin of this site, of another site (out of
# process), and frames nested in them: one of this origin, one of another site inside the frame
# of the other port, and inside that one a frame of this site again (out of process in out of process).
# Resolves once the frame has been drawn twice: its first drawing is done.
TWO_DRAWINGS = "() => new Promise((drawn) => requestAnimationFrame(() => requestAnimationFrame(drawn)))"
FRAMES = ["same", "port", "site", "same-nested", "site-nested", "port-nested", "port-nested-nested"]


async def open_frames(world: World, other_origin: str) -> tuple[int, Page]:
    tab, page = await world.open(f"frames_page.html?other={other_origin}")

    async def loaded() -> bool:
        names = [await frame.evaluate("document.getElementById('where')?.textContent ?? ''") for frame in page.frames]
        return sorted(names) == sorted(["", *FRAMES])

    await eventually(loaded, "every frame to load")
    # And drawn: the browser sends a mouse move into a frame of another process by where it last
    # drew that frame, so input before a nested frame's first drawing goes to the frame around it.
    # Only those of another site than the frame around them have a process of their own; a frame
    # of the same site as its out-of-process parent may wait seconds for its first drawing after
    # the tab before closed, and input reaches it through its parent's process anyway.
    for frame in page.frames:
        if frame.parent_frame and urlsplit(frame.url).hostname != urlsplit(frame.parent_frame.url).hostname:
            await frame.evaluate(TWO_DRAWINGS)
    return tab, page


@pytest_asyncio.fixture(loop_scope="module")
async def frames(world: World, other_origin: str) -> AsyncIterator[tuple[int, Page]]:
    tab, page = await open_frames(world, other_origin)
    yield tab, page
    await page.close()


def frame_ref(snapshot: str, line: str) -> str:
    """The ref (of a frame's element: ``f2e3``) on the snapshot line that starts with ``line``."""
    return matched_ref(snapshot, rf"^\s*- {re.escape(line)}.*?\[ref=((?:f\d+)?e\d+)\]", f"line {line!r} with a ref")


def form_refs(snapshot: str, name: str) -> dict[str, str]:
    """The refs of the form in frame ``name``, by their snapshot lines: its textbox "Name in
    ``name``", checkbox "Agree", combobox "Size" and button "Send" (each one there)."""
    field = frame_ref(snapshot, f'textbox "Name in {name}"')
    prefix = field.split("e")[0]
    own = re.findall(rf'- (checkbox "Agree"|combobox "Size"|button "Send") \[ref=({prefix}e\d+)\]', snapshot)
    refs = {f'textbox "Name in {name}"': field, **dict(own)}
    assert len(refs) == 4, snapshot
    return refs


async def messages(page: Page) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = await page.evaluate("window.messages")
    return found


def under(snapshot: str, line: str) -> str:
    """The lines under the snapshot line that starts with ``line`` (after its indent and dash)."""
    found = re.search(rf"^( *)- {re.escape(line)}.*:\n((?:\1  .*\n)+)", snapshot, re.M)
    assert found, f"no line {line!r} with content under it in:\n{snapshot}"
    return found.group(2)


async def test_the_snapshot_shows_each_frames_content_under_its_line(world: World, frames: tuple[int, Page]) -> None:
    tab, _ = frames
    snapshot = await world.ok(tab, "snapshot")
    same = under(snapshot, 'iframe "Same origin"')
    assert re.search(r'^ {2}\s*- textbox "Name in same" \[ref=f\d+e\d+\]$', same, re.M), snapshot
    # The nested frame, inside the first one, one step deeper than its iframe line.
    nested = under(same, 'iframe "Nested"')
    assert re.search(r'^ {4}\s*- textbox "Name in same-nested" \[ref=f\d+e\d+\]$', nested, re.M), snapshot
    # A frame of another origin says which; the page's own do not.
    origin = r"\[origin=http://127\.0\.0\.1:\d+\]"
    site = re.escape(world.site.replace("127.0.0.1", "localhost"))
    assert re.search(rf'^- iframe "Other origin" \[ref=e\d+\] {origin}:$', snapshot, re.M), snapshot
    assert not re.search(r'"Same origin".*\[origin=', snapshot) and "[origin=" not in same, snapshot
    # Frames nested in a frame are labelled by the origin of the frame around them.
    port = under(snapshot, 'iframe "Other origin"')
    assert re.search(rf'^  +- iframe "Nested" \[ref=f\d+e\d+\] \[origin={site}\]:$', port, re.M), snapshot
    assert re.search(rf'^    +- iframe "Nested" \[ref=f\d+e\d+\] {origin}:$', port, re.M), snapshot
    # The frame of another site, out of process, as well.
    assert re.search(rf'^- iframe "Other site" \[ref=e\d+\] \[origin={site}\]:$', snapshot, re.M), snapshot
    for name in FRAMES:
        frame_ref(snapshot, f'textbox "Name in {name}"')
    refs = re.findall(r"\[ref=([^\]]+)\]", snapshot)
    assert len(refs) == len(set(refs)), "every ref names one element of one frame"


@pytest.mark.parametrize("name", FRAMES)
async def test_type_and_click_reach_a_frame_as_trusted_input(world: World, frames: tuple[int, Page], name: str) -> None:
    tab, page = frames
    snapshot = await world.ok(tab, "snapshot")
    field = frame_ref(snapshot, f'textbox "Name in {name}"')
    await world.ok(tab, "type", target=field, text=f"Ada in {name}")
    # The button under this frame's field: its frame's prefix.
    prefix = field.split("e")[0]
    send = re.search(rf'- button "Send" \[ref=({prefix}e\d+)\]', snapshot)
    assert send, snapshot
    await world.ok(tab, "click", target=send.group(1))

    async def sent() -> list[dict[str, Any]] | None:
        return [m for m in await messages(page) if m.get("frame") == name and "value" in m] or None

    assert await eventually(sent, f"the {name} frame's form to send") == [
        {"frame": name, "value": f"Ada in {name}", "isTrusted": True}
    ]


def frame_of(page: Page, name: str) -> Frame:
    """The frame whose form is named ``name``."""
    for frame in page.frames:
        if f"name={name}&" in frame.url + "&":
            return frame
    raise AssertionError(f"no frame {name} in {[frame.url for frame in page.frames]}")


@pytest.mark.parametrize("name", ["same", "port", "site"])
async def test_a_ref_in_a_frame_that_navigated_or_was_removed_is_stale(
    world: World, other_origin: str, name: str
) -> None:
    tab, page = await open_frames(world, other_origin)
    try:
        snapshot = await world.ok(tab, "snapshot")
        field = frame_ref(snapshot, f'textbox "Name in {name}"')
        send = frame_ref(snapshot, f'textbox "Name in {name}-nested"')
        await frame_of(page, name).evaluate("location.search = location.search.replace(/name=[^&]*/, 'name=moved')")

        async def moved() -> bool:
            for frame in page.frames:
                if "name=moved" in frame.url:
                    with contextlib.suppress(PlaywrightError):  # still loading
                        return bool(await frame.evaluate("document.getElementById('where')?.textContent"))
            return False

        await eventually(moved, "the frame to navigate")
        stale = await world.fails(tab, "type", target=field, text="late")
        assert stale["code"] == "stale_ref", stale
        assert "navigated or was removed" in stale["message"] and "browser_snapshot" in stale["message"], stale
        # So is a ref of a frame that was inside it.
        assert (await world.fails(tab, "click", target=send))["code"] == "stale_ref"
        # The frame's new document has refs of its own, which work.
        again = await world.ok(tab, "snapshot")
        fresh = frame_ref(again, 'textbox "Name in moved"')
        assert fresh != field
        await world.ok(tab, "type", target=fresh, text="on time")
        assert await frame_of(page, "moved").evaluate("document.getElementById('name').value") == "on time"
        assert (await world.fails(tab, "type", target=field, text="late"))["code"] == "stale_ref"

        await page.evaluate("(id) => document.getElementById(id).remove()", name)
        removed = await world.fails(tab, "type", target=fresh, text="gone")
        assert removed["code"] == "stale_ref" and "navigated or was removed" in removed["message"], removed
    finally:
        await page.close()


async def test_a_click_in_an_out_of_process_frame_sets_no_timer_in_the_page(
    world: World, frames: tuple[int, Page]
) -> None:
    """The wait for the scroll into the frame to land runs in the tools' world: with the page's own
    setTimeout it passed for a timer the click made the page set, and held every such click's answer
    a second for a navigation that never came."""
    tab, page = frames
    await page.evaluate("""() => {
        window.timers = [];
        const pagesOwn = window.setTimeout;
        window.setTimeout = function (handler, ms, ...rest) {
            window.timers.push(ms);
            return pagesOwn.call(this, handler, ms, ...rest);
        };
    }""")
    snapshot = await world.ok(tab, "snapshot")
    field = frame_ref(snapshot, 'textbox "Name in site"')
    await world.ok(tab, "click", target=field)
    await world.ok(tab, "type", target=field, text="Ada")
    assert await frame_of(page, "site").input_value("#name") == "Ada"
    assert await page.evaluate("window.timers") == []


async def test_target_set_to_an_iframes_ref_snapshots_that_frame(world: World, frames: tuple[int, Page]) -> None:
    tab, _ = frames
    snapshot = await world.ok(tab, "snapshot")
    for title, name in (("Same origin", "same"), ("Other site", "site")):
        part = await world.ok(tab, "snapshot", target=frame_ref(snapshot, f'iframe "{title}"'))
        field = f'textbox "Name in {name}"'
        assert f"{field} [ref={frame_ref(snapshot, field)}]" in part, part
        assert f'textbox "Name in {name}-nested"' in part, part
        assert "Frames page" not in part and 'iframe "Other origin"' not in part, part
    # And an element inside a frame: its part of that frame.
    inner = await world.ok(tab, "snapshot", target=frame_ref(snapshot, 'iframe "Nested"'))
    assert 'textbox "Name in same-nested"' in inner and '"Name in same"' not in inner, inner


@pytest.mark.parametrize("name", ["port", "site", "site-nested", "port-nested-nested"])
async def test_hover_fill_form_select_option_and_evaluate_reach_a_frame(
    world: World, frames: tuple[int, Page], name: str
) -> None:
    tab, page = frames
    refs = form_refs(await world.ok(tab, "snapshot"), name)
    field = refs[f'textbox "Name in {name}"']
    await world.ok(tab, "hover", target=refs['button "Send"'])
    fields = [
        {"name": "Name", "type": "textbox", "target": field, "value": "Grace"},
        {"name": "Agree", "type": "checkbox", "target": refs['checkbox "Agree"'], "value": "true"},
    ]
    await world.ok(tab, "fill_form", fields=fields)
    await world.ok(tab, "select_option", target=refs['combobox "Size"'], values=["Large"])

    async def heard() -> list[dict[str, Any]] | None:
        found = [m for m in await messages(page) if m.get("frame") == name]
        return found if len(found) >= 3 else None

    assert await eventually(heard, f"the {name} frame to hear the mouse and the form") == [
        {"frame": name, "hovered": True, "isTrusted": True},
        {"frame": name, "agreed": True, "isTrusted": True},
        {"frame": name, "size": "Large"},
    ]
    value = await world.ok(tab, "evaluate", function="(element) => element.value", target=field)
    assert "Grace" in value, value


async def test_a_frame_added_after_load_shows_in_the_next_snapshot(world: World, other_origin: str) -> None:
    tab, page = await open_frames(world, other_origin)
    try:
        await world.ok(tab, "snapshot")
        await page.evaluate(
            """(src) => new Promise((loaded) => {
                const frame = Object.assign(document.createElement("iframe"), {title: "Late", src});
                frame.onload = loaded;
                document.body.append(frame);
            })""",
            world.url("frames_inner.html?name=late").replace("127.0.0.1", "localhost"),
        )
        snapshot = await world.ok(tab, "snapshot")
        await world.ok(tab, "type", target=frame_ref(snapshot, 'textbox "Name in late"'), text="in time")
        assert await frame_of(page, "late").evaluate("document.getElementById('name').value") == "in time"
    finally:
        await page.close()


# The colour of the frames' Send buttons.
SEND_COLOUR = (0, 170, 255)


@pytest.mark.parametrize("name", ["same", "site", "site-nested", "port-nested-nested"])
async def test_a_screenshot_of_an_element_in_a_frame_shows_that_element(
    world: World, frames: tuple[int, Page], name: str
) -> None:
    tab, _ = frames
    send = form_refs(await world.ok(tab, "snapshot"), name)['button "Send"']
    answer = await world.act(tab, "take_screenshot", target=send)
    assert answer.get("error") is None, answer
    png = answer["result"]["content"][1]["data"]
    share: float = await world.worker.evaluate(
        """async ([png, [r, g, b]]) => {
          const image = await createImageBitmap(await (await fetch("data:image/png;base64," + png)).blob());
          const canvas = new OffscreenCanvas(image.width, image.height);
          const paint = canvas.getContext("2d");
          paint.drawImage(image, 0, 0);
          const { data } = paint.getImageData(0, 0, image.width, image.height);
          let alike = 0;
          for (let i = 0; i < data.length; i += 4) {
            if (Math.abs(data[i] - r) + Math.abs(data[i + 1] - g) + Math.abs(data[i + 2] - b) <= 12) alike++;
          }
          return alike / (data.length / 4);
        }""",
        [png, list(SEND_COLOUR)],
    )
    # The button's text takes some of its pixels.
    assert share > 0.6, f"the screenshot is not of the button: {share:.0%} of it has its colour"


async def test_a_snapshot_with_a_depth_goes_into_frames_no_deeper(world: World, frames: tuple[int, Page]) -> None:
    tab, _ = frames
    # The page's iframes (0) and one level of each frame (1): its fields, and its own frame's line.
    outline = await world.ok(tab, "snapshot", depth=1)
    assert re.search(
        r'^- iframe "Other site" .*:\n  - textbox "Name in site" \[ref=f\d+e\d+\]\n  - checkbox "Agree"',
        outline,
        re.M,
    ), outline
    assert "option" not in outline and not re.search(r"^ {4}", outline, re.M), outline
    # The nested frame's line is at the last depth: it shows, without its content.
    assert re.search(r'^  - iframe "Nested" \[ref=f\d+e\d+\]$', outline, re.M), outline
    assert "same-nested" not in outline, outline
    assert 'textbox "Name in same-nested"' in await world.ok(tab, "snapshot")


@pytest.mark.parametrize("title", ["Same lists", "Other lists"])
async def test_drag_moves_an_item_between_lists_in_a_frame(world: World, title: str) -> None:
    tab, page = await world.open("frames_drag.html")
    try:

        async def loaded() -> Frame | None:
            for frame in page.frames[1:]:
                if ("localhost" in frame.url) == (title == "Other lists"):
                    with contextlib.suppress(PlaywrightError):  # still loading
                        if await frame.evaluate("Boolean(document.getElementById('basket'))"):
                            return frame
            return None

        lists = await eventually(loaded, "the lists to load")
        whole = await world.ok(tab, "snapshot")
        snapshot = await world.ok(tab, "snapshot", target=frame_ref(whole, f'iframe "{title}"'))
        apple = frame_ref(snapshot, "listitem")
        basket = frame_ref(snapshot, 'list "Basket"')
        assert re.search(rf"- listitem \[ref={apple}\]: Apple", snapshot), snapshot
        await world.ok(tab, "drag", startTarget=apple, endTarget=basket)
        order = await lists.evaluate("[...document.getElementById('basket').children].map((e) => e.id)")
        assert order == ["bread", "apple"]
    finally:
        await page.close()


@pytest.mark.parametrize("name", ["same", "site", "port-nested-nested"])
async def test_press_key_reaches_the_focused_element_in_a_frame(
    world: World, frames: tuple[int, Page], name: str
) -> None:
    tab, page = frames
    snapshot = await world.ok(tab, "snapshot")
    field = frame_ref(snapshot, f'textbox "Name in {name}"')
    await world.ok(tab, "type", target=field, text="Ada")
    await world.ok(tab, "press_key", key="Enter")

    async def entered() -> list[dict[str, Any]] | None:
        return [m for m in await messages(page) if m.get("frame") == name and "entered" in m] or None

    assert await eventually(entered, f"the {name} frame to hear Enter") == [
        {"frame": name, "entered": "Ada", "isTrusted": True}
    ]


async def open_in_other_site(world: World, page_name: str, ready: str) -> tuple[int, Page, Frame]:
    """``tests/pages/page_name`` in a frame of another site (out of process), once ``ready`` holds there."""
    tab, page = await world.open(f"frames_other_site.html?page={page_name}")

    async def loaded() -> Frame | None:
        for frame in page.frames[1:]:
            with contextlib.suppress(PlaywrightError):  # still loading
                if "localhost" in frame.url and await frame.evaluate(ready):
                    return frame
        return None

    return tab, page, await eventually(loaded, f"{page_name} to load in the frame")


async def test_a_file_chooser_in_an_out_of_process_frame_takes_a_file(world: World, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("in the frame\n")
    tab, page, frame = await open_in_other_site(world, "upload_page.html", "Boolean(window.received)")
    try:
        snapshot = await world.ok(tab, "snapshot")
        clicked = await world.ok(tab, "click", target=frame_ref(snapshot, 'button "Photo"'))
        assert "[File chooser]" in clicked, clicked
        # As the broker sends it: the bytes it read, which the extension sets in the frame's own input.
        read = {"path": str(notes), "name": "notes.txt", "size": 13, "type": "text/plain"}
        read["data"] = "aW4gdGhlIGZyYW1lCg=="
        paths = {"paths": [str(notes)], "files": [read]}
        uploaded = await world.ok(tab, "file_upload", **paths)
        assert "Uploaded 1 file into the file chooser: notes.txt" in uploaded, uploaded
        await frame.wait_for_function("document.getElementById('answer').textContent === 'photo: notes.txt'")
        assert (await frame.evaluate("window.received"))[0]["files"][0]["text"] == "in the frame\n"
        # Cancelled, the frame's chooser hears so.
        await world.ok(tab, "click", target=frame_ref(snapshot, 'button "Photo"'))
        assert "Cancelled" in await world.ok(tab, "file_upload", paths=[])
        await frame.wait_for_function("document.getElementById('answer').textContent === 'photo: cancelled'")
    finally:
        await page.close()


@pytest.mark.parametrize(("accept", "expected"), [(True, "confirmed"), (False, "declined")])
async def test_a_confirm_in_an_out_of_process_frame_waits_for_the_clients_answer(
    world: World, accept: bool, expected: str
) -> None:
    # Playwright dismisses a dialog itself unless someone listens: listen, and answer nothing.
    heard: list[Dialog] = []

    def hear(dialog: Dialog) -> None:
        heard.append(dialog)

    world.context.on("dialog", hear)
    tab, page, frame = await open_in_other_site(world, "dialogs_page.html", "Boolean(document.getElementById('later'))")
    try:
        snapshot = await world.ok(tab, "snapshot")
        clicked = await world.ok(tab, "click", target=frame_ref(snapshot, 'button "Confirm"'))
        # Named as the frame's, the site of another process.
        held = '- ["confirm" dialog with message "Delete it?" in a frame from http://localhost:'
        assert held in clicked and "]: can be handled by browser_handle_dialog" in clicked, clicked
        refused = await world.fails(tab, "snapshot")
        assert refused["code"] == "dialog_open", refused
        answered = await world.ok(tab, "handle_dialog", accept=accept)
        assert answered.startswith(f'### Result\n{"Accepted" if accept else "Dismissed"} the "confirm" dialog'), (
            answered
        )
        await frame.wait_for_function("(text) => document.getElementById('answer').textContent === text", arg=expected)
        # One a timer opens between calls is held the same way.
        await world.ok(tab, "click", target=frame_ref(snapshot, 'button "Confirm later"'))

        async def opened() -> bool:
            return len(heard) == 2

        await eventually(opened, "the timer's dialog to open")
        later = await world.fails(tab, "snapshot")
        assert later["code"] == "dialog_open" and '"Still there?"' in later["message"], later
        await world.ok(tab, "handle_dialog", accept=True)
        await frame.wait_for_function("document.getElementById('answer').textContent === 'still there'")
    finally:
        world.context.remove_listener("dialog", hear)
        await page.close()
