"""What a lean snapshot keeps and leaves out, checked the same way in Chromium
(``tests/e2e/test_e2e_changes.py``) and Firefox (``tests/firefox/test_firefox_lean_snapshots.py``):
the page code that makes a snapshot is shared, so both browsers must give the same lines.

``tests/pages/lean_checkout.html`` is a checkout as an app renders it: a root and a layout around
everything, labels around their fields (one with a hint, one whose field names itself otherwise),
a checkbox whose label holds a link, a select labelled from afar, a button that renames itself and
a status line. ``tests/pages/lean_clickable_root.html``: a root the page made a control.
"""

from __future__ import annotations

import re
from pathlib import Path

from .mcp_clients import McpClient, text

PAGES = Path(__file__).resolve().parents[1] / "pages"
CHECKOUT = "lean_checkout.html"
CLICKABLE_ROOT = "lean_clickable_root.html"
# The page's text a person reads to decide.
DECIDING = ("Total: $20, delivery on Friday",)


def yaml_of(answer: str) -> str:
    return answer.split("```yaml\n", 1)[1].split("\n```", 1)[0]


def diff_of(answer: str) -> str:
    return answer.split("```diff\n", 1)[1].split("\n```", 1)[0]


def ref_of(snapshot: str, line: str) -> str:
    """The ref on the snapshot line that starts with ``line`` (after its indent and dash)."""
    found = re.search(rf"^ *- {re.escape(line)}(?: \[[a-z]+(?:=\S+)?\])* \[ref=((?:f\d+)?e\d+)\]", snapshot, re.M)
    assert found, f"no line {line!r} with a ref in:\n{snapshot}"
    return found.group(1)


async def ok(client: McpClient, tool: str, **arguments: object) -> str:
    result = await client.call(tool, arguments)
    assert not result.is_error, text(result)
    return text(result)


def pages() -> dict[str, str]:
    """The two pages by name, for a site that serves pages given as text."""
    return {name: (PAGES / name).read_text() for name in (CHECKOUT, CLICKABLE_ROOT)}


async def check_lean_checkout(client: McpClient, url: str) -> None:
    """The checkout's snapshot without the wrappers and repeated labels, every control with its ref,
    and an action's answer with what changed alone, without the lines around it."""
    opened = await client.call_json("tabs", {"action": "open", "url": url, "focus": False})
    tab = opened["opened"]["ref"]
    whole = yaml_of(await ok(client, "browser_snapshot", tab=tab))
    # The app's root and layout only wrap the page: its heading stands at the top.
    assert whole.startswith('- heading "Checkout" [level=1] [ref='), whole
    assert "- generic [ref=" not in whole.split("\n- form", 1)[0], whole
    # Every control keeps its line and its ref, the link inside the checkbox's label too.
    controls = {
        name: ref_of(whole, name)
        for name in (
            'textbox "Email"',
            'textbox "Card number 16 digits, no spaces"',
            'textbox "Discount code"',
            'checkbox "I accept the terms"',
            'link "terms"',
            'combobox "Size"',
            'button "Pay $20"',
        )
    }
    assert len(set(controls.values())) == len(controls), whole
    assert re.search(r"- link \"terms\" \[ref=e\d+\]:\n *- /url: /terms\n", whole), whole
    # A label that is its field's name is said once, as the name; one that is not (the field names
    # itself "Discount code") stays, as it is what the person sees.
    for label in ("Email", "Card number", "Size", "I accept"):
        assert not re.search(rf"- text: {label}", whole), (label, whole)
    assert re.search(r"^ *- text: Coupon\n *- textbox \"Discount code\"", whole, re.M), whole
    for deciding in DECIDING:
        assert deciding in whole, whole
    assert re.search(r"^- status \[ref=e\d+\]$", whole, re.M), whole

    typed = await ok(
        client, "browser_type", tab=tab, element="Email", target=controls['textbox "Email"'], text="ada@example.com"
    )
    # The value typed is told, on the field's own line and nothing else: the form around it goes
    # without saying.
    email = re.escape(controls['textbox "Email"'])
    assert re.fullmatch(rf'~ - textbox "Email"(?: \[active\])? \[ref={email}\]: ada@example.com', diff_of(typed)), typed

    paid = await ok(client, "browser_click", tab=tab, element="Pay", target=controls['button "Pay $20"'])
    told = diff_of(paid).splitlines()
    # The button renamed itself: told, though its taking the focus is not; and the status's new text.
    pay = re.escape(controls['button "Pay $20"'])
    assert any(re.fullmatch(rf'~ - button "Paid"(?: \[active\])? \[ref={pay}\]', line) for line in told), told
    assert "~ - status [ref=" in "\n".join(told) and "Payment taken for ada@example.com" in told[-1], told
    assert len(told) == 2 and not any("form" in line for line in told), told
    await client.call_json("tabs", {"action": "close", "tab": tab})


async def check_clickable_root(client: McpClient, url: str) -> None:
    """A root the page made a control keeps its line and its ref, and a click on it lands."""
    opened = await client.call_json("tabs", {"action": "open", "url": url, "focus": False})
    tab = opened["opened"]["ref"]
    whole = yaml_of(await ok(client, "browser_snapshot", tab=tab))
    found = re.match(r"- generic \[ref=(e\d+)\]:\n  - heading \"Tap anywhere\"", whole)
    assert found, whole
    clicked = await ok(client, "browser_click", tab=tab, element="the page", target=found.group(1))
    assert "Clicked the page" in diff_of(clicked), clicked
    await client.call_json("tabs", {"action": "close", "tab": tab})
