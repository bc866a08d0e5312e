"""End to end: the toolbar icon's states and version skew, in the real extension in headless Chromium.

The extension joins a scripted broker (``tests/support/fake_broker.py``) that says, on its link's
``connect``, that it needs a newer extension than this one. The toolbar's tooltip and badge, which
``extension/person/toolbar.js`` draws with the icon from one state, follow the link and the pause: not
connected before the extension trusts the broker, connected once it joined, paused while the
person pauses agents, not connected again once the broker is gone. The popup names the skew with
what to do (its picture is saved in ``tests/output/e2e_toolbar``).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import BrowserContext, Page, Worker

from broker.core.security import PROJECT_EXTENSION_ID
from broker.version import VERSION

from ..harness.chromium import extension_chromium, instance_id, trust_broker
from ..harness.waiting import eventually
from ..support.fake_broker import FAKE_TOKEN, FakeBroker

pytestmark = pytest.mark.asyncio(loop_scope="module")

OUTPUT = Path(os.environ.get("BROWSER_MCP_E2E_OUTPUT") or Path(__file__).parents[1] / "output") / "e2e_toolbar"
WAIT = 20.0
NEEDED = "99.0"
NOT_CONNECTED = "browser-mcp: not connected to a broker"
CONNECTED = "browser-mcp: connected; AI agents reach the tabs they claim"
PAUSED = "browser-mcp: AI agents paused"


class World:
    def __init__(self, context: BrowserContext, worker: Worker, broker: FakeBroker) -> None:
        self.context = context
        self.worker = worker
        self.broker = broker

    async def toolbar(self) -> tuple[str, str]:
        """The toolbar's tooltip and badge text, as the browser shows them."""
        title: str = await self.worker.evaluate("chrome.action.getTitle({})")
        badge: str = await self.worker.evaluate("chrome.action.getBadgeText({})")
        return title, badge

    async def shows(self, title: str, badge: str = "") -> None:
        async def drawn() -> bool:
            return await self.toolbar() == (title, badge)

        await eventually(drawn, f"the toolbar to say {title!r} with badge {badge!r}", WAIT)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    home = tmp_path_factory.mktemp("toolbar")
    broker = FakeBroker({"type": "connect", "serverVersion": "9.0.0", "minExtensionVersion": NEEDED, "sessionIds": []})
    await broker.start()
    try:
        async with extension_chromium(home) as (context, worker):
            yield World(context, worker, broker)
    finally:
        await broker.stop()


async def _popup(world: World) -> Page:
    popup = await world.context.new_page()
    await popup.set_viewport_size({"width": 424, "height": 600})
    await popup.goto(f"chrome-extension://{PROJECT_EXTENSION_ID}/person/popup.html")
    return popup


async def _text_has(popup: Page, selector: str, words: str) -> bool:
    return words in await popup.locator(selector).inner_text()


async def test_the_toolbar_and_the_popup_tell_the_link_the_pause_and_the_skew(world: World) -> None:
    # Before the extension trusts the broker it found, nothing is joined.
    await world.shows(NOT_CONNECTED)

    await trust_broker(world.worker, FAKE_TOKEN)
    link = await world.broker.link_of(await instance_id(world.worker, WAIT))
    snapshot = next(m for m in link.inbox if m.get("type") == "connected")
    assert snapshot["extensionVersion"] == VERSION
    await world.shows(CONNECTED)

    popup = await _popup(world)
    told = f"This extension ({VERSION}) is older than this broker needs ({NEEDED})"
    await eventually(lambda: _text_has(popup, "#brokers", told), "the popup to name the outdated extension", WAIT)
    brokers = await popup.locator("#brokers").inner_text()
    assert "broker 9.0.0" in brokers
    assert "browser-mcp extension path" in brokers
    assert "chrome://extensions" in brokers
    assert f"extension {VERSION}" in await popup.locator("footer").inner_text()
    await popup.locator("body").screenshot(path=str(OUTPUT / "popup-outdated.png"))

    await popup.locator("#pause").click()
    await world.shows(PAUSED, "II")
    await popup.locator("#pause").click()
    await world.shows(CONNECTED)
    await popup.close()

    await world.broker.stop()
    await world.shows(NOT_CONNECTED)
