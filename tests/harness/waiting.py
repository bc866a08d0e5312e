"""Waiting for what no event announces: a condition polled until it holds, and how long the browser
tests wait for what they expect before they fail."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

WAIT = 15.0


async def eventually(check: Callable[[], Awaitable[Any]], what: str, within: float = WAIT) -> Any:
    """Poll ``check`` until it returns something truthy; fail naming ``what``."""
    last: Any = None
    try:
        async with asyncio.timeout(within):
            while not last:
                last = await check()
                if not last:
                    await asyncio.sleep(0.1)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}; last seen: {last!r}") from None
    return last
