"""What a client reads of a page: the differ, folding, and each client's baseline per tab."""

from __future__ import annotations

import re

import attrs
import pytest

from broker.core.errors import InvalidRequest
from broker.core.messages import PageSnapshot
from broker.core.snapshot_tree import diff, parse, render
from broker.core.snapshots import (
    AFTER_ACTION_BUDGET,
    SNAPSHOT_BUDGET,
    Baselines,
    View,
    fold,
    view_of,
    with_section,
    without_address,
)

SHOP = """\
- banner [ref=e1]:
  - heading "Shop" [level=1] [ref=e2]
  - searchbox "Search" [ref=e3]
  - link "Cart (0)" [ref=e4]:
    - /url: /cart
- main [ref=e5]:
  - list "Products" [ref=e6]:
    - listitem [ref=e7]:
      - link "Blue mug" [ref=e8]:
        - /url: /p/1
      - text: $10
      - button "Add" [ref=e9]
    - listitem [ref=e10]:
      - link "Red mug" [ref=e11]:
        - /url: /p/2
      - text: $12
      - button "Add" [ref=e12]
    - listitem [ref=e13]:
      - link "Green cup" [ref=e14]:
        - /url: /p/3
      - text: $8
      - button "Add" [ref=e15]
- contentinfo [ref=e16]: Shop footer"""


def changes(old: str, new: str) -> str:
    return "\n".join(str(line) for line in diff(parse(old), parse(new)))


def test_a_snapshot_reads_back_as_it_was_written() -> None:
    assert "\n".join(render(parse(SHOP))) == SHOP
    quoted = '- \'button "a: b" [ref=e2]\'\n- text: "x: y"\n- iframe [ref=e3] [origin=https://b.test]:\n  - f1e2'
    assert "\n".join(render(parse(quoted))) == quoted


def test_nothing_changed_gives_no_lines() -> None:
    assert diff(parse(SHOP), parse(SHOP)) == []


def test_a_changed_line_shows_as_it_is_now_without_its_unchanged_ancestors() -> None:
    new = SHOP.replace('link "Cart (0)" [ref=e4]', 'link "Cart (1)" [ref=e4]')
    # Its ref says which element it is: the banner around it would tell nothing more.
    assert changes(SHOP, new) == '~ - link "Cart (1)" [ref=e4]:'


def test_an_added_element_shows_whole_with_its_ancestors() -> None:
    new = SHOP.replace(
        "- contentinfo",
        '  - dialog "Added" [ref=e20]:\n    - button "Close" [ref=e21]\n- contentinfo',
    )
    assert changes(SHOP, new) == (
        '  - main [ref=e5]:\n+   - dialog "Added" [ref=e20]:\n+     - button "Close" [ref=e21]'
    )


def test_a_removed_element_shows_its_line_alone() -> None:
    new = re.sub(r"    - listitem \[ref=e10\]:\n(      .*\n)+?(?=    - listitem)", "", SHOP)
    assert "Red mug" not in new
    lines = changes(SHOP, new).splitlines()
    assert "-   - listitem [ref=e10]" in lines and '  - list "Products" [ref=e6]:' in lines, "under its list"
    assert not any("Red mug" in line for line in lines), "what was inside went with it"


def test_a_small_list_whose_items_went_is_shown_whole_so_what_stayed_reads_too() -> None:
    new = re.sub(r"    - listitem \[ref=e1[03]\]:\n(      .*\n)+?(?=    - listitem|- contentinfo)", "", SHOP)
    text = changes(SHOP, new)
    assert text.startswith('  - list "Products" [ref=e6]:\n    - listitem [ref=e7]:\n'), text
    assert '      - link "Blue mug" [ref=e8]:' in text and '      - button "Add" [ref=e9]' in text, text
    assert "-   - listitem [ref=e10]" in text and "-   - listitem [ref=e13]" in text


def test_a_long_run_of_removed_items_is_counted_not_listed() -> None:
    items = "\n".join(f"  - listitem [ref=e{n}]: Item {n}" for n in range(10, 210))
    old = f"- list [ref=e1]:\n{items}"
    new = "- list [ref=e1]:\n  - listitem [ref=e10]: Item 10"
    text = changes(old, new)
    assert "- … 197 more removed (listitem)" in text, text
    assert len(text) < 400


def test_a_moved_element_is_removed_there_and_added_here_without_repeating_what_it_holds() -> None:
    old = '- list [ref=e1]:\n  - listitem [ref=e2]:\n    - button "A" [ref=e3]\n- list [ref=e4]'
    new = '- list [ref=e1]\n- list [ref=e4]:\n  - listitem [ref=e2]:\n    - button "A" [ref=e3]'
    text = changes(old, new)
    assert "-   - listitem [ref=e2]" in text
    assert "+   - listitem [ref=e2]:" in text
    assert 'button "A"' not in text, text


def test_nested_changes_show_the_ancestor_of_what_came_once_and_nest_as_shown() -> None:
    old = '- main [ref=e1]:\n  - region [ref=e2]:\n    - checkbox "A" [ref=e3]\n    - checkbox "B" [ref=e4]'
    new = old.replace('"A" [ref=e3]', '"A" [checked] [ref=e3]').replace('"B" [ref=e4]', '"B" [checked] [ref=e4]')
    assert changes(old, new) == '~ - checkbox "A" [checked] [ref=e3]\n~ - checkbox "B" [checked] [ref=e4]'
    added = new + "\n    - alert [ref=e5]: Saved"
    # Where something came, its parent says where: what changed beside it is nested under it too.
    assert changes(old, added) == (
        "  - region [ref=e2]:\n"
        '~   - checkbox "A" [checked] [ref=e3]\n'
        '~   - checkbox "B" [checked] [ref=e4]\n'
        "+   - alert [ref=e5]: Saved"
    )
    # Added deep inside an element that changed itself: nested under it, not as deep as in the page.
    deep = '- main [ref=e1]:\n  - region [ref=e2]:\n    - list "Notes" [ref=e3]'
    grown = '- main [ref=e1]:\n  - region [ref=e2]:\n    - list "Notes (1)" [ref=e3]:\n      - listitem [ref=e4]: a'
    assert changes(deep, grown) == '~ - list "Notes (1)" [ref=e3]:\n+   - listitem [ref=e4]: a'


def test_a_line_under_an_ancestor_left_out_is_not_nested_under_the_line_before_it() -> None:
    old = (
        '- list "A" [ref=e1]:\n  - listitem [ref=e2]: one\n'
        '- region [ref=e3]:\n  - group [ref=e4]:\n    - checkbox "B" [ref=e5]'
    )
    new = old.replace("one", "one\n  - listitem [ref=e6]: two").replace('"B" [ref=e5]', '"B" [checked] [ref=e5]')
    assert changes(old, new) == (
        '  - list "A" [ref=e1]:\n+   - listitem [ref=e6]: two\n~ - checkbox "B" [checked] [ref=e5]'
    )


def test_texts_without_refs_are_matched_by_their_words() -> None:
    old = "- paragraph [ref=e1]:\n  - text: Total\n  - strong [ref=e2]: $10\n  - text: incl. tax"
    new = old.replace("incl. tax", "excl. tax")
    assert changes(old, new) == "  - paragraph [ref=e1]:\n-   - text: incl. tax\n+   - text: excl. tax"


def test_a_page_that_fits_is_not_folded() -> None:
    folded = fold(parse(SHOP), 10_000)
    assert folded.yaml == SHOP and not folded.folded


def catalogue(count: int) -> str:
    cards = "\n".join(
        f'  - article [ref=e{10 + 3 * n}]:\n    - heading "Product {n}" [level=3] [ref=e{11 + 3 * n}]\n'
        f'    - text: {"A fine thing. " * 20}\n    - button "Add to cart" [ref=e{12 + 3 * n}]'
        for n in range(count)
    )
    return f'- heading "All" [level=1] [ref=e1]\n- searchbox "Search" [ref=e2]\n- list [ref=e3]:\n{cards}\n- text: End'


def test_a_large_page_folds_runs_of_similar_items_naming_the_ref_that_shows_them() -> None:
    page = catalogue(300)
    folded = fold(parse(page), 4_000)
    assert folded.folded and not folded.cut
    assert len(folded.yaml) <= 4_000 and folded.length == len(page)
    assert 'searchbox "Search" [ref=e2]' in folded.yaml and 'heading "All"' in folded.yaml
    more = re.findall(r"… (\d+) more article like these \[ref=(e\d+)\]", folded.yaml)
    shown = folded.yaml.count('button "Add to cart"')
    assert more and more[0][1] == "e3" and shown + int(more[0][0]) == 300, folded.yaml
    assert "- text: End" in folded.yaml


def test_long_texts_are_shortened_first() -> None:
    page = '- heading "News" [ref=e1]\n- paragraph [ref=e2]: ' + "word " * 400
    folded = fold(parse(page), 600)
    assert folded.folded and len(folded.yaml) <= 600 and folded.yaml.endswith("…")


def test_a_page_too_large_even_folded_is_cut_naming_the_parts_past_the_cut() -> None:
    regions = "\n".join(
        f'- region "Part {n}" [ref=e{100 + n}]:\n'
        + "\n".join(f'  - button "B{n}.{k}" [ref=e{1000 * n + k}]' for k in range(n % 2 + 1))
        for n in range(200)
    )
    folded = fold(parse(regions), 2_000)
    assert folded.cut and len(folded.yaml) <= 2_000
    assert folded.past_cut and all("region" in line for line in folded.past_cut)


def page(yaml: str, document: str = "d1") -> PageSnapshot:
    return PageSnapshot(document=document, yaml=yaml, url="https://shop.test/", title="Shop")


AFTER = View(changes=True, budget=AFTER_ACTION_BUDGET, after_action=True)
WHOLE = View(changes=False, budget=SNAPSHOT_BUDGET)
CHANGES = View(changes=True, budget=SNAPSHOT_BUDGET)
TAB = ("b1", 7)


def test_a_clients_first_look_is_the_whole_page_and_then_its_changes() -> None:
    baselines = Baselines()
    # After an action, the whole page in a yaml block says itself that it is whole (the tool's description).
    assert baselines.section("s1", TAB, page(SHOP), AFTER) == ["```yaml", SHOP, "```"]
    assert baselines.section("s1", TAB, page(SHOP), AFTER) == ["- No changes since your last snapshot of this tab."]
    new = SHOP.replace("Cart (0)", "Cart (1)")
    told = baselines.section("s1", TAB, page(new), AFTER)
    assert told[0] == "```diff" and told[-1] == "```"  # what its lines mean, browser_snapshot's description says
    assert told[1] == '~ - link "Cart (1)" [ref=e4]:'
    assert baselines.section("s1", TAB, page(new), AFTER) == ["- No changes since your last snapshot of this tab."]


def test_a_plain_snapshot_is_whole_without_a_note_and_sets_the_baseline() -> None:
    baselines = Baselines()
    assert baselines.section("s1", TAB, page(SHOP), WHOLE) == ["```yaml", SHOP, "```"]
    assert baselines.section("s1", TAB, page(SHOP), CHANGES) == ["- No changes since your last snapshot of this tab."]


def test_two_clients_keep_baselines_of_their_own() -> None:
    baselines = Baselines()
    baselines.section("a", TAB, page(SHOP), WHOLE)
    baselines.section("b", TAB, page(SHOP), WHOLE)
    one = SHOP.replace("Cart (0)", "Cart (1)")
    two = one.replace("Cart (1)", "Cart (2)")
    assert "Cart (1)" in baselines.section("a", TAB, page(one), AFTER)[1]
    # b has not read "Cart (1)": its changes run from what it last read.
    told_b = baselines.section("b", TAB, page(two), AFTER)
    assert "Cart (2)" in told_b[1]
    told_a = baselines.section("a", TAB, page(two), CHANGES)
    assert "Cart (2)" in told_a[1]
    assert baselines.section("b", TAB, page(two), CHANGES) == ["- No changes since your last snapshot of this tab."]


def test_a_new_document_gives_the_whole_page_saying_so() -> None:
    baselines = Baselines()
    baselines.section("s1", TAB, page(SHOP), WHOLE)
    cart = '- heading "Your cart" [level=1] [ref=e30]\n- text: Empty'
    told = baselines.section("s1", TAB, page(cart, document="d2"), CHANGES)
    assert told[0].startswith("- A new page since your last snapshot of this tab") and cart in told
    assert Baselines().section("s1", TAB, page(cart), CHANGES)[0].startswith("- Your first snapshot of this tab")
    # After an action, the yaml block alone.
    baselines.section("s1", TAB, page(SHOP), WHOLE)
    assert baselines.section("s1", TAB, page(cart, document="d3"), AFTER) == ["```yaml", cart, "```"]


def test_changes_over_the_budget_are_cut_with_a_note_and_stay_to_be_read() -> None:
    baselines = Baselines()
    old = catalogue(160)
    baselines.section("s1", TAB, page(old), WHOLE)
    new = re.sub(r'"Product (\d+)"', r'"Item \1"', old)
    told = baselines.section("s1", TAB, page(new), AFTER)
    assert sum(len(line) + 1 for line in told) <= AFTER_ACTION_BUDGET + 400
    assert told[-1].startswith("- Left out: ") and "changes: true" in told[-1] and "[ref=e3]" in told[-1]
    # Nothing was taken as read: the whole of it comes with changes: true.
    whole = baselines.section("s1", TAB, page(new), CHANGES)
    assert whole[1].count('"Item ') == 160 and not whole[-1].startswith("- Left out")
    assert baselines.section("s1", TAB, page(new), AFTER) == ["- No changes since your last snapshot of this tab."]


def test_a_new_page_over_the_budget_comes_folded() -> None:
    told = Baselines().section("s1", TAB, page(catalogue(300)), AFTER)
    yaml = told[told.index("```yaml") + 1]
    assert len(yaml) <= AFTER_ACTION_BUDGET and "more article like these [ref=e3]" in yaml
    assert told[-1].startswith("- Folded to 4000 of its ")


def test_a_part_snapshot_updates_that_part_of_the_baseline() -> None:
    baselines = Baselines()
    baselines.section("s1", TAB, page(SHOP), WHOLE)
    new = SHOP.replace("$12", "$11").replace("Cart (0)", "Cart (1)")
    (products,) = (node for node in parse(new)[1].children if node.ref == "e6")
    part_yaml = "\n".join(render([products]))
    part = PageSnapshot(document="d1", yaml=part_yaml, target="e6")
    told = baselines.section("s1", TAB, part, View(changes=True, budget=SNAPSHOT_BUDGET))
    assert "$11" in "\n".join(told) and "Cart" not in "\n".join(told)
    rest = baselines.section("s1", TAB, page(new), CHANGES)
    assert "Cart (1)" in rest[1] and "$11" not in rest[1]


def test_forgetting_a_session_or_a_tab_drops_their_baselines() -> None:
    baselines = Baselines()
    baselines.section("a", TAB, page(SHOP), WHOLE)
    baselines.section("a", ("b1", 8), page(SHOP), WHOLE)
    baselines.section("b", TAB, page(SHOP), WHOLE)
    baselines.forget_tab(TAB)
    assert len(baselines) == 1
    baselines.forget_session("a")
    assert len(baselines) == 0


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ({"changes": "yes"}, "`changes` must be true or false"),
        ({"maxChars": "10"}, "`maxChars` must be a whole number"),
        ({"maxChars": 0}, "`maxChars` must be a whole number"),
        ({"maxChars": True}, "`maxChars` must be a whole number"),
        ({"changes": True, "depth": 2}, "leave out `depth`"),
    ],
)
def test_bad_view_arguments_are_refused_clearly(args: dict[str, object], words: str) -> None:
    with pytest.raises(InvalidRequest, match=re.escape(words)):
        view_of("snapshot", args)


def test_the_view_arguments_stay_with_the_broker() -> None:
    view, own = view_of("snapshot", {"changes": True, "maxChars": 9000, "target": "e4"})
    assert view == View(changes=True, budget=9000) and own == {"target": "e4"}
    assert view_of("click", {"target": "e4"}) == (attrs.evolve(AFTER, acted_on="e4"), {"target": "e4"})
    # A CSS selector is no ref: nothing in the snapshot is known as acted on.
    assert view_of("click", {"target": "#buy"}) == (AFTER, {"target": "#buy"})


def test_the_section_goes_after_the_results_first_text() -> None:
    result = {"content": [{"type": "text", "text": "### Page\n- Page URL: x"}, {"type": "image", "data": "…"}]}
    out = with_section(result, "Snapshot", ["- No changes."])
    assert out["content"][0]["text"] == "### Page\n- Page URL: x\n### Snapshot\n- No changes."
    assert out["content"][1] == result["content"][1]
    assert with_section({"content": []}, "Snapshot", ["x"]) == {
        "content": [{"type": "text", "text": "### Snapshot\nx"}]
    }


def test_an_element_the_client_never_saw_comes_whole_when_it_moves_into_view() -> None:
    baselines = Baselines()
    old = catalogue(300)
    told = baselines.section("s1", TAB, page(old), AFTER)
    assert "more article like these" in told[told.index("```yaml") + 1]
    # The list's wrapper goes, and its cards move up: one the client saw, one it never did.
    new = old.replace("- list [ref=e3]:\n", "").replace("\n  - article", "\n- article")
    new = "\n".join(line[2:] if line.startswith("    ") else line for line in new.splitlines())
    assert "list [ref=e3]" not in new
    lines = diff(parse(old), parse(new), seen=frozenset({"e1", "e2", "e3", "e10", "e11", "e12"}))
    text = "\n".join(str(line) for line in lines)
    assert "+ - article [ref=e10]:" in text and 'heading "Product 0"' not in text, "seen: its content is known"
    assert '+ - article [ref=e13]:\n+   - heading "Product 1" [level=3] [ref=e14]' in text, "never seen: it comes whole"


def test_items_gone_beside_others_of_another_kind_leave_those_unshown() -> None:
    old = (
        '- navigation "Pages" [ref=e1]:\n  - link "One" [ref=e2]\n  - link "Two" [ref=e3]\n'
        '- generic [ref=e4]:\n  - button "Buy" [ref=e5]'
    )
    new = '- navigation "Pages" [ref=e1]:\n  - link "One" [ref=e2]\n  - link "Two" [ref=e3]\n- button "Buy" [ref=e5]'
    text = changes(old, new)
    assert "Pages" not in text and "- - generic [ref=e4]" in text, text


def test_text_a_page_writes_to_look_like_a_ref_is_not_taken_for_one() -> None:
    old = '- button "Delete [ref=e2]" [ref=e9]\n- paragraph [ref=e3]: see [ref=e2]\n- button "Keep" [ref=e2]'
    nodes = parse(old)
    assert [node.ref for node in nodes] == ["e9", "e3", "e2"]
    # The real e2 changes; the lines that only mention it do not take its place.
    new = old.replace('"Keep" [ref=e2]', '"Keep" [pressed] [ref=e2]')
    assert changes(old, new) == '~ - button "Keep" [pressed] [ref=e2]'


def answer(*sections: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": "\n".join(sections)}, {"type": "image", "data": "AA=="}]}


ADDRESS = "### Page\n- Page URL: https://shop.test/\n- Page Title: Shop"


def test_an_answer_leaves_out_the_address_and_title_the_client_was_told_and_says_them_when_they_change() -> None:
    baselines = Baselines()
    assert not baselines.address_told("s1", TAB, page(SHOP), AFTER)  # the first answer says them
    assert baselines.address_told("s1", TAB, page(SHOP), AFTER)
    assert baselines.address_told("s1", TAB, page(SHOP, document="d2"), CHANGES)  # a reload: the same
    assert not baselines.address_told("s2", TAB, page(SHOP), AFTER), "another client was never told them"
    assert not baselines.address_told("s1", ("b1", 8), page(SHOP), AFTER), "nor in another tab"
    moved = PageSnapshot(document="d3", yaml=SHOP, url="https://shop.test/cart", title="Shop")
    renamed = PageSnapshot(document="d3", yaml=SHOP, url="https://shop.test/cart", title="Cart")
    assert not baselines.address_told("s1", TAB, moved, AFTER)
    assert not baselines.address_told("s1", TAB, renamed, AFTER)
    assert baselines.address_told("s1", TAB, renamed, AFTER)
    # A whole snapshot, which a client may take to find its bearings, says them again.
    assert not baselines.address_told("s1", TAB, renamed, WHOLE)
    baselines.forget_tab(TAB)
    assert not baselines.address_told("s1", TAB, renamed, AFTER)
    baselines.forget_session("s1")
    assert not baselines.address_told("s1", TAB, renamed, AFTER)


def test_leaving_out_the_address_keeps_the_rest_of_the_answer() -> None:
    clicked = answer("### Result\n- Clicked", ADDRESS)
    assert without_address(clicked, page(SHOP)) == answer("### Result\n- Clicked")
    troubled = answer(ADDRESS + "\n- Console: 1 error", "### Modal state\n- none")
    assert without_address(troubled, page(SHOP)) == answer("### Page\n- Console: 1 error", "### Modal state\n- none")
    # Only the Page section's lines, and only the page's own address: a result that quotes them keeps them.
    quoted = answer("### Result\n- Page URL: https://shop.test/", ADDRESS.replace("shop.test/", "shop.test/cart"))
    assert without_address(quoted, page(SHOP)) == answer(
        "### Result\n- Page URL: https://shop.test/", "### Page\n- Page URL: https://shop.test/cart"
    )
    assert without_address({"content": []}, page(SHOP)) == {"content": []}
    assert without_address("text", page(SHOP)) == "text"


FORM = """\
- generic [ref=e1]:
  - form "Sign up" [ref=e2]:
    - generic [ref=e3]:
      - textbox "Name" [active] [ref=e4]: Ada
    - generic [ref=e5]:
      - textbox "Email" [ref=e6]
    - button "[active] offers" [ref=e7]"""


def told(old: str, new: str) -> list[str]:
    return [str(line) for line in diff(parse(old), parse(new))]


def test_a_focus_that_moves_is_told_where_it_went_and_wrappers_without_a_name_are_left_out() -> None:
    typed = FORM.replace(" [active] [ref=e4]", " [ref=e4]").replace(
        '"Email" [ref=e6]', '"Email" [active] [ref=e6]: a@b'
    )
    assert told(FORM, typed) == ['~ - textbox "Email" [active] [ref=e6]: a@b']
    # The element it left is told when it changed otherwise too, as it is now.
    retyped = typed.replace('"Name" [ref=e4]: Ada', '"Name" [ref=e4]: Ada L')
    assert told(FORM, retyped)[0] == '~ - textbox "Name" [ref=e4]: Ada L'
    # A focus lost, taken by nothing shown, is told.
    assert told(FORM, FORM.replace(" [active] [ref=e4]", " [ref=e4]")) == ['~ - textbox "Name" [ref=e4]: Ada']
    # A name that reads "[active]" is the page's text, not the focus.
    pressed = typed.replace('"[active] offers" [ref=e7]', '"[active] offers" [active] [ref=e7]')
    assert told(typed, pressed) == ['~ - button "[active] offers" [active] [ref=e7]']
    # Around what came, a wrapper with a name stays; one without a name or text does not.
    grown = FORM.replace("[ref=e6]", "[ref=e6]\n      - alert [ref=e9]: Required")
    assert told(FORM, grown) == ["+ - alert [ref=e9]: Required"]
    named = FORM.replace("- generic [ref=e5]:", '- generic "Who" [ref=e5]:')
    assert told(named, named.replace("[ref=e6]", "[ref=e6]\n      - alert [ref=e9]: Required")) == [
        '  - generic "Who" [ref=e5]:',
        "+   - alert [ref=e9]: Required",
    ]


def acted(old: str, new: str, ref: str) -> list[str]:
    return [str(line) for line in diff(parse(old), parse(new), acted_on=ref)]


def test_the_focus_the_element_acted_on_took_goes_untold_and_all_else_of_it_is_told() -> None:
    clicked = FORM.replace(" [active] [ref=e4]", " [ref=e4]").replace(
        '"[active] offers" [ref=e7]', '"[active] offers" [active] [ref=e7]'
    )
    # A click on the button: that it took the focus goes without saying; nothing else changed.
    assert acted(FORM, clicked, "e7") == []
    # Done to another element, the same focus is news.
    assert acted(FORM, clicked, "e6") == ['~ - button "[active] offers" [active] [ref=e7]']
    # What else changed on the element acted on is told, as it is now, [active] and all.
    typed = FORM.replace('"Email" [ref=e6]', '"Email" [active] [ref=e6]: a@b').replace(
        " [active] [ref=e4]", " [ref=e4]"
    )
    assert acted(FORM, typed, "e6") == ['~ - textbox "Email" [active] [ref=e6]: a@b']
    renamed = clicked.replace('"[active] offers" [active]', '"Sent" [active] [disabled]')
    assert acted(FORM, renamed, "e7") == ['~ - button "Sent" [active] [disabled] [ref=e7]']
    # A value the action emptied is told, though the focus left it for the element acted on.
    sent = FORM.replace("[active] [ref=e4]: Ada", "[ref=e4]").replace(
        '"[active] offers" [ref=e7]', '"[active] offers" [active] [ref=e7]'
    )
    assert acted(FORM, sent, "e7") == ['~ - textbox "Name" [ref=e4]']


def test_an_action_answer_leaves_out_only_the_focus_of_what_it_acted_on() -> None:
    baselines = Baselines()
    baselines.section("s1", TAB, page(FORM), WHOLE)
    clicked = FORM.replace(" [active] [ref=e4]", " [ref=e4]").replace(
        '"[active] offers" [ref=e7]', '"[active] offers" [active] [ref=e7]\n  - status [ref=e8]: Sent'
    )
    view, _ = view_of("click", {"target": "e7"})
    assert baselines.section("s1", TAB, page(clicked), view) == ["```diff", "+ - status [ref=e8]: Sent", "```"]
    # The page as it is now, the focus too, is the baseline: nothing is left to tell.
    assert baselines.section("s1", TAB, page(clicked), CHANGES) == [
        "- No changes since your last snapshot of this tab."
    ]
