"""The core's world for the tests that drive it without an event loop: a Broker, a browser's link with
its tabs and tools, a session's own tab, and readers of the effects the core answers with.
"""

from __future__ import annotations

from typing import Any

from broker.core.broker_messages import CallTool, Connect
from broker.core.config import Config
from broker.core.effects import Effect, SendToExtension
from broker.core.messages import BrowserInfo, Connected, TabInfo, Tool
from broker.core.state import Broker

__all__ = ["CART", "SEARCH", "claimed", "connect", "introduced", "make_core", "only", "sent", "shop_tab", "start_call"]


SEARCH = Tool("search", "search the shop", {"type": "object"})
CART = Tool("cart", "show the cart", {"type": "object"}, annotations={"readOnlyHint": True})


def make_core(**overrides: Any) -> Broker:
    return Broker(Config(server_version="test", call_timeout=10.0, **overrides))


def connect(
    core: Broker, link: int = 1, tabs: tuple[TabInfo, ...] = (), instance_id: str | None = None, now: float = 0.0
) -> list[Effect]:
    effects = core.link_opened(link, now)
    return effects + core.extension_message(link, Connected(BrowserInfo("Chrome", "156", instance_id), tabs), now)


def shop_tab(tab_id: int = 7, tools: tuple[Tool, ...] | None = (SEARCH, CART)) -> TabInfo:
    return TabInfo(tab_id, "Shop", "https://shop.example/", tools)


def sent(effects: list[Effect], link: int | None = None) -> list[Any]:
    """The frames sent (to ``link``), without the ``connect`` that introduces a session to a
    browser before its first frame there: the tests of "Which sessions a browser hears of" see those."""
    return [
        e.message
        for e in effects
        if isinstance(e, SendToExtension)
        and (link is None or e.link_id == link)
        and not (isinstance(e.message, Connect) and e.message.session_id)
    ]


def introduced(effects: list[Effect]) -> list[tuple[int, str | None]]:
    """The (link, session) of each ``connect`` in ``effects`` that introduces a session."""
    return [
        (e.link_id, e.message.session_id)
        for e in effects
        if isinstance(e, SendToExtension) and isinstance(e.message, Connect) and e.message.session_id
    ]


def only(effects: list[Effect], kind: type) -> Any:
    matching = [e for e in effects if isinstance(e, kind)]
    assert len(matching) == 1, effects
    return matching[0]


def claimed(core: Broker, session: str = "s1", tab: str | int = 7) -> None:
    """The session's own tab, as page tools, actions, closing and focusing need (opened if new)."""
    core.open_session(session, session)
    if core.tab(tab).owner is None:
        core.claim_tab(session, tab)


def start_call(core: Broker, session: str = "s1", tab: str | int = 7, tool: str = "search", now: float = 0.0) -> str:
    claimed(core, session, tab)
    call_id, effects = core.call_tool(session, tab, tool, {"q": "shoes"}, now)
    assert sent(effects) == [CallTool(session, call_id, core.tab(tab).id, tool, {"q": "shoes"})]
    return call_id
