"""End to end: a page that floods the extension with messages stalls no one else.

Every http(s) page may message the extension (the manifest's ``externally_connectable``, which the
polyfill needs to ask for its bridge). ``tests/pages/flood.html``, on another site than the pages
the clients work in (``localhost`` against ``127.0.0.1``: a process of its own, as a hostile site
would have), sends 100,000 messages: the polyfill's WAKE, a kind the extension does not know, and
large ones. Meanwhile a client's click in another tab is answered, and another page's tools are
reported, where before they waited behind the whole flood (about 90 s here, beyond the fake
broker's 40 s wait). The browser, fake broker and page server are ``tests/test_e2e_actions.py``'s.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Page

from broker.core.security import PROJECT_EXTENSION_ID

from .test_e2e_actions import World, ref_of, world

__all__ = ["world"]  # the module's browser, shared by these tests

pytestmark = pytest.mark.asyncio(loop_scope="module")

MESSAGES = 100_000


@pytest_asyncio.fixture(loop_scope="module")
async def flooding(world: World) -> AsyncIterator[Page]:
    """The hostile page, in a tab of the person's, flooding the extension."""
    url = world.url(f"flood.html?id={PROJECT_EXTENSION_ID}").replace("127.0.0.1", "localhost")
    async with world.context.expect_page() as opening:
        await world.worker.evaluate("(url) => chrome.tabs.create({url, active: false})", url)
    page = await opening.value
    await page.wait_for_load_state()
    await page.evaluate(f"flood({MESSAGES})")
    yield page
    await page.close()


async def test_another_tabs_click_is_answered_while_a_page_floods_the_extension(world: World, flooding: Page) -> None:
    tab, page = await world.open("form.html")
    buy = ref_of(await world.ok(tab, "snapshot"), 'button "Buy now"')
    after = await world.ok(tab, "click", target=buy)
    assert "Bought for real" in after, after
    # The flooding document's messaging was cut off in its own world: what it sends reaches no one.
    assert "native code" not in await flooding.evaluate("String(chrome.runtime.sendMessage)")
    await page.close()


async def test_another_pages_tools_are_reported_while_a_page_floods_the_extension(world: World, flooding: Page) -> None:
    tab, page = await world.open("dialogs_page.html")
    reported = await world.link.wait_for(
        "the page's tools",
        lambda m: (
            m.get("type") == "toolsChanged"
            and m.get("tabId") == tab
            and any(tool["name"] == "read_answer" for tool in m["tools"])
        ),
    )
    assert reported["tools"]
    await page.close()
