"""What an MCP tool call answers: the broker's JSON, a page's result, a failure with its code.

Results that hold text a web page chose are marked untrusted in ``_meta``, and what the broker cut
or withheld of a page's answer is named there; a failure carries the same ``{"error": ...}`` REST
answers with, in ``structuredContent``.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from .. import codec
from ..core.errors import BrokerError, PageToolFailed, error_to_wire
from ..core.results import is_content
from ..daemon.views import page_text_fields

__all__ = ["LIMITED", "UNTRUSTED", "error_result", "json_result", "page_result", "unwritable"]


UNTRUSTED = "browser-mcp/untrusted"
# What the broker cut or withheld of a page tool's result (broker.core.results), when anything.
LIMITED = "browser-mcp/limited"


def json_result(value: Any) -> types.CallToolResult:
    """The broker's answer as JSON text; marked untrusted when it holds text a web page chose
    (tab titles and addresses, page tools, the titles of pages visited), as page results are."""
    meta = {UNTRUSTED: True} if isinstance(value, dict) and page_text_fields(value) else None
    return types.CallToolResult(content=[types.TextContent(text=codec.dumps_text(value))], _meta=meta)


def unwritable(exc: Exception, ref: str) -> types.CallToolResult:
    return error_result(PageToolFailed(f"the page's result cannot be written as JSON ({exc}); tab {ref}"))


def error_result(exc: BrokerError) -> types.CallToolResult:
    """A failed call as an MCP result: ``code: message`` for the model to read, and for a client
    to branch on, ``structuredContent`` holding the very ``{"error": {...}}`` REST answers with
    (``code``, ``message``, a failed tool's own ``pageCode``), so the two doors never differ."""
    meta = {UNTRUSTED: True} if exc.page_text else None
    return types.CallToolResult(
        content=[types.TextContent(text=f"{exc.code}: {exc.message}")],
        structured_content={"error": error_to_wire(exc)},
        is_error=True,
        _meta=meta,
    )


def page_result(
    value: Any, ref: str, json_text: str | None = None, limited: tuple[str, ...] = ()
) -> types.CallToolResult:
    """The page's answer as an MCP result marked untrusted; MCP-shaped answers keep their content.

    ``json_text``: ``value`` already written; ``limited``: what the broker cut or withheld of it.
    """
    meta: dict[str, Any] = {UNTRUSTED: True, "browser-mcp/tab": ref}
    if limited:
        meta[LIMITED] = list(limited)
    if is_content(value):
        try:
            result = types.CallToolResult.model_validate({**value, "_meta": meta})
        except ValueError:
            pass
        else:
            return result
    try:
        text = value if isinstance(value, str) else json_text or codec.dumps_text(value)
    except codec.JSONEncodeError as exc:
        return unwritable(exc, ref)
    return types.CallToolResult(content=[types.TextContent(text=text)], _meta=meta)
