"""The command line tests' shop: a tab with page tools that answer and fail and a news tab without
tools, and the command run against a discovery folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..support.cli_helpers import CliResult, run_cli
from ..support.fakes import FakeTab, PageError

__all__ = ["NEWS_URL", "SHOP_URL", "buy", "cli", "greet", "search", "shop_tabs"]


SHOP_URL = "https://shop.example/shoes"
NEWS_URL = "https://news.example/"


def search(args: dict[str, Any]) -> Any:
    return {"query": args.get("query"), "hits": ["red shoes", "blue shoes"]}


def greet(args: dict[str, Any]) -> Any:
    return f"hello {args.get('name', 'nobody')}"


def buy(args: dict[str, Any]) -> Any:
    raise PageError("size 42 is out of stock", code="sold_out")


def shop_tabs() -> list[FakeTab]:
    return [
        FakeTab(7, SHOP_URL, "Shoe shop", {"search": search, "greet": greet, "buy": buy}),
        FakeTab(8, NEWS_URL, "News", {}),
    ]


async def cli(discovery_dir: Path, *args: str) -> CliResult:
    return await run_cli(*args, discovery_dir=discovery_dir)
