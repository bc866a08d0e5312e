"""End to end: an action answers success only where its input reached the element.

Between the scroll that brings an element into view and the input meant for it, the page may move
(a banner comes in above as the mouse arrives), an overlay may come, or the viewport may shrink:
Chromium's "started debugging this browser" bar comes just after the debugger first attaches to a
tab, and takes the bottom of the viewport. Input then lands on whatever is there now. The pages
are ``tests/pages/reach_*.html``, each recording what its clicks and mouse-overs landed on; the
browser, fake broker and page server are ``tests/support/actions_world.py``'s, one for this module,
so the first test here is the browser's first attach.
"""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Frame, Page

from ..harness.waiting import eventually
from ..support.actions_world import World, world

__all__ = ["world"]  # the module's browser, shared by these tests

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def landed(page: Page | Frame, kind: str = "clicks") -> list[str]:
    found: list[str] = await page.evaluate(f"window.{kind}")
    return found


async def test_a_click_right_after_the_first_attach_reaches_a_button_the_bar_pushed_off_the_bottom(
    world: World,
) -> None:
    # The page is slow over the mouse's coming (reach_bottom.html?slow), so the bar, which comes a
    # moment after the browser's first attach, is there by the time of the press whatever the
    # machine's speed: the press meant for the button at the bottom edge met the <html> before.
    tab, page = await world.open("reach_bottom.html?slow")
    before = await page.evaluate("innerHeight")
    # The tab's first action attaches the debugger, and the browser's first attach brings the bar.
    await world.ok(tab, "click", target="#bottom")
    assert await landed(page) == ["bottom"], "the click reached the button, not what the bar left there"
    assert await page.evaluate("innerHeight") < before, "the bar came and shrank the viewport, as it does"
    await page.close()


async def test_a_click_reaches_a_button_the_page_moves_as_the_mouse_arrives(world: World) -> None:
    tab, page = await world.open("reach_shift.html?shift")
    await world.ok(tab, "click", target="#target")
    assert await page.evaluate("Boolean(document.getElementById('notice'))"), "the page moved as the mouse came"
    assert await landed(page) == ["target"]
    await page.close()


async def test_a_click_whose_button_leaps_away_as_it_is_pressed_clicks_nothing_around_it(world: World) -> None:
    # The release lands on the body around the button, an ancestor of it: the page would hear a
    # click on the body, not the button. That is a miss, taken from the page, and the click aims again.
    tab, page = await world.open("reach_shift.html?jump")
    await world.ok(tab, "click", target="#target")
    assert await page.evaluate("document.getElementById('target').style.marginLeft") == "400px", "it leapt"
    assert await landed(page) == ["target"], "only the button was clicked, on the second aim"
    await page.close()


async def test_a_hover_ends_on_an_element_the_page_moves_as_the_mouse_arrives(world: World) -> None:
    tab, page = await world.open("reach_shift.html?shift")
    await world.ok(tab, "hover", target="#target")
    assert (await landed(page, "hovered"))[-1] == "target"
    assert await page.evaluate("document.getElementById('target').matches(':hover')")
    await page.close()


async def test_a_check_box_the_page_moves_as_the_mouse_arrives_is_checked(world: World) -> None:
    tab, page = await world.open("reach_shift.html?shift")
    await page.evaluate(
        """() => document.getElementById("field").outerHTML =
             '<input id="field" type="checkbox" aria-label="Field">'"""
    )
    field = {"name": "Field", "type": "checkbox", "target": "#field", "value": "true"}
    await world.ok(tab, "fill_form", fields=[field])
    assert await page.evaluate("document.getElementById('field').checked")
    assert await landed(page) == ["field"]
    await page.close()


async def test_an_overlay_that_comes_with_the_mouse_fails_the_click_naming_it_and_nothing_is_clicked(
    world: World,
) -> None:
    tab, page = await world.open("reach_shift.html?cover")
    error = await world.fails(tab, "click", target="#target")
    assert error["code"] == "element_covered", error
    assert "cannot reach <button#target>: <div#cover> covers it at (" in error["message"], error
    assert await landed(page) == [], "nothing under the overlay, nor the overlay, was clicked"
    await page.close()


async def test_an_element_under_an_overlay_fails_every_action_naming_the_cover(world: World) -> None:
    tab, page = await world.open("reach_shift.html")
    await page.evaluate("document.body.append(Object.assign(document.createElement('div'), {id: 'cover'}))")
    for action, args in [
        ("click", {"target": "#target"}),
        ("hover", {"target": "#target"}),
        ("type", {"target": "#field", "text": "hello"}),
        ("select_option", {"target": "#choice", "values": ["Two"]}),
        ("drag", {"startTarget": "#target", "endTarget": "#decoy"}),
    ]:
        error = await world.fails(tab, action, **args)
        assert error["code"] == "element_covered", (action, error)
        assert "<div#cover> covers it" in error["message"], (action, error)
    assert await landed(page) == []
    assert await page.evaluate("[document.getElementById('field').value, document.getElementById('choice').value]") == [
        "",
        "One",
    ]
    await page.close()


def frame_ref(snapshot: str, frame: str, name: str) -> str:
    """The ref of button ``name`` inside the frame titled ``frame``."""
    part = snapshot.split(f'- iframe "{frame}"')[1]
    found = re.search(rf'- button "{re.escape(name)}" \[ref=(f\d+e\d+)\]', part)
    assert found, f"no button {name!r} in frame {frame!r}:\n{snapshot}"
    return found.group(1)


# The frames of reach_frames.html: title -> (the start of its address, the button in it).
FRAMES = {
    "Same site": ("http://127.0.0.1", "reach_shift.html", "Target"),
    "Other site": ("http://localhost", "reach_shift.html", "Target"),
    "Shrinking": ("http://127.0.0.1", "reach_bottom.html", "At the bottom"),
}


async def open_frames(world: World) -> tuple[int, Page, dict[str, Frame]]:
    tab, page = await world.open("reach_frames.html")

    async def loaded() -> dict[str, Frame] | None:
        found = {}
        for title, (origin, file, _) in FRAMES.items():
            frame = next((f for f in page.frames if f.url.startswith(origin) and file in f.url), None)
            if frame is None or await frame.evaluate("document.readyState") != "complete":
                return None
            found[title] = frame
        return found

    return tab, page, await eventually(loaded, "the frames to load")


@pytest.mark.parametrize("title", ["Same site", "Other site"])
async def test_a_click_in_a_frame_reaches_a_button_the_frame_moves_as_the_mouse_arrives(
    world: World, title: str
) -> None:
    tab, page, frames = await open_frames(world)
    snapshot = await world.ok(tab, "snapshot")
    await world.ok(tab, "click", target=frame_ref(snapshot, title, "Target"))
    assert await frames[title].evaluate("Boolean(document.getElementById('notice'))"), "the frame moved"
    assert await landed(frames[title]) == ["target"]
    await page.close()


async def test_a_click_in_a_frame_that_shrinks_as_the_mouse_arrives_reaches_its_bottom_button(world: World) -> None:
    tab, page, frames = await open_frames(world)
    snapshot = await world.ok(tab, "snapshot")
    await world.ok(tab, "click", target=frame_ref(snapshot, "Shrinking", "At the bottom"))
    assert await frames["Shrinking"].evaluate("window.shrunk === true"), "the frame shrank under the mouse"
    assert await landed(frames["Shrinking"]) == ["bottom"]
    await page.close()


async def test_a_click_on_a_spot_another_button_keeps_taking_answers_only_for_what_it_clicked(world: World) -> None:
    # reach_flicker.html puts "Delete everything" over "Keep" for 3 ms of every 9: whatever the
    # checks before a press saw, the press may meet the decoy. The decoy must never be clicked, and
    # every answer must tell what happened: success with one click on Keep, or an error and no click.
    tab, page = await world.open("reach_flicker.html")
    answers = []
    for _ in range(16):
        before = await landed(page)
        answer = await world.act(tab, "click", target="#keep")
        after = await landed(page)
        if answer.get("error"):
            assert answer["error"]["code"] in {"element_moved", "element_covered", "timeout"}, answer
            assert after == before, f"{answer['error']} yet the page heard {after[len(before) :]}"
        else:
            assert after == [*before, "keep"], f"answered success, and the page heard {after[len(before) :]}"
        answers.append(answer["error"]["code"] if answer.get("error") else "clicked")
    # How many get through varies with the machine (the other tests here show clicks that do); what
    # matters is that none lands on the decoy and no answer claims what did not happen.
    assert "decoy" not in await landed(page, "pressed"), answers
    await page.close()
