"""The event loop a long-running command runs on: uvloop where it is installed, else asyncio's.

uvloop is a dependency everywhere but Windows; it halves what the loop and the sockets cost,
which is most of the CPU of a call through the broker and of a line through the stdio relay.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

__all__ = ["run"]


def run(main: Coroutine[Any, Any, Any]) -> None:
    try:
        import uvloop  # noqa: PLC0415 - optional: absent on Windows
    except ImportError:
        asyncio.run(main)
    else:
        uvloop.run(main)
