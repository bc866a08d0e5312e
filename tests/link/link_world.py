"""The extension link tests' world: a shop tab with page tools that answer and fail, a REST call on a
tab its session claims first, and a raw socket to the link.
"""

from __future__ import annotations

from typing import Any

import aiohttp

from ..conftest import BrokerUnderTest
from ..support.fakes import FakeTab, PageError

__all__ = ["OTHER_EXTENSION", "call", "connect_ws", "shop"]


OTHER_EXTENSION = "abcdefghijklmnopabcdefghijklmnop"


def shop(tab_id: int = 7) -> FakeTab:
    def search(args: dict[str, Any]) -> Any:
        return {"hits": [f"{args.get('q', '')} 1", f"{args.get('q', '')} 2"]}

    def checkout(args: dict[str, Any]) -> Any:
        raise PageError("the cart is empty", code="empty_cart")

    return FakeTab(tab_id, "https://shop.example/", "Shop", {"search": search, "checkout": checkout})


async def call(broker: BrokerUnderTest, tab: str | int, tool: str, args: Any = None, **kwargs: Any) -> tuple[int, Any]:
    """Call a page tool through REST, its tab claimed first by the calling session, as calls need.

    A claim that fails (an unknown or ambiguous tab) leaves the call to say why.
    """
    await broker.post(f"/tabs/{tab}/claim", headers=kwargs.get("headers"))
    return await broker.post(f"/tabs/{tab}/tools/{tool}", args if args is not None else {}, **kwargs)


async def connect_ws(
    broker: BrokerUnderTest, session: aiohttp.ClientSession, headers: dict[str, str], path: str = "/"
) -> aiohttp.ClientWebSocketResponse:
    return await session.ws_connect(str(broker.server.make_url(path)), headers=headers)
