"""End to end in Firefox ESR: what a snapshot leaves out and keeps, and what an action's answer
tells, on the WebExtension driver through a real broker and the MCP SDK's client, with the checks
Chromium passes (``tests/support/lean_snapshots.py``): the page code is shared, so the lines are too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from ..harness.page_server import serve_test_pages
from ..support import lean_snapshots as lean
from ..support.firefox_world import Fox, joined_firefox

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fox]:
    async with serve_test_pages() as site, joined_firefox(tmp_path_factory.mktemp("firefox-lean"), site) as world:
        yield world


async def test_a_snapshot_leaves_out_wrappers_and_labels_said_twice_and_keeps_every_control(fox: Fox) -> None:
    async with fox.mcp("lean") as client:
        await lean.check_lean_checkout(client, f"{fox.site}/pages/{lean.CHECKOUT}")


async def test_a_root_the_page_made_a_control_keeps_its_line_and_takes_a_click(fox: Fox) -> None:
    async with fox.mcp("lean root") as client:
        await lean.check_clickable_root(client, f"{fox.site}/pages/{lean.CLICKABLE_ROOT}")
