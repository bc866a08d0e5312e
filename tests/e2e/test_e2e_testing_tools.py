"""End to end in Chromium: the testing group (browser_verify_*, browser_generate_locator) through a
real broker, the real extension and the MCP SDK's client, on ``tests/pages/testing_tools.html``: look-alike
buttons in list rows, a field named by its placeholder alone, a data-testid, a shadow root, a frame,
a cookie banner, and text hidden three ways (display: none, visibility: hidden, a box of no size).

Each check passes in one line, and fails as an error saying what the page shows instead. Each
generated locator is replayed with Playwright in a plain Chromium of the test's own
(``tests/support/testing_tools.py``); a page that lies to the main world's scripts changes nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from ..harness.page_server import serve_test_pages
from ..support.extension_world import World, open_world
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
    ref_of,
    replay,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

TESTING = {
    "browser_verify_element_visible",
    "browser_verify_text_visible",
    "browser_verify_list_visible",
    "browser_verify_value",
    "browser_generate_locator",
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    async with (
        serve_test_pages() as site,
        open_world(tmp_path_factory.mktemp("e2e-testing"), site, World, probed=False) as world,
    ):
        yield world


async def test_the_testing_tools_are_listed_to_a_client_that_asks_for_them(world: World) -> None:
    async with world.mcp("plain") as plain, world.mcp("tester", caps="testing") as tester:
        assert not TESTING & set(await plain.tool_names())
        tools = await tester.tools()
        assert set(tools) >= TESTING
        for name in TESTING:
            assert tools[name].annotations is not None and tools[name].annotations.read_only_hint, name
        assert tools["browser_verify_value"].input_schema["required"] == ["type", "element", "target", "value"]


async def test_an_element_of_a_role_and_name_shows_in_the_page_its_shadow_root_and_its_frame(world: World) -> None:
    async with world.mcp("verifier", caps="testing") as client:
        await check_elements(client, world.site)


async def test_text_shows_only_where_a_person_sees_it(world: World) -> None:
    async with world.mcp("reader", caps="testing") as client:
        await check_texts(client, world.site)


async def test_a_list_shows_its_items_or_says_which_it_shows(world: World) -> None:
    async with world.mcp("lister", caps="testing") as client:
        await check_lists(client, world.site)


async def test_a_fields_value_is_checked_and_a_wrong_one_named(world: World) -> None:
    async with world.mcp("checker", caps="testing") as client:
        await check_values(client, world.site)


async def test_each_generated_locator_finds_its_element_alone_in_playwright(world: World) -> None:
    async with world.mcp("locator", caps="testing") as client:
        found = await locators(client, await open_page(client, f"{world.site}/{PAGE}"))
    expected_locators(found)
    await replay(f"{world.site}/{PAGE}", found)


async def test_a_page_that_lies_to_its_scripts_changes_no_answer(world: World) -> None:
    async with world.mcp("honest", caps="testing") as plain_client:
        plain = await locators(plain_client, await open_page(plain_client, f"{world.site}/{PAGE}"))
    async with world.mcp("attacked", caps="testing") as client:
        page = await open_page(client, f"{world.site}/{PAGE}?hostile")
        [tab] = [tab for tab in world.context.pages if tab.url.endswith("?hostile")]
        assert await tab.evaluate("window.hostile && document.querySelector('h1') === null && getByRole()")
        assert await locators(client, page) == plain
        assert await passes(client, "browser_verify_element_visible", role="button", accessibleName="Delete")
        assert await passes(client, "browser_verify_text_visible", text="Limited edition")
        assert "hidden elements only" in await fails(client, "browser_verify_text_visible", text="Hidden offer")
        fruits = ref_of(page, r'list "Fruits"')
        assert await passes(client, "browser_verify_list_visible", element="Fruits", target=fruits, items=["Banana"])
