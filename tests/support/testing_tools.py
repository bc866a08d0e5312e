"""What the testing tools' end-to-end tests share, in Chromium (``tests/e2e/test_e2e_testing_tools.py``)
and Firefox (``tests/firefox/test_firefox_testing_tools.py``): the page (``tests/pages/testing_tools.html``,
its frame ``testing_tools_frame.html``), the elements a locator is asked of, and the replay of a
generated locator with Playwright for Python in a plain Chromium of the test's own, against the same
page: it must find one element, the one asked of (its ``data-case``).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from typing import Any

from playwright.async_api import Browser, FrameLocator, Locator, Page, async_playwright

from ..harness.chromium import CHROMIUM, chromium_args
from ..harness.waiting import eventually
from .mcp_clients import McpClient, text

PAGE = "pages/testing_tools.html"
REF = re.compile(r"\[ref=((?:f\d+)?e\d+)\]")

# data-case -> (the snapshot line that names it, the one before it that tells it from its
# look-alikes, or None).
CASES: dict[str, tuple[str, str | None]] = {
    "delete-apple": (r'button "Delete"', r"text: Apple"),
    "delete-banana": (r'button "Delete"', r"text: Banana"),
    "delete-cherry": (r'button "Delete"', r"text: Cherry"),
    "search": (r'textbox "Search products"', None),
    "email": (r'textbox "Email"', None),
    "subscribe": (r'checkbox "Subscribe to news"', None),
    "post": (r'radio "Post"', None),
    "pickup": (r'radio "Pickup"', None),
    "size": (r'combobox "Size"', None),
    "volume": (r'slider "Volume"', None),
    "total": (r"Total: 12\.50 EUR", None),
    "swatch": (r"generic \[ref=", r"text: Colour"),
    "add-to-cart": (r'button "Add to cart"', None),
    "comment": (r'textbox "Comment"', None),
    "post-comment": (r'button "Post comment"', None),
    "accept": (r'button "Accept"', None),
}


def ref_of(snapshot: str, pattern: str, after: str | None = None) -> str:
    """The ref on the first line matching ``pattern`` (after the first line matching ``after``)."""
    lines = snapshot.splitlines()
    start = next((i for i, line in enumerate(lines) if re.search(after, line)), None) if after else 0
    assert start is not None, f"no line matching {after!r} in:\n{snapshot}"
    for line in lines[start:]:
        found = REF.search(line)
        if re.search(pattern, line) and found:
            return found.group(1)
    raise AssertionError(f"no line matching {pattern!r} with a ref after {after!r} in:\n{snapshot}")


async def open_page(client: McpClient, url: str) -> str:
    """Open ``url`` in a tab of the client's own; the page's snapshot."""
    await client.call_json("tabs", {"action": "open", "url": url, "focus": False})

    async def whole() -> str:
        # The frame's page loads after the tab's, and no event of the tab's says when.
        page = await client.call("browser_snapshot", {})
        assert not page.is_error, text(page)
        return text(page) if "Post comment" in text(page) and "Add to cart" in text(page) else ""

    return str(await eventually(whole, "the page and its frame in the snapshot"))


async def call(client: McpClient, tool: str, **args: Any) -> tuple[bool, str]:
    """The tool's answer: whether it failed (an MCP error result), and its text."""
    result = await client.call(tool, args)
    return bool(result.is_error), text(result)


async def passes(client: McpClient, tool: str, **args: Any) -> str:
    failed, said = await call(client, tool, **args)
    assert not failed, said
    assert "\n" not in said.strip(), f"a passed check answers one line: {said!r}"
    return said


async def fails(client: McpClient, tool: str, **args: Any) -> str:
    failed, said = await call(client, tool, **args)
    assert failed, f"{tool} {args} passed: {said}"
    return said


async def locators(client: McpClient, snapshot: str) -> dict[str, str]:
    """browser_generate_locator's answer for each case's element."""
    found = {}
    for case, (pattern, after) in CASES.items():
        found[case] = await passes(
            client, "browser_generate_locator", element=case, target=ref_of(snapshot, pattern, after)
        )
    return found


async def check_elements(client: McpClient, site: str) -> None:
    await open_page(client, f"{site}/{PAGE}")
    for role, name in [
        ("heading", "Shopping list"),
        ("button", "Delete"),
        ("button", "Add to cart"),
        ("button", "Post comment"),
        ("checkbox", "Subscribe to news"),
        ("button", "Accept"),
    ]:
        said = await passes(client, "browser_verify_element_visible", role=role, accessibleName=name)
        assert said == f'Visible: {role} "{name}"', said
    hidden = await fails(client, "browser_verify_element_visible", role="button", accessibleName="Checkout")
    assert hidden.startswith('No visible button "Checkout"; 1 hidden;'), hidden
    missing = await fails(client, "browser_verify_element_visible", role="button", accessibleName="Remove")
    assert 'the button elements shown: "' in missing and '"Delete"' in missing, missing
    assert '"Post comment"' in missing or '"Accept"' in missing, missing
    wrong_role = await fails(client, "browser_verify_element_visible", role="link", accessibleName="Delete")
    assert wrong_role == 'No visible link "Delete"; no link is shown', wrong_role


async def check_texts(client: McpClient, site: str) -> None:
    await open_page(client, f"{site}/{PAGE}")
    for shown in ["Limited edition", "Be kind", "Total: 12.50", "banana"]:
        said = await passes(client, "browser_verify_text_visible", text=shown)
        assert said == f'Visible text: "{shown}"', said
    secret = await fails(client, "browser_verify_text_visible", text="Secret discount code")
    assert "it is in hidden elements only: <p#secret>" in secret, secret
    for hidden in ["Hidden offer", "Zero box promotion"]:
        said = await fails(client, "browser_verify_text_visible", text=hidden)
        assert said.startswith(f'No visible text "{hidden}"; it is in hidden elements only:'), said
    typo = await fails(client, "browser_verify_text_visible", text="Bananna")
    assert typo.startswith('No visible text "Bananna"; closest: "Banana"'), typo


async def check_lists(client: McpClient, site: str) -> None:
    page = await open_page(client, f"{site}/{PAGE}")
    fruits = ref_of(page, r'list "Fruits"')
    said = await passes(
        client, "browser_verify_list_visible", element="Fruits", target=fruits, items=["Apple", "Cherry"]
    )
    assert said == "The list shows all 2 items", said
    lacking = await fails(
        client, "browser_verify_list_visible", element="Fruits", target=fruits, items=["Apple", "Mango"]
    )
    assert lacking == (
        'The list (list "Fruits") lacks "Mango"; it shows: "Apple Delete", "Banana Delete", "Cherry Delete"'
    ), lacking


async def check_values(client: McpClient, site: str) -> None:
    page = await open_page(client, f"{site}/{PAGE}")

    async def value(line: str, kind: str, wanted: str, ok: bool) -> str:
        args = {"type": kind, "element": line, "target": ref_of(page, line), "value": wanted}
        return await (passes if ok else fails)(client, "browser_verify_value", **args)

    assert await value('textbox "Email"', "textbox", "ann@example.com", True) == (
        'textbox "Email" has the value "ann@example.com"'
    )
    assert await value('textbox "Email"', "textbox", "bob@example.com", False) == (
        'Expected the value "bob@example.com", but textbox "Email" has "ann@example.com"'
    )
    assert await value('checkbox "Subscribe to news"', "checkbox", "true", True)
    unchecked = await value('checkbox "Subscribe to news"', "checkbox", "false", False)
    assert unchecked == 'Expected checkbox "Subscribe to news" not checked, but it is checked', unchecked
    assert await value('radio "Pickup"', "radio", "true", True)
    assert "but it is not checked" in await value('radio "Post"', "radio", "true", False)
    assert await value('combobox "Size"', "combobox", "Medium", True)
    assert await value('combobox "Size"', "combobox", "m", True)
    small = await value('combobox "Size"', "combobox", "Small", False)
    assert small == 'Expected the value "Small", but combobox "Size" has "m" (shown as "Medium")', small
    assert await value('slider "Volume"', "slider", "30", True)
    assert '"30"' in await value('slider "Volume"', "slider", "50", False)
    not_a_box = await value('textbox "Email"', "checkbox", "true", False)
    assert not_a_box == 'Not a checkbox: textbox "Email" cannot be checked', not_a_box
    bad = await client.call(
        "browser_verify_value", {"type": "checkbox", "element": "x", "target": "e1", "value": "yes"}
    )
    assert bad.is_error and '"true" or "false"' in bad.content[0].text  # type: ignore[union-attr]


def expected_locators(found: dict[str, str]) -> None:
    """The locators the page's elements get: Playwright's kinds, each where it fits."""
    assert found["delete-banana"] == (
        "getByRole('listitem').filter({ hasText: 'Banana' }).getByRole('button', { name: 'Delete' })"
    ), found
    assert found["search"] == "getByPlaceholder('Search products')", found
    assert found["email"] == "getByLabel('Email')", found
    assert found["size"] == "getByLabel('Size')", found
    assert found["total"] == "getByTestId('cart-total')", found
    assert found["add-to-cart"] == "getByRole('button', { name: 'Add to cart' })", found
    assert found["post-comment"] == (
        "locator('iframe[title=\"Comments\"]').contentFrame().getByRole('button', { name: 'Post comment' })"
    ), found
    assert found["swatch"] == "locator('#swatch-red')", found
    assert len(set(found.values())) == len(found), found


# Playwright's JavaScript spelling of a locator, read into Playwright for Python's calls.
_TOKEN = re.compile(
    r"\s*(?:(?P<name>[A-Za-z_]\w*)|(?P<string>'(?:[^'\\]|\\.)*')|(?P<number>-?\d+)|(?P<punct>[.(),{}:]))"
)
_METHODS = {
    "getByRole": "get_by_role",
    "getByText": "get_by_text",
    "getByLabel": "get_by_label",
    "getByPlaceholder": "get_by_placeholder",
    "getByTestId": "get_by_test_id",
    "locator": "locator",
    "filter": "filter",
    "nth": "nth",
}
_OPTIONS = {"name": "name", "exact": "exact", "hasText": "has_text"}


def _tokens(code: str) -> list[tuple[str, Any]]:
    tokens: list[tuple[str, Any]] = []
    at = 0
    while at < len(code):
        match = _TOKEN.match(code, at)
        assert match and match.end() > at, f"cannot read {code[at:]!r} of {code!r}"
        at = match.end()
        kind = match.lastgroup
        assert kind is not None
        value: Any = match.group(kind)
        if kind == "string":
            value = re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r"}.get(m.group(1), m.group(1)), value[1:-1])
        elif kind == "number":
            value = int(value)
        elif kind == "name" and value in ("true", "false"):
            kind, value = "bool", value == "true"
        tokens.append((kind, value))
    return tokens


def replayed(page: Page, code: str) -> Locator:
    """The locator ``code`` (``getByRole('button', { name: 'Save' })...``) as Playwright for Python's."""
    tokens = _tokens(code)
    here: Page | Locator | FrameLocator = page
    position = 0

    def take(kind: str, value: Any = None) -> Any:
        nonlocal position
        got_kind, got = tokens[position]
        assert got_kind == kind and (value is None or got == value), f"{code!r}: {got!r} where {kind} {value!r}"
        position += 1
        return got

    while position < len(tokens):
        if position:
            take("punct", ".")
        method = take("name")
        take("punct", "(")
        if method == "contentFrame":
            take("punct", ")")
            assert isinstance(here, Locator), code
            here = here.content_frame
            continue
        positional: list[Any] = []
        options: dict[str, Any] = {}
        while tokens[position] != ("punct", ")"):
            if tokens[position] == ("punct", "{"):
                take("punct", "{")
                while tokens[position] != ("punct", "}"):
                    key = take("name")
                    take("punct", ":")
                    options[_OPTIONS[key]] = tokens[position][1]
                    position += 1
                    if tokens[position] == ("punct", ","):
                        take("punct", ",")
                take("punct", "}")
            else:
                positional.append(tokens[position][1])
                position += 1
            if tokens[position] == ("punct", ","):
                take("punct", ",")
        take("punct", ")")
        here = getattr(here, _METHODS[method])(*positional, **options)
    assert isinstance(here, Locator), code
    return here


@contextlib.asynccontextmanager
async def plain_chromium() -> AsyncIterator[Browser]:
    """A Chromium of the test's own, with no extension, for Playwright to replay locators in."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=chromium_args(extension=None)
        )
        try:
            yield browser
        finally:
            await browser.close()


async def replay(url: str, found: dict[str, str]) -> None:
    """Each generated locator, replayed by Playwright on the page at ``url``: one element, the case's."""
    async with plain_chromium() as browser:
        page = await browser.new_page()
        await page.goto(url)
        await page.frame_locator('iframe[title="Comments"]').get_by_text("Be kind").wait_for()
        wrong = {}
        for case, code in found.items():
            locator = replayed(page, code)
            count = await locator.count()
            case_of = await locator.first.get_attribute("data-case") if count else None
            if count != 1 or case_of != case:
                wrong[case] = (code, count, case_of)
        assert not wrong, f"locators that Playwright resolves otherwise: {wrong}"
