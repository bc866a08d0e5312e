"""The REST tests' shop: a tab whose one page tool echoes its query."""

from __future__ import annotations

from ..support.fakes import FakeTab

__all__ = ["shop"]


def shop(tab_id: int = 7) -> FakeTab:
    return FakeTab(tab_id, "https://shop.example/", "Shop", {"search": lambda args: {"q": args.get("q")}})
