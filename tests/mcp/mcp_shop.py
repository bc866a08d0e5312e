"""The MCP door tests' shop, a tab whose page tools answer and fail, and the fixed tools every
client lists."""

from __future__ import annotations

from typing import Any

from ..support.fakes import FakeTab, PageError

__all__ = ["FIXED", "shop"]


FIXED = ["tabs", "page_tools", "call_page_tool"]


def shop(tab_id: int = 7) -> FakeTab:
    def search(args: dict[str, Any]) -> Any:
        return {"hits": [f"{args.get('q')} {tab_id}"]}

    def checkout(args: dict[str, Any]) -> Any:
        raise PageError("payment declined", code="declined")

    tab = FakeTab(tab_id, f"https://shop{tab_id}.example/", f"Shop {tab_id}", {"search": search, "checkout": checkout})
    return tab
