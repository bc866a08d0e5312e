"""How the tokens bench's scripted agent speaks to each side: the tools' names and arguments, and how
their snapshots are read.

The flows (:mod:`.flows`) are written once, in Playwright MCP's tool names (``browser_click`` with
``target``, ``browser_fill_form`` with ``fields``...), which ours and Playwright MCP both take and whose
snapshots are YAML lines (``- button "Save" [ref=e4]``): :data:`YAML`. chrome-devtools-mcp has tools
of its own (``click`` with ``uid``, ``fill_form`` with ``elements``..., every page-scoped one with
the ``pageId`` of the page it acts in) and snapshots of its own, a ``## Latest page snapshot`` of
lines ``uid=1_2 button "Save" focusable`` indented by depth: :data:`DEVTOOLS` translates each call
and reads those lines. The agent's logic, when to read and what, is the same on every side.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["BLOCK", "DEVTOOLS", "Dialect", "DevtoolsDialect", "Untranslated", "YAML", "yaml_line", "yaml_lines"]

# A fenced block of an answer: ```yaml or ```diff, up to its closing fence.
BLOCK = re.compile(r"^```(yaml|diff)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def yaml_line(role: str, name: str) -> re.Pattern[str]:
    """A snapshot line of the element of ``role`` named ``name`` exactly, with its ref; quoted or not in YAML."""
    return re.compile(
        rf'^\s*-\s+\'?{re.escape(role)}\s+"{re.escape(name)}"[^\n]*?\[ref=(?P<ref>[^\]\s]+)\]', re.MULTILINE
    )


def yaml_lines(role: str, name_pattern: str) -> re.Pattern[str]:
    """Snapshot lines of elements of ``role`` whose name matches ``name_pattern``: the name, then the ref."""
    return re.compile(
        rf'^\s*-\s+\'?{re.escape(role)}\s+"(?P<name>{name_pattern})"[^\n]*?\[ref=(?P<ref>[^\]\s]+)\]', re.MULTILINE
    )


class Untranslated(Exception):
    """A flow made a call that the side's dialect has no translation for."""


class Dialect:
    """Playwright MCP's tools and YAML snapshots, which ours answers in too: calls go as the flows make them."""

    name = "yaml"
    # What an answer says when a dialog holds the page (the next call answers it).
    modal = "### Modal state"
    # The ref of a snapshot's line.
    ref = re.compile(r"\[ref=([^\]\s]+)\]")
    # Closing the page a flow opened, once it is done: the bench's, not the agent's (never counted).
    closes_pages = False

    def line(self, role: str, name: str) -> re.Pattern[str]:
        """The line of the element of ``role`` named ``name`` exactly; its group ``ref``."""
        return yaml_line(role, name)

    def lines(self, role: str, name_pattern: str) -> re.Pattern[str]:
        """Lines of elements of ``role`` whose name matches; groups ``name`` and ``ref``."""
        return yaml_lines(role, name_pattern)

    def item(self, text: str) -> re.Pattern[str]:
        """A line that is an item of a list reading ``text``, and nothing else."""
        return re.compile(rf"^\s*- listitem(?: \[ref=[^\]\s]+\])?: {re.escape(text)}$", re.MULTILINE)

    def field_value(self, role: str, name: str, value: str) -> re.Pattern[str]:
        """The line of a field of ``role`` named ``name`` showing ``value``."""
        return re.compile(rf'{re.escape(role)} "{re.escape(name)}"[^\n]*: {re.escape(value)}$', re.MULTILINE)

    def blocks(self, text: str) -> list[tuple[str, str]]:
        """What an answer shows of the page: ("yaml", a page or a part) or ("diff", changes), in order."""
        return [(kind, body) for kind, body in BLOCK.findall(text)]

    def translate(self, tool: str, arguments: dict[str, Any], page: int | None) -> tuple[str, dict[str, Any]]:
        """The side's call for the flow's ``tool`` with ``arguments``, in the page ``page`` (None: none yet)."""
        return tool, arguments

    def new_document(self, text: str) -> bool:
        """The answer says that the page is another document now (what was read of it is gone)."""
        return False

    def page_of(self, text: str) -> int | None:
        """The page the answer says the side acts in now, if it says."""
        return None


# chrome-devtools-mcp: `uid=1_4 textbox "Name" focusable focused value="Ada"`; a text: `uid=1_3 "Name "`.
_UID_LINE = r"^[ \t]*uid=(?P<ref>\S+) "
_PAGES_SELECTED = re.compile(r"^(\d+): [^\n]*\[selected\]$", re.MULTILINE)
_NAVIGATED = re.compile(r"^(?:Successfully navigated to |Page navigated to )", re.MULTILINE)
SNAPSHOT_HEADING = "## Latest page snapshot\n"


class DevtoolsDialect(Dialect):
    """chrome-devtools-mcp 1.11.0's tools and snapshots, with its defaults (``pageId`` routing on)."""

    name = "chrome-devtools-mcp"
    modal = "# Open dialog"
    ref = re.compile(r"^[ \t]*uid=(\S+)", re.MULTILINE)
    closes_pages = True

    def line(self, role: str, name: str) -> re.Pattern[str]:
        return re.compile(rf'{_UID_LINE}{re.escape(role)} "{re.escape(name)}"(?=[ \t]|$)', re.MULTILINE)

    def lines(self, role: str, name_pattern: str) -> re.Pattern[str]:
        return re.compile(rf'{_UID_LINE}{re.escape(role)} "(?P<name>{name_pattern})"(?=[ \t]|$)', re.MULTILINE)

    def item(self, text: str) -> re.Pattern[str]:
        # Its tree keeps a list's item as the text it holds when nothing else is in it.
        return re.compile(rf'{_UID_LINE}(?:listitem )?"{re.escape(text)}"$', re.MULTILINE)

    def field_value(self, role: str, name: str, value: str) -> re.Pattern[str]:
        return re.compile(rf'{re.escape(role)} "{re.escape(name)}"[^\n]* value="{re.escape(value)}"', re.MULTILINE)

    def blocks(self, text: str) -> list[tuple[str, str]]:
        at = text.find(SNAPSHOT_HEADING)
        if at < 0:
            return []
        body = []
        for line in text[at + len(SNAPSHOT_HEADING) :].splitlines():
            if not line.lstrip().startswith("uid="):
                break
            body.append(line)
        return [("yaml", "\n".join(body))]

    def translate(self, tool: str, arguments: dict[str, Any], page: int | None) -> tuple[str, dict[str, Any]]:
        """The flows' Playwright MCP call as chrome-devtools-mcp's.

        Raises:
            Untranslated: for a tool (or a call with no page yet) that it has no counterpart for here.
        """
        if tool == "browser_navigate":
            if page is None:  # the task's own page, opened at its address
                return "new_page", {"url": arguments["url"]}
            return "navigate_page", {"pageId": page, "type": "url", "url": arguments["url"]}
        if page is None:
            raise Untranslated(f"{tool} before the task opened its page")
        if tool == "browser_snapshot":
            if set(arguments) - {"changes"}:
                raise Untranslated(f"browser_snapshot {arguments}: take_snapshot reads the whole page only")
            return "take_snapshot", {"pageId": page}
        if tool == "browser_click":
            return "click", {"pageId": page, "uid": arguments["target"]}
        if tool == "browser_type":
            return "fill", {"pageId": page, "uid": arguments["target"], "value": arguments["text"]}
        if tool == "browser_select_option":
            (value,) = arguments["values"]
            return "fill", {"pageId": page, "uid": arguments["target"], "value": value}
        if tool == "browser_fill_form":
            elements = [{"uid": field["target"], "value": field["value"]} for field in arguments["fields"]]
            return "fill_form", {"pageId": page, "elements": elements}
        if tool == "browser_handle_dialog":
            return "handle_dialog", {"pageId": page, "action": "accept" if arguments["accept"] else "dismiss"}
        raise Untranslated(f"{tool}: no counterpart in chrome-devtools-mcp's tools here")

    def new_document(self, text: str) -> bool:
        return _NAVIGATED.search(text) is not None

    def page_of(self, text: str) -> int | None:
        found = _PAGES_SELECTED.search(text)
        return int(found.group(1)) if found else None


YAML = Dialect()
DEVTOOLS = DevtoolsDialect()
