"""Tabs named by their refs in what the extension writes for a client.

The extension names its tabs by the browser's own ids, and two connected browsers may share an
id; only the broker knows which browser is which (``b2``). So wherever the extension's own words
name a tab for a client, the broker writes the tab's ref (``b2:12``) in: a built-in tool's "New
tabs" section (``- Tab b2:15: <url> (yours; name it with tab: b2:15)``) and its error messages
about the call's own tab (``no dialog is open in tab b2:12``) or a window's tabs (``tab b2:3,
b2:4 opened in it``). Nothing else of a result is touched: what a page wrote stays as it wrote it.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["named_in_message", "named_in_result"]

_NEW_TABS = re.compile(r"^### New tabs\n(?:- .*(?:\n|$))+", re.MULTILINE)
_NEW_TAB = re.compile(r"^- Tab (\d+): (\S*) \(yours; name it with tab: \1\)$", re.MULTILINE)
_TAB_LIST = re.compile(r"\b([Tt]abs?) (\d+(?:, \d+)*)(?![\d:])")


def named_in_result(result: Any, browser: str) -> Any:
    """A built-in tool's MCP result with the tabs of its "New tabs" section named by their refs."""
    if not isinstance(result, dict) or not isinstance(result.get("content"), list):
        return result
    content = list(result["content"])
    for index, item in enumerate(content):
        if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
            text = item["text"]
            named = _NEW_TABS.sub(lambda section: _NEW_TAB.sub(_ref_line(browser), section[0]), text)
            if named != text:
                content[index] = {**item, "text": named}
                return {**result, "content": content}
    return result


def _ref_line(browser: str) -> Any:
    def line(found: re.Match[str]) -> str:
        ref = f"{browser}:{found[1]}"
        return f"- Tab {ref}: {found[2]} (yours; name it with tab: {ref})"

    return line


def named_in_message(message: str, browser: str, tab_ids: frozenset[int]) -> str:
    """An error message of the extension's with ``tab 12`` (or ``tab 3, 4``) written as refs,
    where every id named is one of ``tab_ids`` (the call's tab, a window's tabs)."""

    def refs(found: re.Match[str]) -> str:
        ids = [int(part) for part in found[2].split(", ")]
        if not set(ids) <= tab_ids:
            return found[0]
        return f"{found[1]} " + ", ".join(f"{browser}:{tab_id}" for tab_id in ids)

    return _TAB_LIST.sub(refs, message)
