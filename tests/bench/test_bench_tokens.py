"""The tokens bench's scripted agent reads answers as a real agent would: whole pages, folded pages,
diffs and "Left out" notes in the format the broker answers with, Playwright MCP's linked files,
and the older answers too large to hold a snapshot. A server scripted answer by answer stands in
for the MCP server; what is checked is which calls the agent makes and what it counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types

from scripts.benchmarks.support.shop_pages import shop_page
from scripts.benchmarks.tokens import flows as bench_tokens_flows
from scripts.benchmarks.tokens.agent import Agent

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
