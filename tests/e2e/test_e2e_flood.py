"""End to end: a page that floods the extension stalls no one else.

The page's own world has no extension messaging (the manifest names no web page in
``externally_connectable``): a page that kept a reference to ``chrome.runtime.sendMessage``, or
sends in one loop that never yields, reaches nothing. What it can send is the polyfill's signal to
waker.js, a window event, which brings one request to the worker per document. Before, 100,000
messages kept the worker busy for about 90 s here, beyond the fake broker's 40 s wait for a click.
``tests/pages/flood.html`` runs on another site than the pages the clients work in (``localhost``
against ``127.0.0.1``: a process of its own, as a hostile site would have). Meanwhile a client's
click in another tab is answered, and once the flood is over the flooding page's own tools work.
The browser, fake broker and page server are ``tests/support/actions_world.py``'s.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Page

from broker.core.security import PROJECT_EXTENSION_ID

from ..support.actions_world import World, ref_of, world

__all__ = ["world"]  # the module's browser, shared by these tests

pytestmark = pytest.mark.asyncio(loop_scope="module")

ENDLESS = "Infinity"
# (what, how many, how many between yields): floods that yield run until stopped; one loop holds the
# page's own thread until it ends.
FLOODS = {
    "kept_reference": ("message", ENDLESS, 100),
    "one_loop": ("message", "100000", "100000"),
    "signal": ("signal", ENDLESS, 100),
    "signal_in_one_loop": ("signal", "1000000", "1000000"),
}
names = itertools.count()


@pytest_asyncio.fixture(loop_scope="module", params=list(FLOODS))
async def flooding(world: World, request: pytest.FixtureRequest) -> AsyncIterator[tuple[int, Page]]:
    """The hostile page, in a tab of the session's, flooding the extension as `request.param` says."""
    url = world.url(f"flood.html?id={PROJECT_EXTENSION_ID}&n={next(names)}").replace("127.0.0.1", "localhost")
    async with world.context.expect_page() as opening:
        tab = await world.worker.evaluate(
            "(url) => chrome.tabs.create({url, active: false}).then((tab) => tab.id)", url
        )
    page = await opening.value
    # Its script's own sign, not Playwright's word that the page loaded: under load that word was
    # once never given for a tab the extension opened (30 s, once in a few dozen runs).
    await page.wait_for_function("typeof window.flood === 'function'", polling=100)
    how, count, chunk = FLOODS[request.param]
    await page.evaluate(f"flood({count}, {how!r}, {chunk})")
    yield tab, page
    await page.close()


async def test_another_tabs_click_is_answered_and_the_pages_own_tools_work(
    world: World, flooding: tuple[int, Page]
) -> None:
    flooding_tab, flooder = flooding
    tab, page = await world.open("form.html")
    buy = ref_of(await world.ok(tab, "snapshot"), 'button "Buy now"')
    after = await world.ok(tab, "click", target=buy)
    assert "Bought for real" in after, after
    await page.close()

    await flooder.evaluate("stop()")
    await flooder.wait_for_function("window.done")
    # Nothing of the extension's is there to send to: every message failed in the page.
    reachable, sent, failures = await flooder.evaluate("[window.reachable, window.sent, window.failures]")
    assert not reachable
    assert sent > 0
    if failures:
        assert failures == sent
    await flooder.evaluate(
        """document.modelContext.registerTool({
             name: "flooders_own", description: "Still its own", inputSchema: {type: "object"},
             execute: () => "mine"})"""
    )
    await world.link.wait_for(
        "the flooding page's tool",
        lambda m: (
            m.get("type") == "toolsChanged"
            and m.get("tabId") == flooding_tab
            and any(tool["name"] == "flooders_own" for tool in m["tools"])
        ),
    )
    await world.claim(flooding_tab)
    called = await world.call_tool(flooding_tab, "flooders_own")
    assert called.get("error") is None, called
    assert "mine" in str(called["result"]), called
