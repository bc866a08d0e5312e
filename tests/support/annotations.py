"""What the browser_annotate tests of both browsers share: the layer's toolbar as the person finds
it, the shop page's two boxes, and the checks of an answer with them
(``tests/e2e/test_e2e_annotate.py``, ``tests/firefox/test_firefox_annotate.py``)."""

from __future__ import annotations

import re

from mcp import types

# The layer's toolbar (extension/actions/page/annotate_layer.js): its buttons' middles from the
# viewport's right edge, and how far down.
DONE_FROM_RIGHT, CANCEL_FROM_RIGHT, BAR_Y = 131, 51, 29
# The boxes' colour, as a box's border shows it; the shop's header, under where the toolbar was.
MAGENTA = (230, 0, 120)
HEADER = (0x22, 0x33, 0x44)
# The person's two boxes on tests/pages/annotate.html, around its two product cards, and their notes.
TEA = ((30, 110, 280, 180), "Tea should say 250 g")
CUPS = ((410, 110, 280, 180), "Cups are out of stock")


def texts(result: types.CallToolResult) -> list[str]:
    return [item.text for item in result.content if isinstance(item, types.TextContent)]


def image_of(result: types.CallToolResult) -> str:
    """The answer's one image, a PNG, as base64."""
    [image] = [item for item in result.content if isinstance(item, types.ImageContent)]
    assert image.mime_type == "image/png"
    return image.data


def near(colour: tuple[int, ...] | list[int], wanted: tuple[int, ...]) -> bool:
    return all(abs(a - b) <= 40 for a, b in zip(colour, wanted, strict=True))


def check_two_boxes(result: types.CallToolResult) -> None:
    """The answer of TEA and CUPS drawn and Done pressed: the result, the whole snapshot, and each
    note with its box and the refs of the card's elements under it (not the other card's)."""
    assert not result.is_error, texts(result)
    said, snapshot, notes = texts(result)
    assert "The person drew 2 boxes and pressed Done" in said
    assert "was brought to the front for the person" in said
    # The page's snapshot, whole, as browser_snapshot gives it.
    assert "- Page URL: " in snapshot and 'button "Buy tea" [ref=' in snapshot, snapshot
    assert "[box=" not in snapshot
    lines = notes.splitlines()
    assert lines[1] == '- Box 1 [box=30,110,280,180]: "Tea should say 250 g"', notes
    assert lines[3] == '- Box 2 [box=410,110,280,180]: "Cups are out of stock"', notes
    ref = re.search(r'button "Buy tea" \[ref=(e\d+)\]', snapshot)
    assert ref and f'{ref.group(1)} button "Buy tea"' in lines[2] and "Buy cups" not in lines[2], notes
    assert 'button "Buy cups"' in lines[4] and "Buy tea" not in lines[4], notes
