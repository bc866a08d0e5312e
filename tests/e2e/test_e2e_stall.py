"""End to end: a page that never finishes loading stalls no one else.

One client (a client token, within its quota) asks again and again for the tools of a tab whose
server sends a byte every two seconds and never ends the page (``GET /tabs/{id}/tools?refresh=true``,
which has the broker ask the extension with ``discoverTools``). Meanwhile another client calls a page
tool in its own tab, on another site (``localhost`` against ``127.0.0.1``). Each of its calls answers
as on a quiet browser, and a refresh of the endless tab answers with what its page has declared so
far, at once: only a tab a broker opened moments ago waits for its page to be parsed. The attack is
``tests/harness/stall_attack.py``'s; the browser and broker ``tests/support/extension_world.py``'s,
with the extension's polyfill.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from ..harness.stall_attack import attack
from ..support.extension_world import World, open_world, site

__all__ = ["site"]  # the module's pages, shared by these tests

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory, site: str) -> AsyncIterator[World]:
    async with open_world(tmp_path_factory.mktemp("e2e-stall"), site, World) as world:
        yield world


async def test_a_page_that_never_loads_delays_no_other_clients_calls(world: World) -> None:
    await attack(world.broker.port, world.token, world.url("modern.html", "caller"))
