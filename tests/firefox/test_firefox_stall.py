"""End to end in Firefox ESR: a page that never finishes loading stalls no one else.

The attack of ``tests/e2e/test_e2e_stall.py`` (``tests/harness/stall_attack.py``), in Firefox:
the WebExtension driver's browser answers the same ``discoverTools`` and ``callTool`` through the
same worker modules.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from ..harness.page_server import serve_pages
from ..harness.stall_attack import attack
from ..support.extension_world import MODERN_PAGE
from ..support.firefox_world import Fox, joined_firefox

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fox]:
    pages = {"modern.html": MODERN_PAGE}
    async with serve_pages(pages) as site, joined_firefox(tmp_path_factory.mktemp("firefox"), site) as world:
        yield world


async def test_a_page_that_never_loads_delays_no_other_clients_calls(fox: Fox) -> None:
    await attack(fox.broker.port, fox.broker.token, f"{fox.site}/modern.html?caller")
