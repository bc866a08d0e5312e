"""End to end in Chromium: the dom group (browser_get_text, browser_get_html, browser_inspect,
browser_query) through a real broker, the real extension and the MCP SDK's client, on
``tests/pages/dom_tools.html``, a news article built as sites are (``tests/support/dom_tools.py``).

The article's text keeps its headings, table, lists and links as Markdown and drops its scripts and
hidden text, at a fraction of the snapshot's characters; a button under a promotion is said to be
covered, by it; password values never show; a query's refs take browser_click; a page that lies to
its own scripts (querySelectorAll, getComputedStyle, innerText ...) changes no answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from ..harness.page_server import serve_test_pages
from ..support.dom_tools import (
    PAGE,
    check_cut,
    check_html,
    check_inspect,
    check_lied_to,
    check_query,
    check_text,
    clicked_text,
    open_page,
)
from ..support.extension_world import World, open_world

pytestmark = pytest.mark.asyncio(loop_scope="module")

DOM = {"browser_get_text", "browser_get_html", "browser_inspect", "browser_query"}
# The goal: the article's text at most this share of its snapshot's characters.
TEXT_SHARE = 0.3


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    async with (
        serve_test_pages() as site,
        open_world(tmp_path_factory.mktemp("e2e-dom"), site, World, probed=False) as world,
    ):
        yield world


async def test_the_dom_tools_are_listed_read_only_to_a_client_that_asks_for_them(world: World) -> None:
    async with world.mcp("plain") as plain, world.mcp("reader", caps="dom") as reader:
        assert not DOM & set(await plain.tool_names())
        tools = await reader.tools()
        assert set(tools) >= DOM
        for name in DOM:
            annotations = tools[name].annotations
            assert annotations is not None and annotations.read_only_hint and not annotations.destructive_hint, name
        assert tools["browser_inspect"].input_schema["required"] == ["target", "what"]
        assert tools["browser_query"].input_schema["required"] == ["selector"]


async def test_an_articles_text_keeps_its_shape_and_drops_scripts_and_hidden_text(world: World) -> None:
    async with world.mcp("reader", caps="dom") as client:
        snapshot = await open_page(client, f"{world.site}/{PAGE}")
        article = await check_text(client, snapshot)
        await check_cut(client)
    share = len(article) / len(snapshot)
    print(f"get_text {len(article)} characters, snapshot {len(snapshot)}: {share:.2f}x")
    assert share <= TEXT_SHARE


async def test_html_of_an_element_and_of_the_page_never_holds_a_password(world: World) -> None:
    async with world.mcp("html", caps="dom") as client:
        await open_page(client, f"{world.site}/{PAGE}")
        await check_html(client)


async def test_inspect_says_what_covers_a_button_and_reads_states_styles_and_forms(world: World) -> None:
    async with world.mcp("inspector", caps="dom") as client:
        await open_page(client, f"{world.site}/{PAGE}")
        await check_inspect(client)


async def test_a_querys_refs_take_a_click_and_a_bad_selector_is_refused(world: World) -> None:
    async with world.mcp("querier", caps="dom") as client:
        await open_page(client, f"{world.site}/{PAGE}")
        await check_query(client, lambda: clicked_text(client))


async def test_a_page_that_lies_to_its_scripts_changes_no_answer(world: World) -> None:
    async with world.mcp("hostile", caps="dom") as client:
        snapshot = await open_page(client, f"{world.site}/{PAGE}?hostile")
        [tab] = [tab for tab in world.context.pages if tab.url.endswith("?hostile")]
        assert await tab.evaluate("window.hostile && document.querySelectorAll('p').length === 0")
        assert await tab.evaluate("document.body.innerText === 'LIED_TEXT'")
        await check_lied_to(client, snapshot)
