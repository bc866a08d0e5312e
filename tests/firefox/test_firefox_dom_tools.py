"""End to end in Firefox ESR: the dom group (browser_get_text, browser_get_html, browser_inspect,
browser_query) on the WebExtension driver, through a real broker and the MCP SDK's client, on the
page the Chromium test uses (``tests/pages/dom_tools.html``, ``tests/support/dom_tools.py``): the
same answers in the same words, a query's refs taking Firefox's synthetic click, and a page that
lies to its own scripts changing nothing, as the content scripts' isolated world sees the DOM.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from ..harness.firefox import Context
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
from ..support.firefox_world import Fox, joined_firefox

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fox]:
    async with serve_test_pages() as site, joined_firefox(tmp_path_factory.mktemp("firefox-dom"), site) as world:
        yield world


async def test_firefox_lists_the_dom_tools_to_a_client_that_asks(fox: Fox) -> None:
    async with fox.mcp("reader", caps="dom") as client:
        names = set(await client.tool_names())
    assert {"browser_get_text", "browser_get_html", "browser_inspect", "browser_query"} <= names


async def test_an_articles_text_html_and_its_cut(fox: Fox) -> None:
    async with fox.mcp("reader", caps="dom") as client:
        snapshot = await open_page(client, f"{fox.site}/{PAGE}")
        await check_text(client, snapshot)
        await check_cut(client)
        await check_html(client)


async def test_inspect_says_what_covers_a_button_and_reads_states_styles_and_forms(fox: Fox) -> None:
    async with fox.mcp("inspector", caps="dom") as client:
        await open_page(client, f"{fox.site}/{PAGE}")
        await check_inspect(client)


async def test_a_querys_refs_take_a_click_and_a_bad_selector_is_refused(fox: Fox) -> None:
    async with fox.mcp("querier", caps="dom") as client:
        await open_page(client, f"{fox.site}/{PAGE}")
        await check_query(client, lambda: clicked_text(client))


async def test_a_page_that_lies_to_its_scripts_changes_no_answer(fox: Fox) -> None:
    async with fox.mcp("hostile", caps="dom") as client:
        snapshot = await open_page(client, f"{fox.site}/{PAGE}?hostile")
        [tab] = [tab for tab in await fox.firefox.contexts() if tab["url"].endswith("?hostile")]
        lying = Context(fox.firefox.bidi, tab["context"])
        assert await lying.evaluate("window.hostile && document.querySelectorAll('p').length === 0")
        assert await lying.evaluate("document.body.innerText === 'LIED_TEXT'")
        await check_lied_to(client, snapshot)
