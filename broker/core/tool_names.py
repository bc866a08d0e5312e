"""MCP names for page tools: deterministic, valid for every client, unique within a session's list.

A page tool ``search`` on tab 12 is ``t12_search``; when another connected browser also has a tab
12, the browser is named too: ``b2_t12_search``. Names keep to ``[A-Za-z0-9_.-]`` and 64
characters (the strictest limit among MCP clients); a name that had to be altered or shortened,
or that would collide with another, gets a short hash of the tool's full identity appended, so
the same tool always gets the same name. Pure functions, no I/O.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

__all__ = ["MAX_LENGTH", "name_page_tools", "tab_of_page_tool"]

MAX_LENGTH = 64
_VALID = re.compile(r"[A-Za-z0-9_.-]+")
_INVALID = re.compile(r"[^A-Za-z0-9_.-]")
_PREFIX = re.compile(r"^(?:(b\d+)_)?t(\d+)_")


def _digest(browser: str, tab_id: int, tool: str, attempt: int = 0) -> str:
    identity = f"{browser}:{tab_id}:{tool}" + (f":{attempt}" if attempt else "")
    return hashlib.sha1(identity.encode(), usedforsecurity=False).hexdigest()[:6]


def name_page_tools(tools: Iterable[tuple[str, int, str]], shared_tab_ids: frozenset[int]) -> list[str]:
    """Name each ``(browser, tab id, tool name)``; ``shared_tab_ids`` are ids several browsers have."""
    named: list[str] = []
    taken: set[str] = set()
    for browser, tab_id, tool in tools:
        name = f"{browser}_t{tab_id}_{tool}" if tab_id in shared_tab_ids else f"t{tab_id}_{tool}"
        attempt = 0
        while len(name) > MAX_LENGTH or name in taken or not _VALID.fullmatch(name):
            # A crafted name can equal another's altered one; the next attempt hashes differently.
            suffix = "_" + _digest(browser, tab_id, tool, attempt)
            plain = f"{browser}_t{tab_id}_{tool}" if tab_id in shared_tab_ids else f"t{tab_id}_{tool}"
            name = _INVALID.sub("_", plain)[: MAX_LENGTH - len(suffix)] + suffix
            attempt += 1
        taken.add(name)
        named.append(name)
    return named


def tab_of_page_tool(name: str) -> str | None:
    """The tab a page tool name points at (``b1:12``, or ``12`` when the name gives no browser)."""
    found = _PREFIX.match(name)
    if found is None:
        return None
    browser, tab_id = found.groups()
    return f"{browser}:{tab_id}" if browser else tab_id
