"""What the commands print: tables for a person, JSON for scripts (``--json``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import codec

__all__ = ["clip", "print_json", "print_listing", "uptime"]


def print_json(value: Any) -> None:
    print(codec.dumps_pretty(value))


def print_listing(
    as_json: bool,
    answer: dict[str, Any],
    key: str,
    headers: list[str],
    row: Callable[[dict[str, Any]], list[str]],
    empty: str,
) -> None:
    """``answer`` as JSON, or its ``key`` list as a table of ``row``s (``empty`` when there are none)."""
    if as_json:
        print_json(answer)
        return
    items = answer[key]
    print(_table(headers, [row(item) for item in items]) if items else empty)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines)


def uptime(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
