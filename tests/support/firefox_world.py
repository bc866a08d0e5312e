"""The world the Firefox tests share: headless Firefox ESR with the real extension, joined to a
broker of its own that it trusts and alone probes for, and the site of the test's pages.

One home for what every ``tests/firefox/test_firefox_*.py`` module builds, so each module's fixture says
only what its world has of its own (its pages, prefs, a probe built into the extension).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import aiohttp

from ..harness.chromium import probe_only, trust_broker
from ..harness.firefox import Context, Firefox, extension_firefox
from ..harness.waiting import eventually
from .cli_helpers import BrokerProcess, Brokers
from .mcp_clients import LEGACY, mcp_client


class Fox:
    """The module's Firefox, its broker and its pages' site."""

    def __init__(self, firefox: Firefox, control: Context, broker: BrokerProcess, site: str) -> None:
        self.firefox = firefox
        self.control = control
        self.broker = broker
        self.site = site

    async def status(self) -> Any:
        headers = {"Authorization": f"Bearer {self.broker.token}"}
        async with aiohttp.ClientSession(headers=headers) as http, http.get(f"{self.broker_url}/status") as answer:
            return await answer.json()

    @property
    def broker_url(self) -> str:
        return f"http://127.0.0.1:{self.broker.port}"

    def mcp(self, name: str, caps: str | None = None) -> Any:
        """An MCP client named ``name``, offered the tool groups ``caps`` beside the default ones."""
        query = f"?caps={caps}" if caps else ""
        return mcp_client(f"{self.broker_url}/mcp{query}", self.broker.token, name, LEGACY)

    async def joined(self) -> dict[str, Any] | None:
        browsers = [b for b in (await self.status())["browsers"] if b["connected"]]
        return browsers[0] if browsers else None


@contextlib.asynccontextmanager
async def joined_firefox(
    home: Path, site: str, *, extension: Path | None = None, prefs: Mapping[str, Any] | None = None
) -> AsyncIterator[Fox]:
    """Firefox (under ``home``) joined to a broker of its own, with ``site`` the pages' address;
    ``extension`` and ``prefs`` as :func:`~tests.firefox.extension_firefox` takes them."""
    async with Brokers(home / "discovery") as brokers:
        broker = await brokers.start()
        async with extension_firefox(home / "browser", extension=extension, prefs=prefs) as firefox:
            control = await firefox.extension_page("person/options.html")
            await trust_broker(control, broker.token)
            await probe_only(control, broker.port)
            world = Fox(firefox, control, broker, site)
            await eventually(world.joined, "Firefox to join the broker")
            yield world
