"""MCP names for page tools: deterministic, valid for every client, unique within a session's list.

A page tool ``search`` on tab 12 is ``t12_search``; when another connected browser also has a tab
12, the browser is named too: ``b2_t12_search``. Names keep to ``[A-Za-z0-9_.-]`` and 64
characters (the strictest limit among MCP clients); a name that had to be altered or shortened,
or that would collide with another, gets a short hash of the tool's full identity appended, so
the same tool always gets the same name. Pure functions, no I/O.

Page text must not pose as the broker's own:

- :func:`page_tool_refusal`: the names a page may give its tools (the extension's
  ``page_tool_names.js``, checked again here for extensions that do not): letters, digits, ``_``,
  ``-`` and ``.``, at most 128, and nothing that reads as one of the broker's own tools
  (``tabs``, ``page_tools``, ``call_page_tool`` or a name ending in one, anything holding
  ``browser_``). A frame's tool is listed as ``f<frameId>_<name>``, a top document's whose name
  looks like that as ``top_<name>``; the rule is for the name the page gave.
- :func:`labelled_description`: the broker's label ``[page tool, tab b1:3, site]`` stands first,
  and the page's description after it cannot take its form: square brackets in it become round
  ones, and anything in brackets beginning "page tool" (a forged label, look-alike characters
  folded first) is taken out.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable

__all__ = [
    "MAX_LENGTH",
    "MAX_PAGE_NAME",
    "labelled_description",
    "name_page_tools",
    "page_tool_refusal",
    "tab_of_page_tool",
]

MAX_LENGTH = 64
_VALID = re.compile(r"[A-Za-z0-9_.-]+")
_INVALID = re.compile(r"[^A-Za-z0-9_.-]")
_PREFIX = re.compile(r"^(?:(b\d+)_)?t(\d+)_")
MAX_PAGE_NAME = 128
_PAGE_NAME = re.compile(f"[A-Za-z0-9_.-]{{1,{MAX_PAGE_NAME}}}")
_OURS = re.compile(r"(?:^|[_.-])(?:tabs|page_tools|call_page_tool)$|browser_", re.IGNORECASE)
_LISTED = re.compile(r"(?:f\d{1,16}|top)_")
_FORGED_LABEL = re.compile(r"[(\[]\W*page\W*tool\b[^)\]\n]{0,300}[)\]]?", re.IGNORECASE)


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


def page_tool_refusal(name: str) -> str | None:
    """Why a page tool listed as ``name`` is left out; None when it may be listed."""
    found = _LISTED.match(name)
    declared = name[found.end() :] if found else name
    if not _PAGE_NAME.fullmatch(declared):
        return f"a page tool's name is at most {MAX_PAGE_NAME} letters, digits, _, - and ."
    if _OURS.search(declared):
        return (
            "tabs, page_tools, call_page_tool and browser_* name the broker's own tools: a page's tool cannot take them"
        )
    return None


def labelled_description(label: str, description: str) -> str:
    """``[label] description``, the page's description unable to pose as the label."""
    page = _FORGED_LABEL.sub("(…)", unicodedata.normalize("NFKC", description))
    page = page.replace("[", "(").replace("]", ")").strip()
    return f"[{label}] {page}" if page else f"[{label}]"
