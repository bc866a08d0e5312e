"""End to end in Firefox ESR: the testing group (browser_verify_*, browser_generate_locator) on the
WebExtension driver, through a real broker and the MCP SDK's client, on the page the Chromium test
uses (``tests/pages/testing_tools.html``): the same checks pass and fail with the same words, and
the locators Firefox generates are replayed with Playwright in a plain Chromium
(``tests/support/testing_tools.py``). A page that lies to its main world's scripts changes nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from ..harness.firefox import Context
from ..harness.page_server import serve_test_pages
from ..support.firefox_world import Fox, joined_firefox
from ..support.testing_tools import (
    PAGE,
    check_elements,
    check_lists,
    check_texts,
    check_values,
    expected_locators,
    fails,
    locators,
    open_page,
    passes,
    replay,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fox]:
    async with serve_test_pages() as site, joined_firefox(tmp_path_factory.mktemp("firefox-testing"), site) as world:
        yield world


async def test_firefox_lists_the_testing_tools_to_a_client_that_asks(fox: Fox) -> None:
    async with fox.mcp("tester", caps="testing") as client:
        names = set(await client.tool_names())
    assert {"browser_verify_element_visible", "browser_verify_value", "browser_generate_locator"} <= names


async def test_an_element_shows_in_the_page_its_shadow_root_and_its_frame(fox: Fox) -> None:
    async with fox.mcp("verifier", caps="testing") as client:
        await check_elements(client, fox.site)


async def test_text_shows_only_where_a_person_sees_it(fox: Fox) -> None:
    async with fox.mcp("reader", caps="testing") as client:
        await check_texts(client, fox.site)


async def test_a_list_shows_its_items_or_says_which_it_shows(fox: Fox) -> None:
    async with fox.mcp("lister", caps="testing") as client:
        await check_lists(client, fox.site)


async def test_a_fields_value_is_checked_and_a_wrong_one_named(fox: Fox) -> None:
    async with fox.mcp("checker", caps="testing") as client:
        await check_values(client, fox.site)


async def test_each_generated_locator_finds_its_element_alone_in_playwright(fox: Fox) -> None:
    async with fox.mcp("locator", caps="testing") as client:
        found = await locators(client, await open_page(client, f"{fox.site}/{PAGE}"))
    expected_locators(found)
    await replay(f"{fox.site}/{PAGE}", found)


async def test_a_page_that_lies_to_its_scripts_changes_no_answer(fox: Fox) -> None:
    async with fox.mcp("honest", caps="testing") as plain_client:
        plain = await locators(plain_client, await open_page(plain_client, f"{fox.site}/{PAGE}"))
    async with fox.mcp("attacked", caps="testing") as client:
        page = await open_page(client, f"{fox.site}/{PAGE}?hostile")
        [tab] = [tab for tab in await fox.firefox.contexts() if tab["url"].endswith("?hostile")]
        lying = Context(fox.firefox.bidi, tab["context"])
        assert await lying.evaluate("window.hostile && document.querySelector('h1') === null && getByRole() !== null")
        assert await locators(client, page) == plain
        assert await passes(client, "browser_verify_element_visible", role="button", accessibleName="Delete")
        assert await passes(client, "browser_verify_text_visible", text="Limited edition")
        assert "hidden elements only" in await fails(client, "browser_verify_text_visible", text="Hidden offer")
