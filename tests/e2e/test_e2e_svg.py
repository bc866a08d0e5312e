"""End to end: SVG drawings and controls made by script in the snapshot, and clicks on them by ref,
in headless Chromium with the real extension (the world of ``tests/support/actions_world.py``).

The pages (``tests/pages/svg_*.html``) draw as d3 does: shapes made by script with click handlers
added by ``addEventListener``, a pie slice whose box's middle lies outside it, a thin line, text
labels; and icons and table cells that only a handler and ``cursor: pointer`` make controls.
"""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Page

from ..support import actions_world
from ..support.actions_world import World, ref_of

# A browser with the extension and a fake broker of its own, as tests/support/actions_world.py makes them.
svg_world = actions_world.world

pytestmark = pytest.mark.asyncio(loop_scope="module")


def yaml_of(text: str) -> str:
    return text.split("```yaml\n")[1].split("\n```", maxsplit=1)[0]


async def status(page: Page) -> str:
    return await page.locator("#status").inner_text()


async def test_a_charts_shapes_and_labels_have_refs_that_clicks_and_hovers_reach(svg_world: World) -> None:
    tab, page = await svg_world.open("svg_chart.html")
    text = yaml_of(await svg_world.ok(tab, "snapshot"))
    assert ref_of(text, 'img "Sales by month"')
    # Its labels, and the shapes with handlers or a pointer cursor; not the rest of the donut,
    # which nothing makes clickable.
    labels = re.findall(r"^  - generic \[ref=e\d+\]: (\w+)$", text, re.M)
    assert labels == ["Jan", "Feb", "Mar", "Legend"], text
    shapes = re.findall(r"^  - generic \[ref=(e\d+)\]$", text, re.M)
    drawn = ["Jan", "Feb", "Mar", "Trend", "Target", "Slice"]
    assert len(shapes) == len(drawn), text
    # The trend line crosses the first bar's middle, the slice's middle is in the donut's hole,
    # the target line is two pixels thin: each click lands on the shape it names even so.
    for shape, what in zip(shapes, drawn, strict=True):
        await svg_world.ok(tab, "click", element=what, target=shape)
        assert await status(page) == f"{what} chosen", what
    legend = re.search(r"- generic \[ref=(e\d+)\]: Legend", text)
    assert legend
    await svg_world.ok(tab, "click", element="Legend", target=legend.group(1))
    assert await status(page) == "Legend chosen"

    assert re.search(r'^  - link "Details" \[ref=e\d+\]:\n    - /url: /pages/a.html$', text, re.M), text

    await svg_world.ok(tab, "hover", element="Feb bar", target=shapes[1])
    assert await page.locator("#tip").inner_text() == "Feb: 80"
    # A snapshot of the drawing alone names the same shapes.
    part = yaml_of(await svg_world.ok(tab, "snapshot", target=ref_of(text, 'img "Sales by month"')))
    assert re.findall(r"- generic \[ref=(e\d+)\]$", part, re.M) == shapes, part
    await page.close()


async def test_icons_and_cells_made_controls_by_script_are_clicked_by_ref(svg_world: World) -> None:
    tab, page = await svg_world.open("svg_controls.html")
    text = yaml_of(await svg_world.ok(tab, "snapshot"))
    # An icon drawn for looks inside a named button adds nothing; a drawing that is a button is one.
    assert re.search(r'^- button "Close" \[ref=e\d+\]$', text, re.M), text
    assert re.search(r'^- button "Star" \[ref=e\d+\]$', text, re.M), text
    # An image marked as decoration shows when its own pointer cursor makes it an icon to click.
    gear = re.findall(r"^- img \[ref=(e\d+)\]$", text, re.M)
    assert len(gear) == 1, text
    # The row's own pointer cursor makes it a control; its parts, whose cursor is the row's, are not.
    assert re.search(r"^- generic \[ref=e\d+\]: Meeting notes from Ann$", text, re.M), text
    assert len(re.findall(r"Meeting notes", text)) == 1
    icon = re.search(r"^- generic \[ref=(e\d+)\]$", text, re.M)
    assert icon, text
    targets = [
        (ref_of(text, 'button "Close"'), "Close"),
        (ref_of(text, 'button "Star"'), "Star"),
        (icon.group(1), "Delete"),
        (gear[0], "Settings"),
        (ref_of(text, 'cell "Archive"'), "Archive"),
        (re.findall(r"- generic \[ref=(e\d+)\]: Meeting notes", text)[0], "Open"),
    ]
    for target, what in targets:
        await svg_world.ok(tab, "click", element=what, target=target)
        assert await status(page) == f"{what} done", what
    await page.close()
