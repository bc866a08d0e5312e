"""The world of the tests that touch the person's records (history, bookmarks, windows): pages of
the module's own, a broker, and headless Chromium with the extension looking for that broker alone,
so that no other run's broker or browser meets the records these tests add and delete."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from ..harness.page_server import serve_pages
from .extension_world import World, open_world


@contextlib.asynccontextmanager
async def records_world(home: Path, pages: dict[str, str]) -> AsyncIterator[World]:
    """``pages`` served, and Chromium (under ``home``) joined to a broker only it probes for."""
    async with serve_pages(pages) as site, open_world(home, site, World, probed=False) as world:
        yield world
