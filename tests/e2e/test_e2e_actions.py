"""End to end: the built-in browser tools (``browserAction``), carried out by the real extension.

Snapshots and their refs, clicks, typing, choosing, keys, hovering, forms, navigation, screenshots,
the console and the network, evaluate and waits, a large page's snapshot, and bad requests, each
answered once. The world is ``tests/support/actions_world.py``'s: one headless Chromium for the
module with the unpacked extension, joined to a scripted fake broker that sends the frames and
reads the ``toolResult`` that answers each; the pages of ``tests/pages/`` record what reached
them (``event.isTrusted`` included), and Playwright reads those records and the tabs' state, as
a person at the browser would see it.
"""

from __future__ import annotations

import base64
import re
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Page

from broker.core import browser_tools

from ..support.actions_world import SESSION, World, events, ref_of, world

__all__ = ["world"]  # the module's browser, shared by these tests

pytestmark = pytest.mark.asyncio(loop_scope="module")

# What the extension must announce: every built-in tool the broker knows.
ACTIONS = list(browser_tools.ACTIONS)


@pytest_asyncio.fixture(loop_scope="module")
async def form(world: World) -> AsyncIterator[tuple[int, Page]]:
    tab, page = await world.open("form.html")
    yield tab, page
    await page.close()


async def test_the_extension_announces_its_browser_actions(world: World) -> None:
    connected = await world.link.wait_for("connected", lambda m: m.get("type") == "connected")
    assert connected["actions"] == ACTIONS
    session = await world.link.wait_for("connected", lambda m: m.get("sessionId") == SESSION)
    assert session["actions"] == ACTIONS


async def test_a_snapshot_shows_refs_for_links_buttons_and_fields_with_their_states(
    world: World, form: tuple[int, Page]
) -> None:
    tab, _ = form
    text = await world.ok(tab, "snapshot")
    page_section = f"### Page\n- Page URL: {world.url('form.html')}\n- Page Title: Order form\n"
    assert text.startswith(page_section + "### Snapshot\n```yaml\n")
    assert text.endswith("\n```")
    for line in (
        'heading "Order" [level=1]',
        'link "Page A"',
        'button "Buy now"',
        'button "Sold out" [disabled]',
        'textbox "Name"',
        'checkbox "Gift wrap"',
        'radio "Post" [checked]',
        'radio "Courier"',
        'combobox "Size"',
        'slider "Quantity"',
        'textbox "Notes"',
        'button "Send order"',
    ):
        ref_of(text, line)
    assert re.search(r'- link "Page A" \[ref=e\d+\]:\n\s+- /url: /pages/a.html\n', text)
    assert re.search(r'- textbox "Name" \[ref=e\d+\]: old\n', text)
    assert re.search(r'- option "Medium" \[selected\]\n', text)
    assert "[checked]" not in text.split('checkbox "Gift wrap"')[1].split("\n")[0]

    again = await world.ok(tab, "snapshot")
    assert ref_of(again, 'button "Buy now"') == ref_of(text, 'button "Buy now"'), "a ref stays with its element"

    part = await world.ok(tab, "snapshot", target=ref_of(text, "form"))
    assert 'textbox "Name"' in part
    assert "Order" not in part.split("### Snapshot")[1]

    shallow = (await world.ok(tab, "snapshot", depth=1)).split("```yaml\n")[1]
    assert re.search(r"^- main \[ref=e\d+\]:\n  - ", shallow, re.M), shallow
    assert "    - " not in shallow, "depth 1: the page's top elements and their children"


async def test_a_click_by_ref_reaches_the_page_as_a_trusted_click(world: World, form: tuple[int, Page]) -> None:
    tab, page = form
    buy = ref_of(await world.ok(tab, "snapshot"), 'button "Buy now"')
    after = await world.ok(tab, "click", element="Buy now button", target=buy)
    assert "- paragraph" in after and "Bought for real" in after, after
    [clicked] = await events(page, "click")
    assert clicked["isTrusted"] is True
    assert clicked["target"] == "buy"

    await world.ok(tab, "click", target=buy, doubleClick=True)
    [double] = await events(page, "dblclick")
    assert double["isTrusted"] is True

    await world.ok(tab, "click", target=buy, button="right", modifiers=["Shift"])
    [menu] = await events(page, "contextmenu")
    assert menu["isTrusted"] and menu["button"] == 2 and menu["shiftKey"]


async def test_type_fills_a_field_and_submit_sends_its_form(world: World, form: tuple[int, Page]) -> None:
    tab, page = form
    text = await world.ok(tab, "snapshot")
    notes = ref_of(text, 'textbox "Notes"')
    await world.ok(tab, "type", target=notes, text="at once")
    assert await page.eval_on_selector("#notes", "(e) => e.value") == "at once"
    assert [e["isTrusted"] for e in await events(page, "input")] == [True]

    await world.ok(tab, "type", target=notes, text="Hi!", slowly=True)
    assert await page.eval_on_selector("#notes", "(e) => e.value") == "Hi!", "typing replaces what the field held"
    keys = await events(page, "keydown")
    assert [k["key"] for k in keys] == ["H", "i", "!"]
    assert all(k["isTrusted"] for k in keys)

    name = ref_of(text, 'textbox "Name"')
    after = await world.ok(tab, "type", element="Name", target=name, text="Ada Lovelace", submit=True)
    assert f"- Page URL: {world.url('done.html')}?name=Ada+Lovelace" in after, after
    assert 'heading "Thank you"' in after


async def test_select_option_chooses_by_value_or_label(world: World, form: tuple[int, Page]) -> None:
    tab, page = form
    size = ref_of(await world.ok(tab, "snapshot"), 'combobox "Size"')
    after = await world.ok(tab, "select_option", target=size, values=["l"])
    assert 'option "Large" [selected]' in after
    assert await page.eval_on_selector("#size", "(e) => e.value") == "l"
    await world.ok(tab, "select_option", target=size, values=["Small"])
    assert await page.eval_on_selector("#size", "(e) => e.value") == "s"
    [*_, change] = await events(page, "change")
    assert change["target"] == "size"

    missing = await world.fails(tab, "select_option", target=size, values=["huge"])
    assert missing["code"] == "action_failed" and "huge" in missing["message"]


async def test_press_key_goes_to_the_focused_element(world: World, form: tuple[int, Page]) -> None:
    tab, page = form
    name = ref_of(await world.ok(tab, "snapshot"), 'textbox "Name"')
    await world.ok(tab, "click", target=name)
    await world.ok(tab, "press_key", key="Control+a")
    await world.ok(tab, "press_key", key="Backspace")
    assert await page.eval_on_selector("#name", "(e) => e.value") == ""
    await world.ok(tab, "press_key", key="Tab")
    assert await page.evaluate("document.activeElement.id") == "gift"
    tabbed = [k for k in await events(page, "keydown") if k["key"] == "Tab"]
    assert tabbed and tabbed[0]["isTrusted"]

    unknown = await world.fails(tab, "press_key", key="NoSuchKey")
    assert unknown["code"] == "invalid_arguments"


async def test_hover_moves_the_mouse_over_the_element(world: World, form: tuple[int, Page]) -> None:
    tab, page = form
    found = re.search(r"- generic \[ref=(e\d+)\]: Hover here$", await world.ok(tab, "snapshot"), re.M)
    assert found
    zone = found.group(1)
    after = await world.ok(tab, "hover", target=zone)
    assert await page.evaluate("window.hovered === true")
    assert "Secret menu" in after


async def test_fill_form_sets_every_kind_of_field(world: World, form: tuple[int, Page]) -> None:
    tab, page = form
    text = await world.ok(tab, "snapshot")
    await world.ok(
        tab,
        "fill_form",
        fields=[
            {"name": "Name", "type": "textbox", "target": ref_of(text, 'textbox "Name"'), "value": "Grace"},
            {"name": "Gift wrap", "type": "checkbox", "target": ref_of(text, 'checkbox "Gift wrap"'), "value": "true"},
            {"name": "Courier", "type": "radio", "ref": ref_of(text, 'radio "Courier"'), "value": "true"},
            {"name": "Size", "type": "combobox", "target": ref_of(text, 'combobox "Size"'), "value": "Large"},
            {"name": "Quantity", "type": "slider", "target": ref_of(text, 'slider "Quantity"'), "value": "7"},
        ],
    )
    values = await page.evaluate(
        """() => {
          const field = (id) => document.getElementById(id);
          return {name: field("name").value, gift: field("gift").checked, courier: field("courier").checked,
                  size: field("size").value, qty: field("qty").value};
        }"""
    )
    assert values == {"name": "Grace", "gift": True, "courier": True, "size": "l", "qty": "7"}


async def test_navigate_back_forward_and_reload(world: World) -> None:
    tab, page = await world.open("a.html")
    to_b = await world.ok(tab, "navigate", url=world.url("b.html"))
    assert f"- Page URL: {world.url('b.html')}\n- Page Title: Page B" in to_b
    assert 'heading "Page B" [level=1]' in to_b
    back = await world.ok(tab, "navigate_back")
    assert f"- Page URL: {world.url('a.html')}" in back
    forward = await world.ok(tab, "navigate_forward")
    assert f"- Page URL: {world.url('b.html')}" in forward
    await page.evaluate("window.marker = 1")
    reloaded = await world.ok(tab, "reload")
    assert f"- Page URL: {world.url('b.html')}" in reloaded
    assert await page.evaluate("window.marker") is None

    nowhere = await world.fails(tab, "navigate_forward")
    assert nowhere["code"] == "action_failed"
    bad = await world.fails(tab, "navigate", url="javascript:alert(1)")
    assert bad["code"] == "invalid_arguments"
    await page.close()


async def test_a_browser_page_can_only_be_navigated_away_from(world: World) -> None:
    tab = await world.worker.evaluate("chrome.tabs.create({url: 'chrome://version', active: false}).then((t) => t.id)")
    await world.link.send({"type": "tabClaimed", "sessionId": SESSION, "tabId": tab})
    refused = await world.fails(tab, "snapshot")
    assert refused["code"] == "action_failed" and "chrome://version" in refused["message"]
    after = await world.ok(tab, "navigate", url=world.url("a.html"))
    assert f"- Page URL: {world.url('a.html')}" in after and 'heading "Page A"' in after
    await world.worker.evaluate("(tabId) => chrome.tabs.remove(tabId)", tab)


async def test_a_ref_from_before_a_navigation_is_stale(world: World) -> None:
    tab, page = await world.open("a.html")
    text = await world.ok(tab, "snapshot")
    press = ref_of(text, 'button "Press me"')
    await world.ok(tab, "click", target=press)
    assert await page.text_content("button") == "Pressed"

    await world.ok(tab, "navigate", url=world.url("b.html"))
    stale = await world.fails(tab, "click", target=press)
    assert stale["code"] == "stale_ref"
    assert "browser_snapshot" in stale["message"] and "earlier page" in stale["message"]
    await world.ok(tab, "snapshot")
    assert (await world.fails(tab, "click", target=press))["code"] == "stale_ref", "refs are not reused by a new page"
    assert (await world.fails(tab, "click", target="e99999"))["code"] == "stale_ref"
    await page.close()


async def test_a_screenshot_is_a_png_image(world: World, form: tuple[int, Page]) -> None:
    tab, _ = form
    answer = await world.act(tab, "take_screenshot")
    assert answer.get("error") is None, answer
    text, image = answer["result"]["content"]
    assert text["type"] == "text" and "viewport" in text["text"]
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    png = base64.b64decode(image["data"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert width > 100 and height > 100
    (world.tmp / "viewport.png").write_bytes(png)

    buy = ref_of(await world.ok(tab, "snapshot"), 'button "Buy now"')
    element = await world.act(tab, "take_screenshot", type="jpeg", element="Buy now", target=buy)
    jpeg = base64.b64decode(element["result"]["content"][1]["data"])
    assert element["result"]["content"][1]["mimeType"] == "image/jpeg" and jpeg.startswith(b"\xff\xd8")
    (world.tmp / "button.jpeg").write_bytes(jpeg)
    assert re.search(r"Screenshot of the Buy now, \d\dx\d\d pixels, JPEG", element["result"]["content"][0]["text"])
    full = await world.act(tab, "take_screenshot", fullPage=True, scale="device")
    assert "full page" in full["result"]["content"][0]["text"]


async def test_console_messages_include_logs_and_uncaught_errors(world: World) -> None:
    tab, page = await world.open("activity.html")
    await page.wait_for_function("window.first")
    text = await world.ok(tab, "console_messages")
    assert text.startswith("### Result\nTotal messages: 3 (Errors: 1, Warnings: 1)\n"), text
    assert "[LOG] page says hello 42 @ " in text
    assert "[WARNING] careful now" in text
    assert "Error: boom at load" in text
    errors = await world.ok(tab, "console_messages", level="error")
    assert "boom at load" in errors and "hello" not in errors
    assert 'Returning 1 messages for level "error"' in errors
    await page.evaluate("console.log('after attach')")
    assert "[LOG] after attach" in await world.ok(tab, "console_messages")
    await page.close()


async def test_network_requests_list_what_the_page_fetched(world: World) -> None:
    tab, page = await world.open("activity.html")
    await page.wait_for_function("window.first")
    load = ref_of(await world.ok(tab, "snapshot"), 'button "Load more"')
    await world.ok(tab, "click", target=load)
    await page.wait_for_function("document.getElementById('result').textContent")
    text = await world.ok(tab, "network_requests")
    assert f"{world.site}/api/items?first => [200]" in text, text
    assert f"[POST] {world.site}/api/items?more => [200] OK" in text, text
    assert "activity.html" not in text, "successful static requests are left out by default"
    everything = await world.ok(tab, "network_requests", static=True)
    assert world.url("activity.html") in everything
    only = await world.ok(tab, "network_requests", filter="more")
    assert "?more" in only and "?first" not in only
    assert (await world.fails(tab, "network_requests", filter="("))["code"] == "invalid_arguments"
    await page.close()


async def test_evaluate_runs_a_function_in_the_page(world: World, form: tuple[int, Page]) -> None:
    tab, _ = form
    assert await world.ok(tab, "evaluate", function="() => document.title") == '### Result\n"Order form"'
    indented = '### Result\n{\n  "a": [\n    1,\n    2\n  ]\n}'
    assert await world.ok(tab, "evaluate", function="() => ({a: [1, 2]})") == indented
    heading = ref_of(await world.ok(tab, "snapshot"), 'heading "Order"')
    assert await world.ok(tab, "evaluate", function="(element) => element.textContent", target=heading) == (
        '### Result\n"Order"'
    )
    thrown = await world.fails(tab, "evaluate", function="() => { throw new Error('nope') }")
    assert thrown["code"] == "evaluate_failed" and "nope" in thrown["message"]
    assert (await world.fails(tab, "evaluate", function="() => {"))["code"] == "evaluate_failed"


async def test_wait_for_text_to_appear_and_to_go(world: World) -> None:
    tab, page = await world.open("activity.html")
    later = ref_of(await world.ok(tab, "snapshot"), 'button "Show later"')
    await world.ok(tab, "click", target=later)
    appeared = await world.ok(tab, "wait_for", text="all DONE")
    assert appeared.startswith("### Result\nWaited for all DONE\n### Page"), appeared
    await world.ok(tab, "wait_for", textGone="Working...")
    assert (await world.fails(tab, "wait_for"))["code"] == "invalid_arguments"
    await page.close()


async def test_a_snapshot_of_a_large_page_is_no_bigger_than_playwrights(world: World) -> None:
    tab, page = await world.open("products.html?count=200")
    text = await world.ok(tab, "snapshot")
    ours = text.split("```yaml\n")[1].removesuffix("\n```")
    theirs = await page.aria_snapshot(mode="ai")
    assert len(ours) <= len(theirs), (len(ours), len(theirs))
    assert len(re.findall(r'- button "Add to cart" \[ref=e\d+\]', ours)) == 200
    assert len(re.findall(r'- link "Product \d+" \[ref=e\d+\]:\n +- /url: /product/\d+', ours)) == 200

    # Past 100,000 characters a snapshot is folded: most products stand as one line naming the
    # ref of what holds them, which shows them all.
    await world.ok(tab, "navigate", url=world.url("products.html?count=400"))
    folded = await world.ok(tab, "snapshot")
    yaml, note = folded.split("```yaml\n")[1].split("\n```\n")
    assert len(yaml) <= 100_000
    assert note.startswith("- Folded to 100000 of its "), note
    assert 'heading "All products"' in yaml and 'searchbox "Search"' in yaml and "Shop footer" in yaml
    more, role, ref = re.findall(r"… (\d+) more (\w+) like these \[ref=(e\d+)\]", yaml)[0]
    shown = len(re.findall(r'- button "Add to cart" \[ref=e\d+\]', yaml))
    assert shown + int(more) == 400, (shown, more, role)
    part = await world.ok(tab, "snapshot", target=ref, maxChars=1_000_000)
    assert len(re.findall(r'- button "Add to cart" \[ref=e\d+\]', part)) == 400
    await page.close()


async def test_bad_requests_are_answered_once_with_an_error(world: World, form: tuple[int, Page]) -> None:
    tab, _ = form
    assert (await world.fails(tab, "fly"))["code"] == "invalid_arguments"
    assert (await world.fails(tab, "click"))["code"] == "invalid_arguments"
    assert (await world.fails(tab, "click", target="#nothing-here"))["code"] == "action_failed"
    assert (await world.fails(987654, "snapshot"))["code"] == "tab_not_claimed"
    assert (await world.fails(tab, "take_screenshot", type="gif"))["code"] == "invalid_arguments"
    call = {"type": "browserAction", "sessionId": SESSION, "callId": "odd", "tabId": "x", "action": "click", "args": 3}
    await world.link.send(call)
    await world.link.wait_for("the odd answer", lambda m: m.get("callId") == "odd")
    await world.ok(tab, "snapshot")  # later than any second answer would be
    assert sum(1 for m in world.link.inbox if m.get("callId") == "odd") == 1
