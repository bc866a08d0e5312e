"""The tokens bench's scripted agent reads answers as a real agent would: whole pages, folded pages,
diffs and "Left out" notes in the format the broker answers with, Playwright MCP's linked files,
the older answers too large to hold a snapshot, and chrome-devtools-mcp's `uid=` snapshots, its
calls translated from the flows' ones. A server scripted answer by answer stands in
for the MCP server; what is checked is which calls the agent makes and what it counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from scripts.benchmarks.support.shop_pages import shop_page
from scripts.benchmarks.tokens import flows as bench_tokens_flows
from scripts.benchmarks.tokens.agent import Agent, FlowFailed
from scripts.benchmarks.tokens.dialects import DEVTOOLS

NEW_PAGE = """### Page
- Page URL: http://127.0.0.1/shop
### Snapshot
- A new page since your last snapshot of this tab (or your first snapshot of it): the whole page.
```yaml
- banner [ref=e1]:
  - link "Cart (0)" [ref=e2]
- searchbox "Search" [ref=e3]
- list [ref=e4]:
  - listitem [ref=e5]:
    - link "Classic desk lamp 82" [ref=e6]
  - … 180 more listitem like these [ref=e4]
```
- Left out: 180 list items, folded: browser_snapshot with `target` set to e4 shows them.
"""
FOLDED_PART = """### Snapshot
```yaml
- list [ref=e4]:
  - listitem [ref=e7]:
    - link "Quiet desk lamp 63" [ref=e8]
```
"""
CHANGES_LINE = (
    "- Changes since your last snapshot of this tab: + added, - removed, ~ changed (shown as it is now);"
    " unmarked lines are their context.\n"
)
CHANGES = (
    "### Snapshot\n"
    + CHANGES_LINE
    + """```diff
  - banner [ref=e1]:
~   - link "Cart (1)" [ref=e2]
  - list [ref=e4]:
-   - listitem [ref=e5]:
-     - link "Classic desk lamp 82" [ref=e6]
+   - 'button "Add to cart: Eco mug 3" [ref=e9]': Add to cart
```
"""
)
CHANGES_LEFT_OUT = (
    "### Snapshot\n"
    + CHANGES_LINE
    + """```diff
+ - paragraph [ref=e20]: Total: $1.00
```
- Left out: 3,000 more characters of changes: browser_snapshot with changes: true shows them all.
"""
)
ALL_CHANGES = """### Snapshot
```diff
+ - paragraph [ref=e20]: Total: $1.00
+ - paragraph [ref=e21]: 2 items
```
"""


class ScriptedServer:
    """An MCP server's answers, one per call, in order; the calls it was made."""

    def __init__(self, *answers: str | types.CallToolResult) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        self.calls.append((name, arguments))
        answer = self.answers.pop(0)
        if isinstance(answer, types.CallToolResult):
            return answer
        return types.CallToolResult(content=[types.TextContent(text=answer)])


def agent_of(server: ScriptedServer, reads: str = "answer", workdir: Path | None = None) -> Agent:
    agent = Agent("ours", server, reads, workdir)  # type: ignore[arg-type]
    agent.start("task")
    return agent


async def agent_at_the_shop(*answers: str) -> tuple[ScriptedServer, Agent]:
    """A server scripted with ``answers``, and an agent that navigated to the shop through it (the
    first answer read)."""
    server = ScriptedServer(*answers)
    agent = agent_of(server)
    await agent.act("browser_navigate", {"url": "http://127.0.0.1/shop"})
    return server, agent


async def test_a_folded_page_costs_a_call_only_for_a_ref_inside_a_fold() -> None:
    server, agent = await agent_at_the_shop(NEW_PAGE, FOLDED_PART)

    assert await agent.ref("searchbox", "Search") == "e3"
    assert len(server.calls) == 1
    assert await agent.ref("link", "Quiet desk lamp 63", within="listitem") == "e8"
    assert server.calls[-1] == ("browser_snapshot", {"target": "e4"})
    assert (agent.flow.calls, agent.flow.chars) == (2, len(NEW_PAGE) + len(FOLDED_PART))


async def test_a_diff_is_applied_to_what_the_agent_read() -> None:
    server, agent = await agent_at_the_shop(NEW_PAGE, CHANGES)
    await agent.act("browser_click", {"target": "e6"})

    assert agent.view.find("link", "Cart (1)") == "e2"
    assert agent.view.find("link", "Cart (0)") is None
    assert agent.view.find("link", "Classic desk lamp 82") is None
    assert agent.view.find_all("button", r"Add to cart: [^\"]+") == [("Add to cart: Eco mug 3", "e9")]
    assert agent.view.find("searchbox", "Search") == "e3"
    assert len(server.calls) == 2


async def test_changes_left_out_are_read_at_once_and_a_broker_without_changes_gets_a_plain_snapshot() -> None:
    server = ScriptedServer(CHANGES_LEFT_OUT, ALL_CHANGES)
    agent = agent_of(server)
    await agent.act("browser_type", {"target": "e10", "text": "2"})
    assert server.calls[-1] == ("browser_snapshot", {"changes": True})
    await agent.expect("2 items")
    assert agent.flow.calls == 2

    refused = types.CallToolResult(content=[types.TextContent(text="invalid_arguments: changes")], is_error=True)
    server = ScriptedServer(CHANGES_LEFT_OUT, refused, "```yaml\n- paragraph [ref=e21]: 2 items\n```\n")
    agent = agent_of(server)
    await agent.act("browser_type", {"target": "e10", "text": "2"})
    assert server.calls[-2:] == [("browser_snapshot", {"changes": True}), ("browser_snapshot", {})]
    assert agent.view.shows("2 items")
    assert agent.flow.calls == 2  # the refused call is the bench's, not the agent's: not counted
    assert agent.rejects_changes


async def test_an_answer_too_large_to_hold_the_page_is_followed_by_a_snapshot() -> None:
    too_large = "### Snapshot\n- The page's snapshot has 77396 characters: call browser_snapshot to read it.\n"
    server, agent = await agent_at_the_shop(too_large, '```yaml\n- searchbox "Search" [ref=e3]\n```\n')
    assert server.calls[-1] == ("browser_snapshot", {})
    assert await agent.ref("searchbox", "Search") == "e3"


async def test_playwright_mcps_linked_snapshot_file_counts_as_a_call_and_its_characters(tmp_path: Path) -> None:
    (tmp_path / "output").mkdir()
    page = '- generic [ref=e1]:\n  - button "Add one" [ref=e4]\n'
    (tmp_path / "output" / "page-1.yml").write_text(page)
    answer = "### Page\n- Page URL: http://127.0.0.1/small\n### Snapshot\n- [Snapshot](output/page-1.yml)\n"
    server = ScriptedServer(answer)
    agent = agent_of(server, "linked", tmp_path)
    await agent.act("browser_click", {"target": "e4"})
    assert await agent.ref("button", "Add one") == "e4"
    assert (agent.flow.calls, agent.flow.chars) == (2, len(answer) + len(page))


def test_the_shop_task_finds_its_product_in_the_generated_catalogue() -> None:
    shop = shop_page(160)
    wanted = bench_tokens_flows.wanted_product(shop)
    assert bench_tokens_flows.SEARCH in wanted.name.lower()
    assert wanted.category == bench_tokens_flows.WANTED_CATEGORY


async def test_a_left_out_line_naming_nothing_to_call_leaves_the_whole_page_for_when_the_agent_needs_it() -> None:
    folded = (
        '### Snapshot\n```yaml\n- searchbox "Search" [ref=e3]\n- … 1,180 more article like these [ref=e4]\n```\n'
        "- Left out: 40,000 characters of the page.\n"
    )
    whole = '```yaml\n- searchbox "Search" [ref=e3]\n- link "Eco mug 1" [ref=e5]\n- /url: /product/1\n```\n'
    removed_url = '```diff\n- - /url: /product/1\n~ - link "Eco mug 1" [ref=e5]: gone\n```\n'
    server, agent = await agent_at_the_shop(folded, whole, removed_url)
    assert len(server.calls) == 1
    assert agent.view.folds() == [("article", "e4")]
    # The fold is expanded first; its part does not hold the link, so the whole page is read.
    server.answers.insert(0, "```yaml\n- article [ref=e4]\n```\n")
    assert await agent.ref("link", "Eco mug 1", within="article") == "e5"
    assert server.calls[1:] == [("browser_snapshot", {"target": "e4"}), ("browser_snapshot", {})]
    await agent.act("browser_click", {"target": "e5"})
    assert not agent.view.shows("/url: /product/1")
    assert agent.view.shows('link "Eco mug 1" [ref=e5]: gone')


async def test_an_element_a_diff_shows_without_what_it_holds_is_expanded_and_folds_of_other_items_are_not() -> None:
    folded = (
        "```yaml\n- navigation [ref=e2]:\n  - listitem [ref=e3]\n  - … 9 more listitem like these [ref=e2]\n"
        "- generic [ref=e60]:\n  - article [ref=e61]\n  - … 159 more article like these [ref=e60]\n```\n"
    )
    moved = "```diff\n- - generic [ref=e60]\n+ - article [ref=e547]:\n```\n"
    article = '```yaml\n- article [ref=e547]:\n  - link "Classic desk lamp 82" [ref=e549]\n```\n'
    server, agent = await agent_at_the_shop(folded, moved, article)
    await agent.act("browser_select_option", {"target": "e46", "values": ["Office"]})
    assert agent.view.unexpanded == ["e547"]
    assert await agent.ref("link", "Classic desk lamp 82", within="article") == "e549"
    assert server.calls[-1] == ("browser_snapshot", {"target": "e547"})

    # A link among none of the folded items' kind: the whole page, not the navigation's fold.
    server.answers.append('```yaml\n- link "Sale" [ref=e9]\n```\n')
    assert await agent.ref("link", "Sale", within="article") == "e9"
    assert server.calls[-1] == ("browser_snapshot", {})


# chrome-devtools-mcp: its own tools, each with the task's pageId, and its `uid=` snapshots; its actions
# answer a line, so the agent reads a take_snapshot only when what it read lacks what it needs.

DEVTOOLS_NEW_PAGE = "## Pages\n1: about:blank\n2: Newsletter (http://127.0.0.1/small-form) [selected]\n"
DEVTOOLS_FORM = """## Latest page snapshot
uid=1_0 RootWebArea "Newsletter" url="http://127.0.0.1/small-form"
  uid=1_1 heading "Newsletter" level="1"
  uid=1_2 form
    uid=1_3 "Name "
    uid=1_4 textbox "Name"
    uid=1_5 combobox "Plan" expandable haspopup="menu" value="Free"
      uid=1_6 option "Free" selected
    uid=1_7 button "Sign up"
    uid=1_8 button "Sign up later"
  uid=1_9 status atomic live="polite" relevant="additions text"
"""
FILLED = "Successfully filled out the element\n"
CLICKED = "Successfully clicked on the element\n"


def devtools_agent(*answers: str | types.CallToolResult) -> tuple[ScriptedServer, Agent]:
    server = ScriptedServer(*answers)
    agent = Agent("chrome-devtools", server, "asked", dialect=DEVTOOLS)  # type: ignore[arg-type]
    agent.start("task")
    return server, agent


async def test_devtools_refs_are_read_from_its_uid_lines_and_each_call_is_translated_with_the_tasks_page() -> None:
    server, agent = devtools_agent(DEVTOOLS_NEW_PAGE, DEVTOOLS_FORM, FILLED, FILLED, CLICKED)
    await agent.act("browser_navigate", {"url": "http://127.0.0.1/small-form"})
    assert server.calls == [("new_page", {"url": "http://127.0.0.1/small-form"})]
    assert agent.page == 2

    name = await agent.ref("textbox", "Name")
    assert name == "1_4"
    assert server.calls[-1] == ("take_snapshot", {"pageId": 2})
    # The exact name: "Sign up", not "Sign up later"; a ref already read costs no call.
    assert await agent.ref("button", "Sign up") == "1_7"
    assert await agent.ref("combobox", "Plan") == "1_5"
    assert len(server.calls) == 2
    await agent.act("browser_type", {"element": "Name", "target": name, "text": "Ada"})
    await agent.act("browser_select_option", {"element": "Plan", "target": "1_5", "values": ["Pro"]})
    await agent.act("browser_click", {"element": "Sign up", "target": "1_7"})
    assert server.calls[2:] == [
        ("fill", {"pageId": 2, "uid": "1_4", "value": "Ada"}),
        ("fill", {"pageId": 2, "uid": "1_5", "value": "Pro"}),
        ("click", {"pageId": 2, "uid": "1_7"}),
    ]
    assert agent.flow.chars == sum(map(len, (DEVTOOLS_NEW_PAGE, DEVTOOLS_FORM, FILLED, FILLED, CLICKED)))
    assert agent.flow.by_tool["take_snapshot"] == len(DEVTOOLS_FORM)


async def test_devtools_answers_without_the_state_cost_a_snapshot_only_when_the_agent_needs_it() -> None:
    signed_up = DEVTOOLS_FORM + '    uid=3_0 "Signed up: Ada Lovelace"\n'
    server, agent = devtools_agent(DEVTOOLS_NEW_PAGE, DEVTOOLS_FORM, CLICKED, signed_up)
    await agent.act("browser_navigate", {"url": "http://127.0.0.1/small-form"})
    await agent.ref("button", "Sign up")
    await agent.act("browser_click", {"element": "Sign up", "target": "1_7"})
    assert len(server.calls) == 3  # the click's answer carries no page, and no snapshot follows it at once
    await agent.expect("Signed up: Ada Lovelace")
    assert server.calls[-1] == ("take_snapshot", {"pageId": 2})
    await agent.expect("Signed up: Ada Lovelace")
    assert len(server.calls) == 4


async def test_devtools_an_answer_saying_the_page_navigated_makes_the_agent_read_it_anew() -> None:
    navigated = CLICKED + "Page navigated to http://127.0.0.1/welcome.\n"
    welcome = '## Latest page snapshot\nuid=4_0 RootWebArea "Welcome"\n  uid=4_1 button "Sign up"\n'
    server, agent = devtools_agent(DEVTOOLS_NEW_PAGE, DEVTOOLS_FORM, navigated, welcome)
    await agent.act("browser_navigate", {"url": "http://127.0.0.1/small-form"})
    await agent.ref("button", "Sign up")
    await agent.act("browser_click", {"element": "Sign up", "target": "1_7"})
    # The ref read on the last document is gone with it: the new page's is read.
    assert await agent.ref("button", "Sign up") == "4_1"
    assert server.calls[-1] == ("take_snapshot", {"pageId": 2})


async def test_devtools_dialogs_forms_and_the_small_flows_checks_in_its_format() -> None:
    dialog = (
        "The element was clicked and it opened a dialog.\n# Open dialog\nconfirm: Send this request?.\n"
        "Call handle_dialog to handle it before continuing.\n"
    )
    server, agent = devtools_agent(DEVTOOLS_NEW_PAGE, "Successfully filled out the form\n", dialog, "accepted\n")
    await agent.act("browser_navigate", {"url": "http://127.0.0.1/support"})
    fields = [
        {"name": "Name", "type": "textbox", "target": "1_4", "value": "Ada"},
        {"name": "Terms", "type": "checkbox", "target": "1_9", "value": "true"},
    ]
    await agent.act("browser_fill_form", {"fields": fields})
    answer = await agent.act("browser_click", {"element": "Send", "target": "1_7"})
    assert agent.opened_dialog(answer)
    await agent.act("browser_handle_dialog", {"accept": True})
    assert server.calls[1:] == [
        ("fill_form", {"pageId": 2, "elements": [{"uid": "1_4", "value": "Ada"}, {"uid": "1_9", "value": "true"}]}),
        ("click", {"pageId": 2, "uid": "1_7"}),
        ("handle_dialog", {"pageId": 2, "action": "accept"}),
    ]

    # A saved note is a text line of its own (its list kept as the text it holds); the field's value is not one.
    agent.view.replace('uid=1_4 textbox "Note" value="Order paper"\nuid=2_0 "Buy ink"')
    assert DEVTOOLS.item("Buy ink").search(agent.view.text)
    assert not DEVTOOLS.item("Order paper").search(agent.view.text)
    assert DEVTOOLS.field_value("textbox", "Note", "Order paper").search(agent.view.text)
    assert not DEVTOOLS.field_value("textbox", "Note", "Buy ink").search(agent.view.text)


async def test_devtools_the_tasks_page_is_closed_uncounted_and_a_call_it_has_no_counterpart_for_fails() -> None:
    server, agent = devtools_agent(DEVTOOLS_NEW_PAGE, "## Pages\n1: about:blank [selected]\n")
    await agent.act("browser_navigate", {"url": "http://127.0.0.1/small-form"})
    with pytest.raises(FlowFailed, match="browser_find"):
        await agent.call("browser_find", {"text": "lamp"})
    calls, chars = agent.flow.calls, agent.flow.chars
    await agent.finish()
    assert server.calls[-1] == ("close_page", {"pageId": 2})
    assert (agent.flow.calls, agent.flow.chars, agent.page) == (calls, chars, None)
