"""The limits tests' shop, a tab whose search counts its calls and whose other tool fails, and a tab
handed from one client's session to another's.
"""

from __future__ import annotations

from typing import Any

from ..conftest import BrokerUnderTest
from ..support.fakes import FakeTab, PageError

__all__ = ["hand_over", "shop"]


def shop(tab_id: int = 7) -> FakeTab:
    calls: list[Any] = []

    def search(args: dict[str, Any]) -> Any:
        calls.append(args)
        return {"hits": len(calls)}

    def refuse(args: dict[str, Any]) -> Any:
        raise PageError("out of stock", code="stock")

    return FakeTab(tab_id, "https://shop.example/", "Shop", {"search": search, "refuse": refuse, "slow": search})


async def hand_over(broker: BrokerUnderTest, tab: int, giver: dict[str, str] | None, taker: dict[str, str]) -> None:
    """The tab passes from one client's session (None: nobody's) to another's, which claims it."""
    if giver is not None:
        assert (await broker.post(f"/tabs/{tab}/release", headers=giver))[0] == 200
    status, body = await broker.post(f"/tabs/{tab}/claim", headers=taker)
    assert status == 200, body
