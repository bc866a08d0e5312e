"""The core without an event loop: messages and clock readings in, effects out."""

from __future__ import annotations

from typing import Any

import pytest

from broker.core import errors
from broker.core.broker_messages import (
    BrowserAction,
    BrowserRequest,
    CallTool,
    CloseTab,
    Connect,
    Disconnect,
    DiscoverTools,
    ErrorReply,
    FocusTab,
    OpenTab,
    TabClaimed,
    TabReleased,
)
from broker.core.browser_wide import history_call, windows_call
from broker.core.config import Config
from broker.core.effects import (
    CloseLink,
    Effect,
    RejectCall,
    ResolveCall,
    SendToExtension,
    SessionExpired,
    TabsChanged,
)
from broker.core.messages import (
    BrowserInfo,
    Connected,
    Ping,
    Pong,
    TabClosed,
    TabCreated,
    TabFocused,
    TabInfo,
    TabUpdated,
    Tool,
    ToolResult,
    ToolsChanged,
    ToolsDiscovered,
    WireError,
)
from broker.core.state import Broker

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


# Links and snapshots


def test_a_link_hears_of_no_session_until_it_says_which_browser_it_is() -> None:
    core = make_core()
    core.open_session("s1", "Claude Code")
    assert core.link_opened(1, 0.0) == [SendToExtension(1, Connect("test"))]
    effects = core.extension_message(1, Connected(BrowserInfo("Chrome", "156")), 0.0)
    assert [e.message for e in effects if isinstance(e, SendToExtension)] == [Connect("test", session_ids=())]
    # Only the first snapshot of a link is answered with the list.
    again = core.extension_message(1, Connected(BrowserInfo("Chrome", "156")), 1.0)
    assert [e for e in again if isinstance(e, SendToExtension)] == []


def test_a_sessions_connect_names_its_credential() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(7), shop_tab(8)))
    core.open_session("s1", "Claude Code")
    core.open_session("s2", "Claude Code", credential="alice")
    _, owner = core.claim_tab("s1", 7)
    _, alice = core.claim_tab("s2", 8)
    introduced = [
        e.message for e in (*owner, *alice) if isinstance(e, SendToExtension) and isinstance(e.message, Connect)
    ]
    assert introduced == [
        Connect("test", session_id="s1", client_name="Claude Code", credential="owner"),
        Connect("test", session_id="s2", client_name="Claude Code", credential="alice"),
    ]


def test_a_link_that_said_nothing_yet_is_no_browser() -> None:
    core = make_core()
    core.link_opened(1, 0.0)
    core.open_session("s1", "s1")
    assert core.browsers() == []
    with pytest.raises(errors.ExtensionNotConnected):
        core.open_tab("s1", "https://shop.example/", True, 0.0)
    # An extension of the seed protocol may start with a tab event rather than a snapshot.
    core.extension_message(1, TabCreated(tab=shop_tab()), 0.0)
    assert [b.key for b in core.browsers()] == ["b1"]
    core.open_tab("s1", "https://shop.example/", True, 0.0)


def test_a_session_is_introduced_to_a_browser_before_its_first_frame_there() -> None:
    core = make_core()
    connect(core, 1, tabs=(shop_tab(7),))
    connect(core, 2, tabs=(shop_tab(8),))
    assert core.open_session("s1", "Cursor") == []
    _, effects = core.claim_tab("s1", "b1:7")
    assert introduced(effects) == [(1, "s1")]
    messages = [e.message for e in effects if isinstance(e, SendToExtension)]
    assert messages == [Connect("test", session_id="s1", client_name="Cursor", credential="owner"), TabClaimed("s1", 7)]
    _, effects = core.call_tool("s1", "b1:7", "search", {}, 0.0)
    assert introduced(effects) == []
    assert isinstance(sent(effects)[0], CallTool)
    _, effects = core.claim_tab("s1", "b2:8")
    assert introduced(effects) == [(2, "s1")]
    assert sent(effects) == [TabClaimed("s1", 8)]
    # Another session, which acts only in b2, is never named to b1.
    core.open_session("s2", "Other")
    _, effects = core.open_tab("s2", "https://shop.example/", True, 0.0, "b2")
    assert introduced(effects) == [(2, "s2")]
    effects = core.close_session("s2")
    assert [(e.link_id, e.message) for e in effects if isinstance(e, SendToExtension)] == [(2, Disconnect("s2"))]


def test_a_returning_browser_hears_again_of_the_live_sessions_it_knew() -> None:
    core = make_core()
    connect(core, 1, tabs=(shop_tab(7),), instance_id="profile-1")
    connect(core, 2, tabs=(shop_tab(8),), instance_id="profile-2")
    for session in ("a", "b", "c"):
        core.open_session(session, session.upper())
    core.claim_tab("b", "b1:7")
    core.release_tab("b", "b1:7")
    core.claim_tab("a", "b1:7")
    core.claim_tab("c", "b2:8")
    core.close_session("b")
    effects = connect(core, 3, tabs=(shop_tab(7),), instance_id="profile-1", now=1.0)
    messages = [e.message for e in effects if isinstance(e, SendToExtension) and e.link_id == 3]
    assert messages == [
        Connect("test"),
        Connect("test", session_ids=("a",)),
        Connect("test", session_id="a", client_name="A", credential="owner"),
    ]


def test_snapshot_lists_tabs_with_their_tools() -> None:
    core = make_core()
    effects = connect(core, tabs=(shop_tab(), TabInfo(8, "Blank", "about:blank")))
    assert TabsChanged() in effects
    [shop, blank] = core.tabs()
    assert (shop.ref, shop.title, shop.tools) == ("b1:7", "Shop", (SEARCH, CART))
    assert (blank.ref, blank.tools) == ("b1:8", None)


def test_tab_events_keep_the_listing_current() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    core.extension_message(1, TabCreated(TabInfo(9, "News", "https://news.example/")), 1.0)
    core.extension_message(1, TabUpdated(TabInfo(7, "Shop - cart", "https://shop.example/cart")), 1.0)
    core.extension_message(1, ToolsChanged(9, (SEARCH,)), 1.0)
    core.extension_message(1, TabFocused(9), 1.0)
    tabs = {t.id: t for t in core.tabs()}
    assert tabs[7].title == "Shop - cart" and tabs[7].tools == (SEARCH, CART)
    assert tabs[9].tools == (SEARCH,) and tabs[9].active
    core.extension_message(1, TabClosed(9), 2.0)
    assert [t.id for t in core.tabs()] == [7]


def test_ping_is_answered_with_pong() -> None:
    core = make_core()
    connect(core)
    assert sent(core.extension_message(1, Ping(), 1.0)) == [Pong()]


# Calls


def test_tool_call_resolves_with_the_pages_result_unchanged() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    result = {"items": [1, 2], "nested": {"x": None}}
    effects = core.extension_message(1, ToolResult(call_id, result), 1.0)
    assert effects == [ResolveCall(call_id, result)]
    assert core.pending_count == 0


@pytest.mark.parametrize(
    ("error", "code", "page_code"),
    [("it broke", "tool_failed", None), (WireError("out of stock", "sold_out"), "tool_failed", "sold_out")],
)
def test_page_error_rejects_the_call_with_its_message(error: Any, code: str, page_code: str | None) -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    rejection = only(core.extension_message(1, ToolResult(call_id, None, error), 1.0), RejectCall)
    assert isinstance(rejection.error, errors.PageToolFailed)
    assert rejection.error.code == code and rejection.error.page_code == page_code
    assert rejection.error.message in ("it broke", "out of stock")


def test_late_reply_after_timeout_is_dropped() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core, now=0.0)
    assert core.next_wakeup() == 10.0
    rejection = only(core.expire(10.0), RejectCall)
    assert isinstance(rejection.error, errors.CallTimedOut)
    assert "search" in rejection.error.message and "b1:7" in rejection.error.message
    assert core.extension_message(1, ToolResult(call_id, "late"), 11.0) == []


def test_duplicate_reply_is_dropped() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    assert len(core.extension_message(1, ToolResult(call_id, 1), 1.0)) == 1
    assert core.extension_message(1, ToolResult(call_id, 2), 1.0) == []


def test_reply_from_another_link_is_dropped() -> None:
    core = make_core()
    connect(core, 1, tabs=(shop_tab(),))
    connect(core, 2, tabs=(shop_tab(8),))
    call_id = start_call(core, tab="b1:7")
    assert core.extension_message(2, ToolResult(call_id, "spoofed"), 1.0) == []
    assert core.pending_count == 1


def test_per_call_timeout_overrides_the_default() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    claimed(core)
    core.call_tool("s1", 7, "search", {}, 0.0, timeout=2.0)
    assert core.next_wakeup() == 2.0
    assert core.expire(1.9) == []
    assert isinstance(only(core.expire(2.0), RejectCall).error, errors.CallTimedOut)


def test_lost_link_fails_its_calls_at_once() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    rejection = only(core.link_closed(1, 1.0), RejectCall)
    assert rejection.call_id == call_id and isinstance(rejection.error, errors.ExtensionDisconnected)
    assert core.expire(100.0) == []


def test_ended_session_withdraws_its_calls_and_releases_its_tabs() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    core.claim_tab("s1", 7)
    effects = core.close_session("s1")
    assert isinstance(only(effects, RejectCall).error, errors.SessionEnded)
    assert Disconnect("s1") in sent(effects)
    assert core.tab(7).owner is None
    assert core.extension_message(1, ToolResult(call_id, "late"), 1.0) == []


def test_cancelled_call_is_forgotten() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    core.cancel(call_id, 1.0)
    assert core.pending_count == 0
    assert core.extension_message(1, ToolResult(call_id, "late"), 1.0) == []


def test_closing_a_tab_fails_calls_waiting_on_it() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    start_call(core)
    rejection = only(core.extension_message(1, TabClosed(7), 1.0), RejectCall)
    assert isinstance(rejection.error, errors.TabNotFound) and "closed" in rejection.error.message


def test_oversized_reply_fails_the_call_it_answers() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    rejection = only(core.oversized_reply(1, call_id, 40_000_000, 33_554_432, 1.0), RejectCall)
    assert isinstance(rejection.error, errors.MessageTooLarge)
    assert core.oversized_reply(1, "c999", 40_000_000, 33_554_432, 1.0) == []


def test_every_call_ends_exactly_once() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    ids = [start_call(core, now=0.0) for _ in range(4)]
    endings = core.extension_message(1, ToolResult(ids[0], "ok"), 1.0)
    endings += core.extension_message(1, ToolResult(ids[1], None, "bad"), 1.0)
    core.cancel(ids[2], 1.0)
    endings += core.expire(10.0)
    endings += core.link_closed(1, 11.0)
    endings += core.expire(50.0)
    ended = [e.call_id for e in endings if isinstance(e, (ResolveCall, RejectCall))]
    assert sorted(ended) == sorted([ids[0], ids[1], ids[3]])


# Refusals


def test_call_without_a_browser_says_how_to_connect_one() -> None:
    core = make_core()
    core.open_session("s1", "s1")
    with pytest.raises(errors.ExtensionNotConnected, match="load the browser-mcp extension"):
        core.call_tool("s1", 7, "search", {}, 0.0)


def test_unknown_tab_and_unknown_tool_are_refused() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    claimed(core)
    with pytest.raises(errors.TabNotFound):
        core.call_tool("s1", 99, "search", {}, 0.0)
    with pytest.raises(errors.ToolNotFound, match="it has: search, cart"):
        core.call_tool("s1", 7, "checkout", {}, 0.0)
    with pytest.raises(errors.InvalidRequest):
        core.call_tool("s1", "seven", "search", {}, 0.0)
    with pytest.raises(errors.BrowserNotFound):
        core.call_tool("s1", "b9:7", "search", {}, 0.0)


def test_tool_of_a_tab_whose_tools_are_unknown_is_forwarded() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(tools=None),))
    claimed(core)
    _, effects = core.call_tool("s1", 7, "anything", {}, 0.0)
    assert isinstance(sent(effects)[0], CallTool)


def test_same_tab_id_in_two_browsers_needs_the_browser_named() -> None:
    core = make_core()
    connect(core, 1, tabs=(shop_tab(),))
    connect(core, 2, tabs=(shop_tab(),))
    claimed(core, tab="b2:7")
    with pytest.raises(errors.AmbiguousTab, match="b1:7, b2:7"):
        core.call_tool("s1", 7, "search", {}, 0.0)
    _, effects = core.call_tool("s1", "b2:7", "search", {}, 0.0)
    assert {e.link_id for e in effects if isinstance(e, SendToExtension)} == {2}


def test_session_limit_on_calls_in_flight() -> None:
    core = make_core(max_pending_per_session=2)
    connect(core, tabs=(shop_tab(),))
    start_call(core)
    start_call(core)
    with pytest.raises(errors.TooManyCalls):
        core.call_tool("s1", 7, "search", {}, 0.0)
    connect(core, 2, tabs=(shop_tab(8),))
    start_call(core, "s2", 8)


def test_unknown_session_is_refused() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    with pytest.raises(errors.SessionEnded):
        core.call_tool("ghost", 7, "search", {}, 0.0)


# Ownership


def test_opened_tab_belongs_to_the_session_that_asked() -> None:
    core = make_core()
    connect(core)
    core.open_session("s1", "Claude Code")
    call_id, effects = core.open_tab("s1", "https://shop.example/", True, 0.0)
    assert sent(effects) == [OpenTab("s1", "https://shop.example/", True, call_id)]
    answer = only(core.extension_message(1, TabCreated(shop_tab(), request_id=call_id), 1.0), ResolveCall)
    assert (answer.value.ref, answer.value.owner, answer.value.owner_name) == ("b1:7", "s1", "Claude Code")


def test_a_tab_opened_by_a_sessions_tab_is_that_sessions_from_birth_and_joins_its_group() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    claimed(core)
    effects = core.extension_message(1, TabCreated(TabInfo(9, "Popup", "https://shop.example/p"), opener_tab_id=7), 1.0)
    assert sent(effects) == [TabClaimed("s1", 9)]
    assert TabsChanged(frozenset({"s1"})) in effects
    assert core.tab(9).owner == "s1"
    # Its opener stays the session's current tab: the result of the click names the new one.
    assert core.current_tab("s1").id == 7
    core.close_tab("s1", 9, 1.0)


def test_a_tab_opened_by_the_persons_tab_stays_the_persons() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    core.open_session("s1", "s1")
    effects = core.extension_message(1, TabCreated(TabInfo(9, "Popup", "https://shop.example/p"), opener_tab_id=7), 1.0)
    assert sent(effects) == []
    assert core.tab(9).owner is None


def test_an_opener_the_browser_never_announced_or_of_another_browser_gives_the_tab_nobody() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    connect(core, link=2, tabs=(shop_tab(40),))
    claimed(core, "s1", "b2:40")
    for tab_id, opener in ((9, 40), (10, 12345), (11, 11), (12, -3)):
        created = TabCreated(TabInfo(tab_id, "Popup", "https://x.example/"), opener_tab_id=opener)
        effects = core.extension_message(1, created, 1.0)
        assert sent(effects) == [], opener
        assert core.tab(f"b1:{tab_id}").owner is None
    assert core.tab("b2:40").owner == "s1"


def test_a_tab_someone_holds_is_not_taken_by_a_later_report_of_its_opener() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(), shop_tab(8)))
    claimed(core, "s1", 7)
    claimed(core, "s2", 8)
    effects = core.extension_message(1, TabCreated(shop_tab(8), opener_tab_id=7), 1.0)
    assert sent(effects) == [] and core.tab(8).owner == "s2"


def test_open_tab_answered_by_focusing_an_own_tab() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    claimed(core)
    call_id, _ = core.open_tab("s1", "https://shop.example/", True, 0.0)
    answer = only(core.extension_message(1, TabFocused(7, request_id=call_id), 1.0), ResolveCall)
    assert answer.value.owner == "s1" and answer.value.active


def test_open_tab_answered_by_focusing_a_tab_not_the_sessions_gives_it_no_owner() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(), shop_tab(8)))
    core.open_session("s1", "s1")
    claimed(core, "s2", 8)
    call_id, _ = core.open_tab("s1", "https://shop.example/", True, 0.0)
    refused = only(core.extension_message(1, TabFocused(7, request_id=call_id), 1.0), RejectCall)
    assert isinstance(refused.error, errors.TabNotClaimed) and "brought its tab b1:7" in refused.error.message
    call_id, _ = core.open_tab("s1", "https://shop.example/", True, 0.0)
    refused = only(core.extension_message(1, TabFocused(8, request_id=call_id), 1.0), RejectCall)
    assert isinstance(refused.error, errors.TabOwnedByOther) and refused.error.owner_session_id == "s2"
    assert [(t.id, t.owner) for t in core.tabs()] == [(7, None), (8, "s2")]
    with pytest.raises(errors.InvalidRequest, match="no current tab"):
        core.current_tab("s1")


def test_other_sessions_tab_is_refused_naming_the_owner() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    core.open_session("s1", "Claude Code")
    core.open_session("s2", "Cursor")
    core.claim_tab("s1", 7)
    for attempt in (
        lambda: core.call_tool("s2", 7, "search", {}, 0.0),
        lambda: core.close_tab("s2", 7, 0.0),
        lambda: core.claim_tab("s2", 7),
        lambda: core.release_tab("s2", 7),
    ):
        with pytest.raises(errors.TabOwnedByOther, match="Claude Code") as refused:
            attempt()
        assert refused.value.owner_session_id == "s1"
    core.call_tool("s1", 7, "search", {}, 0.0)


def test_released_tab_can_be_claimed_by_another_session() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    core.open_session("s1", "s1")
    core.open_session("s2", "s2")
    _, claimed = core.claim_tab("s1", 7)
    assert TabClaimed("s1", 7) in sent(claimed)
    _, released = core.release_tab("s1", 7)
    assert TabReleased("s1", 7) in sent(released) and TabsChanged(frozenset({"s1"})) in released
    view, effects = core.claim_tab("s2", 7)
    assert view.owner == "s2" and TabsChanged(frozenset({"s2"})) in effects
    assert TabClaimed("s2", 7) in sent(effects)


def test_claiming_an_own_tab_again_or_releasing_a_free_one_tells_nobody() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    core.open_session("s1", "s1")
    core.claim_tab("s1", 7)
    assert core.claim_tab("s1", 7)[1] == []
    core.release_tab("s1", 7)
    assert core.release_tab("s1", 7)[1] == []


def test_close_tab_ends_when_the_browser_reports_it_closed() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    claimed(core)
    call_id, effects = core.close_tab("s1", 7, 0.0)
    assert sent(effects) == [CloseTab("s1", 7, call_id)]
    answer = only(core.extension_message(1, TabClosed(7), 1.0), ResolveCall)
    assert answer.call_id == call_id and answer.value == {"closed": "b1:7"}


# Tool discovery


def test_known_tools_are_answered_without_asking_the_extension() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    core.open_session("s1", "s1")
    call_id, effects = core.request_tools("s1", 7, 0.0)
    assert effects == [ResolveCall(call_id, (SEARCH, CART))]


def test_unknown_tools_are_discovered() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(tools=None),))
    core.open_session("s1", "s1")
    call_id, effects = core.request_tools("s1", 7, 0.0)
    assert sent(effects) == [DiscoverTools("s1", call_id, 7)]
    effects = core.extension_message(1, ToolsDiscovered(call_id, 7, (SEARCH,)), 1.0)
    assert ResolveCall(call_id, (SEARCH,)) in effects
    assert core.tab(7).tools == (SEARCH,)


# The same browser on a new link


def test_new_link_with_the_same_instance_replaces_the_old_and_keeps_ownership() -> None:
    core = make_core()
    connect(core, 1, tabs=(shop_tab(),), instance_id="chrome-A")
    core.open_session("s1", "s1")
    core.claim_tab("s1", 7)
    call_id = start_call(core)
    effects = connect(core, 2, tabs=(shop_tab(), TabInfo(8)), instance_id="chrome-A", now=5.0)
    assert only(effects, CloseLink).link_id == 1
    rejection = only(effects, RejectCall)
    assert rejection.call_id == call_id and isinstance(rejection.error, errors.ExtensionDisconnected)
    assert [(t.ref, t.owner) for t in core.tabs()] == [("b1:7", "s1"), ("b1:8", None)]
    assert [b.key for b in core.browsers()] == ["b1"]
    assert core.link_closed(1, 6.0) == []


def test_browser_that_reconnects_within_grace_gets_its_tabs_back() -> None:
    core = make_core(browser_grace=60.0)
    connect(core, 1, tabs=(shop_tab(),), instance_id="chrome-A")
    core.open_session("s1", "s1")
    core.claim_tab("s1", 7)
    core.link_closed(1, 1.0)
    assert core.tabs() == []
    connect(core, 2, tabs=(shop_tab(),), instance_id="chrome-A", now=30.0)
    assert [(t.ref, t.owner) for t in core.tabs()] == [("b1:7", "s1")]


def test_browser_gone_past_grace_is_forgotten() -> None:
    core = make_core(browser_grace=60.0)
    connect(core, 1, tabs=(shop_tab(),), instance_id="chrome-A")
    core.link_closed(1, 1.0)
    assert core.next_wakeup() == 61.0
    core.expire(61.0)
    assert core.browsers() == []


def test_links_without_instance_id_are_never_merged() -> None:
    core = make_core()
    connect(core, 1, tabs=(shop_tab(),))
    connect(core, 2, tabs=(shop_tab(),))
    assert [b.key for b in core.browsers()] == ["b1", "b2"]
    core.link_closed(1, 1.0)
    assert [b.key for b in core.browsers()] == ["b2"]


# Keepalive


def test_quiet_link_is_pinged_and_silent_link_is_closed() -> None:
    core = make_core(ping_interval=20.0, silence_timeout=45.0)
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core, now=0.0)
    core.cancel(call_id, 1.0)
    assert core.next_wakeup() == 20.0
    assert sent(core.expire(20.0)) == [Ping()]
    assert core.expire(30.0) == []
    core.extension_message(1, Pong(), 30.0)
    assert sent(core.expire(50.0)) == [Ping()]
    effects = core.expire(75.0)
    assert only(effects, CloseLink).link_id == 1
    assert core.browsers() == []


# What a session sees


def test_session_sees_the_tools_of_its_own_tabs_only() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(7), shop_tab(8, tools=(SEARCH,)), shop_tab(9)))
    core.open_session("s1", "s1")
    core.open_session("s2", "s2")
    core.claim_tab("s1", 7)
    core.claim_tab("s2", 9)
    assert [(v.ref, t.name) for v, t in core.session_tools("s1")] == [("b1:7", "search"), ("b1:7", "cart")]
    view, effects = core.focus_tab("s1", 7)
    assert view.ref == "b1:7" and sent(effects) == [FocusTab("s1", 7)]
    assert [v.ref for v, _ in core.session_tools("s2")] == ["b1:9", "b1:9"]
    with pytest.raises(errors.TabOwnedByOther):
        core.focus_tab("s1", 9)
    _, claimed_8 = core.claim_tab("s1", 8)
    assert TabsChanged(frozenset({"s1"})) in claimed_8
    assert [(v.ref, t.name) for v, t in core.session_tools("s1")][-1] == ("b1:8", "search")
    core.release_tab("s1", 8)
    assert [v.ref for v, _ in core.session_tools("s1")] == ["b1:7", "b1:7"]


def test_the_persons_tab_is_neither_closed_nor_focused_nor_called_until_claimed() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(7),))
    core.open_session("s1", "s1")
    for attempt in (
        lambda: core.close_tab("s1", 7, 0.0),
        lambda: core.focus_tab("s1", 7),
        lambda: core.call_tool("s1", 7, "search", {}, 0.0),
    ):
        with pytest.raises(errors.TabNotClaimed, match="claim it first"):
            attempt()
    assert core.pending_count == 0
    _, tools_effects = core.request_tools("s1", 7, 0.0)  # listing its tools stays open
    assert only(tools_effects, ResolveCall).value == (SEARCH, CART)
    core.claim_tab("s1", 7)
    core.focus_tab("s1", 7)
    core.call_tool("s1", 7, "search", {}, 0.0)
    core.close_tab("s1", 7, 0.0)


def test_open_tab_the_browser_refuses_fails_with_its_message() -> None:
    core = make_core()
    connect(core)
    core.open_session("s1", "s1")
    call_id, _ = core.open_tab("s1", "chrome://settings/", True, 0.0)
    failure = WireError("cannot open chrome://settings/", "open_failed")
    rejection = only(core.extension_message(1, ToolResult(call_id, None, failure), 1.0), RejectCall)
    assert isinstance(rejection.error, errors.PageToolFailed) and rejection.error.page_code == "open_failed"


# Sessions without a connection end when left idle


def idle_core(**overrides: Any) -> Broker:
    return make_core(session_idle=10.0, **overrides)


def test_session_left_idle_ends_and_releases_its_tabs() -> None:
    core = idle_core()
    connect(core, tabs=(shop_tab(),))
    core.open_session("rest", "rest", 0.0, ends_when_idle=True)
    core.claim_tab("rest", 7)
    assert core.next_wakeup() is not None and core.next_wakeup() <= 10.0
    assert not any(isinstance(e, SessionExpired) for e in core.expire(9.9))
    effects = core.expire(10.0)
    assert only(effects, SessionExpired) == SessionExpired("rest", "no request for 10 s")
    assert Disconnect("rest") in sent(effects)
    assert not core.has_session("rest")
    assert core.tab(7).owner is None


def test_each_use_moves_the_end_of_an_idle_session() -> None:
    core = idle_core()
    core.open_session("rest", "rest", 0.0, ends_when_idle=True)
    core.open_session("rest", "rest", 6.0, ends_when_idle=True)
    assert core.expire(10.0) == []
    assert core.has_session("rest")
    assert core.next_wakeup() == 16.0
    assert only(core.expire(16.0), SessionExpired).session_id == "rest"


def test_a_call_in_flight_keeps_a_session_and_its_answer_counts_as_a_use() -> None:
    core = idle_core(ping_interval=1000.0, silence_timeout=2000.0)
    connect(core, tabs=(shop_tab(),))
    core.open_session("s1", "s1", 0.0, ends_when_idle=True)
    core.claim_tab("s1", 7)
    call_id, _ = core.call_tool("s1", 7, "search", {}, 0.0, timeout=60.0)
    assert core.expire(30.0) == []
    assert core.has_session("s1")
    answer = core.extension_message(1, ToolResult(call_id, "ok"), 31.0)
    assert only(answer, ResolveCall).value == "ok"
    assert core.expire(40.9) == []
    assert only(core.expire(41.0), SessionExpired).session_id == "s1"


def test_an_open_listener_keeps_a_session_until_it_closes() -> None:
    core = idle_core()
    core.open_session("mcp", "Claude", 0.0, ends_when_idle=True)
    core.listener_opened("mcp")
    assert core.expire(100.0) == []
    core.listener_closed("mcp", 100.0)
    assert core.expire(109.0) == []
    assert only(core.expire(110.0), SessionExpired).session_id == "mcp"


def test_sessions_with_a_connection_never_end_when_idle() -> None:
    core = idle_core()
    core.open_session("stdio", "Cursor", 0.0)
    assert core.next_wakeup() is None
    assert core.expire(1e9) == []
    assert core.has_session("stdio")


def test_a_session_ended_by_its_client_is_not_ended_again() -> None:
    core = idle_core()
    core.open_session("rest", "rest", 0.0, ends_when_idle=True)
    core.close_session("rest")
    assert core.expire(10.0) == []
    assert core.next_wakeup() is None


# Built-in browser actions and the current tab


def actions_browser(core: Broker, actions: tuple[str, ...] = ("snapshot", "click", "evaluate")) -> None:
    core.link_opened(1, 0.0)
    hello = Connected(BrowserInfo("Chrome", "156"), (shop_tab(7), shop_tab(8)), actions=actions)
    core.extension_message(1, hello, 0.0)


def test_the_current_tab_is_the_one_last_opened_focused_or_claimed() -> None:
    core = make_core()
    actions_browser(core)
    core.open_session("s1", "s1")
    with pytest.raises(errors.InvalidRequest, match="no current tab"):
        core.current_tab("s1")
    core.claim_tab("s1", 7)
    assert core.current_tab("s1").id == 7
    call_id, _ = core.open_tab("s1", "https://new.example/", True, 0.0)
    core.extension_message(1, TabCreated(TabInfo(20, "New", "https://new.example/"), request_id=call_id), 0.0)
    assert core.current_tab("s1").id == 20
    core.claim_tab("s1", 8)
    core.focus_tab("s1", 7)
    assert core.current_tab("s1").id == 7
    core.focus_tab("s1", 8)
    assert core.current_tab("s1").id == 8
    core.release_tab("s1", 8)
    with pytest.raises(errors.InvalidRequest):
        core.current_tab("s1")


def test_an_action_goes_to_an_owned_tab_of_a_browser_that_carries_it_out() -> None:
    core = make_core()
    actions_browser(core)
    core.open_session("s1", "Claude")
    core.open_session("s2", "Cursor")
    with pytest.raises(errors.TabNotClaimed, match="claim it first"):
        core.call_action("s1", 7, "snapshot", {}, 0.0)
    core.claim_tab("s2", 8)
    with pytest.raises(errors.TabOwnedByOther, match="Cursor"):
        core.call_action("s1", 8, "snapshot", {}, 0.0)
    core.claim_tab("s1", 7)
    with pytest.raises(errors.NotSupported, match="browser_hover"):
        core.call_action("s1", None, "hover", {"target": "e1"}, 0.0)
    call_id, effects = core.call_action("s1", None, "click", {"target": "e1"}, 0.0)
    assert sent(effects) == [BrowserAction("s1", call_id, 7, "click", {"target": "e1"})]
    assert core.browser_actions() == frozenset({"snapshot", "click", "evaluate"})
    done = core.extension_message(1, ToolResult(call_id, {"content": []}), 1.0)
    assert only(done, ResolveCall).value == {"content": []}


def test_an_action_that_does_not_answer_times_out_naming_the_tool() -> None:
    core = make_core()
    actions_browser(core)
    core.open_session("s1", "s1")
    core.claim_tab("s1", 7)
    core.call_action("s1", 7, "snapshot", {}, 0.0, timeout=2.0)
    rejection = only(core.expire(2.0), RejectCall)
    assert rejection.error.message == "tool 'browser_snapshot' on tab b1:7 did not answer within 2 s"


def test_evaluate_turned_off_is_neither_offered_nor_sent() -> None:
    core = make_core(allow_evaluate=False)
    actions_browser(core)
    core.open_session("s1", "s1")
    core.claim_tab("s1", 7)
    assert core.browser_actions() == frozenset({"snapshot", "click"})
    with pytest.raises(errors.NotSupported, match="--no-evaluate"):
        core.call_action("s1", 7, "evaluate", {"function": "() => 1"}, 0.0)


# Sessions belong to the credential that opened them


def test_a_session_is_used_only_with_the_token_that_opened_it() -> None:
    core = make_core()
    core.open_session("agent", "Agent", credential="alice")
    core.open_session("agent", "Agent", credential="alice")  # a use by its opener
    for other in ("mallory", None):
        with pytest.raises(errors.Forbidden, match="opened with client token alice"):
            core.open_session("agent", "Agent", credential=other)
    with pytest.raises(errors.Forbidden):
        core.check_session_end("agent", "mallory")
    core.check_session_end("agent", None)  # the broker's own token may end any session
    core.check_session_end("gone", "mallory")  # nothing to protect
    assert [s.credential for s in core.sessions()] == ["alice"]


def test_a_browser_keeps_at_most_its_tab_limit() -> None:
    core = make_core(max_tabs_per_browser=2)
    effects = connect(core, tabs=(shop_tab(1), shop_tab(2), shop_tab(3)))
    [refusal] = [m for m in sent(effects) if isinstance(m, ErrorReply)]
    assert refusal.code == "too_many_tabs" and "1 more ignored" in refusal.message
    assert [tab.id for tab in core.tabs()] == [1, 2]
    created = core.extension_message(1, TabCreated(shop_tab(4)), 1.0)
    assert [m.code for m in sent(created)] == ["too_many_tabs"]
    core.extension_message(1, TabClosed(2), 1.0)
    core.extension_message(1, TabCreated(shop_tab(4)), 1.0)
    assert [tab.id for tab in core.tabs()] == [1, 4]


def test_an_empty_tool_list_from_a_snapshot_is_checked_with_the_page() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(7, tools=()),))
    claimed(core)
    call_id, effects = core.call_tool("s1", 7, "search", {"q": "x"}, 0.0)
    assert sent(effects) == [DiscoverTools("s1", call_id, 7)]
    answered = core.extension_message(1, ToolsDiscovered(call_id, 7, (SEARCH,)), 1.0)
    assert CallTool("s1", call_id, 7, "search", {"q": "x"}) in sent(answered)
    # Confirmed, an unknown tool is refused at once.
    with pytest.raises(errors.ToolNotFound):
        core.call_tool("s1", 7, "teleport", {}, 2.0)


def test_a_breaker_opens_after_timeouts_in_a_row_then_lets_one_trial_through() -> None:
    core = make_core(breaker_failures=2, breaker_cooldown=30.0, ping_interval=1e6, silence_timeout=1e6)
    connect(core, tabs=(shop_tab(),))
    claimed(core)
    for start in (0.0, 10.0):
        core.call_tool("s1", 7, "search", {}, start, timeout=1.0)
        assert isinstance(only(core.expire(start + 1.0), RejectCall).error, errors.CallTimedOut)
    with pytest.raises(errors.CircuitOpen, match="in 30 s"):
        core.call_tool("s1", 7, "search", {}, 11.0)
    core.call_tool("s1", 7, "cart", {}, 11.0)  # another tool of the tab is not held back
    trial, _ = core.call_tool("s1", 7, "search", {}, 41.0)
    with pytest.raises(errors.CircuitOpen, match="trial call"):
        core.call_tool("s1", 7, "search", {}, 41.5)
    core.extension_message(1, ToolResult(trial, "ok"), 42.0)
    core.call_tool("s1", 7, "search", {}, 42.0)  # closed again


def test_a_sessions_calls_are_rate_limited_without_touching_others() -> None:
    core = make_core(rate_limit=2.0, rate_burst=2)
    connect(core, tabs=(shop_tab(), shop_tab(8)))
    claimed(core)
    claimed(core, "s2", 8)
    core.call_tool("s1", 7, "search", {}, 0.0)
    core.call_tool("s1", 7, "search", {}, 0.0)
    with pytest.raises(errors.RateLimited) as limited:
        core.call_tool("s1", 7, "search", {}, 0.1)
    assert limited.value.retry_after == pytest.approx(0.4)
    core.call_tool("s2", 8, "search", {}, 0.1)
    core.call_tool("s1", 7, "search", {}, 0.5)  # a token back after half a second


def test_a_change_touches_the_lists_of_the_tabs_owner_only() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(7), shop_tab(8)))
    for session in ("owner", "former", "bystander"):
        core.open_session(session, session)
    core.claim_tab("owner", 7)
    changed = core.extension_message(1, ToolsChanged(7, (SEARCH,)), 1.0)
    assert only(changed, TabsChanged) == TabsChanged(frozenset({"owner"}))
    core.claim_tab("former", 8)
    _, released = core.release_tab("former", 8)
    assert only(released, TabsChanged) == TabsChanged(frozenset({"former"}))
    # A tab nobody holds touches no list; a browser that goes touches every one.
    assert not any(isinstance(e, TabsChanged) for e in core.extension_message(1, ToolsChanged(8, ()), 1.0))
    assert not any(isinstance(e, TabsChanged) for e in core.extension_message(1, TabCreated(shop_tab(9)), 1.0))
    assert TabsChanged() in core.link_closed(1, 2.0)


# Windows, history and bookmarks (broker/core/browser_requests.py)


def windowed(core: Broker, *tabs: TabInfo) -> None:
    core.link_opened(1, 0.0)
    snapshot = Connected(BrowserInfo("Chrome", "156"), tabs, features=("windows", "history", "bookmarks"))
    core.extension_message(1, snapshot, 0.0)


def placed(tab_id: int, window_id: int, index: int) -> TabInfo:
    return TabInfo(tab_id, f"Tab {tab_id}", f"https://t{tab_id}.example/", (), window_id, index=index, pinned=False)


def test_a_window_is_the_sessions_only_while_every_tab_in_it_is() -> None:
    core = make_core()
    windowed(core, placed(7, 1, 0), placed(8, 1, 1), placed(9, 2, 0))
    core.open_session("s1", "Claude Code")
    core.claim_tab("s1", 9)
    call_id, effects = core.browser_request("s1", windows_call("close", 2), 0.0)[1:]
    # Closing names the tabs it was checked with, so the extension keeps a window that gained one.
    assert sent(effects) == [BrowserRequest("s1", call_id, "closeWindow", {"windowId": 2, "tabIds": [9]})]
    core.claim_tab("s1", 7)
    with pytest.raises(errors.WindowNotOwned, match=r"the person's tab b1:8 \(Tab 8\)"):
        core.browser_request("s1", windows_call("focus", "b1:1"), 0.0)
    # A tab that moves in from another window counts from its report on.
    core.extension_message(1, TabUpdated(placed(8, 2, 1)), 0.0)
    core.browser_request("s1", windows_call("focus", 1), 0.0)
    with pytest.raises(errors.WindowNotOwned, match="the person's tab b1:8"):
        core.browser_request("s1", windows_call("close", 2), 0.0)


def test_the_window_list_takes_tabs_and_owners_from_the_brokers_records() -> None:
    core = make_core()
    windowed(core, placed(7, 1, 1), placed(8, 1, 0), placed(9, 2, 0))
    core.open_session("s1", "Claude Code")
    core.claim_tab("s1", 9)
    answer = {"windows": [{"id": 1, "focused": True, "state": "normal"}, {"id": 2, "type": 5}, {"id": "x"}, 3]}
    views = core.describe_windows("s1", "b1", answer)
    assert [(v.id, v.tabs, v.yours, v.focused, v.type) for v in views] == [
        (1, (8, 7), False, True, None),
        (2, (9,), True, None, None),
    ]
    with pytest.raises(errors.PageToolFailed):
        core.describe_windows("s1", "b1", {"windows": None})


def test_an_older_extension_is_asked_for_no_window_or_record() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    core.open_session("s1", "s1")
    for call in (windows_call("list"), history_call("x")):
        with pytest.raises(errors.NotSupported, match="does not offer"):
            core.browser_request("s1", call, 0.0)
    with pytest.raises(errors.NotSupported):
        core.open_tab("s1", "https://x.example/", True, 0.0, new_window=True)


def test_consent_required_from_the_extension_is_the_persons_refusal() -> None:
    core = make_core()
    windowed(core, placed(7, 1, 0))
    core.open_session("s1", "s1")
    _, call_id, _ = core.browser_request("s1", history_call("news"), 0.0)
    refusal = ToolResult(call_id, error=WireError("turn on sharing in the options page", "consent_required"))
    rejected = only(core.extension_message(1, refusal, 0.0), RejectCall)
    assert isinstance(rejected.error, errors.ConsentRequired) and "options page" in rejected.error.message


def test_tab_updated_for_an_unannounced_tab_is_refused() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(7),))
    effects = core.extension_message(1, TabUpdated(TabInfo(9, "Ghost", "https://ghost.example/")), 1.0)
    assert [m.code for m in sent(effects)] == ["unknown_tab"]
    assert [tab.id for tab in core.tabs()] == [7]


def test_links_are_bounded_in_number() -> None:
    core = make_core(max_links=2)
    connect(core, 1)
    connect(core, 2)
    with pytest.raises(errors.TooManyLinks, match="2 extension links are open"):
        core.link_opened(3, 0.0)
    core.link_closed(1, 1.0)
    core.link_opened(3, 1.0)


def test_links_that_have_not_proven_the_key_give_way_and_never_fill_the_slots() -> None:
    core = make_core(max_links=2)
    core.link_opened(1, 0.0, proven=False)
    core.link_opened(2, 0.0, proven=False)
    core.check_link_room()  # unproven links keep no one out
    # A newcomer takes the oldest unproven link's place, whatever it will prove.
    assert only(core.link_opened(3, 1.0, proven=False), CloseLink).link_id == 1
    core.link_proven(3)
    assert only(core.link_opened(4, 2.0), CloseLink).link_id == 2
    # Both slots hold links that proved the key: one more is refused, proven or not.
    with pytest.raises(errors.TooManyLinks, match="2 extension links are open"):
        core.check_link_room()
    with pytest.raises(errors.TooManyLinks):
        core.link_opened(5, 3.0, proven=False)


def test_browsers_kept_for_their_reconnect_are_bounded_too() -> None:
    core = make_core(max_links=2)
    for link in range(1, 5):
        connect(core, link, tabs=(shop_tab(link),), instance_id=f"profile-{link}")
        core.link_closed(link, float(link))
    assert [(b.key, b.connected) for b in core.browsers()] == [("b3", False), ("b4", False)]
    connect(core, 5, tabs=(shop_tab(4),), instance_id="profile-4")
    assert [(b.key, b.connected) for b in core.browsers()] == [("b3", False), ("b4", True)]


def test_time_the_broker_stood_still_is_held_against_no_link_or_call() -> None:
    core = make_core(ping_interval=20.0, silence_timeout=45.0)
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)  # due at 10 s
    # The broker ran again at 100 s, its timer due at 9 s: 91 s lost.
    assert sent(core.resumed(100.0, 91.0)) == [Ping()]
    assert core.expire(100.0) == []
    assert core.next_wakeup() == 101.0  # the call's deadline, 91 s later
    answered = core.extension_message(1, ToolResult(call_id, result="late but fine"), 100.5)
    assert only(answered, ResolveCall).value == "late but fine"
    # Silence after it still counts: the link is closed 45 s after its last frame.
    closing = core.expire(145.5)
    assert only(closing, CloseLink).reason == "no message for 45 s"


def test_an_opened_tab_the_broker_refuses_fails_its_open_at_once() -> None:
    core = make_core(max_tabs_per_browser=1)
    connect(core, tabs=(shop_tab(1),))
    core.open_session("s1", "s1")
    for refused, code in ((TabInfo(-1, "", "about:blank"), "invalid_message"), (shop_tab(2), "too_many_tabs")):
        call_id, _ = core.open_tab("s1", "https://shop.example/", True, 0.0)
        effects = core.extension_message(1, TabCreated(refused, request_id=call_id), 1.0)
        assert [m.code for m in sent(effects)] == [code]
        failed = only(effects, RejectCall)
        assert failed.call_id == call_id and "the broker refused it" in failed.error.message
    assert core.pending_count == 0


def test_a_broker_that_keeps_falling_behind_still_judges_links_and_calls() -> None:
    core = make_core(ping_interval=20.0, silence_timeout=45.0)
    connect(core, tabs=(shop_tab(),))
    start_call(core)  # due at 10 s
    assert sent(core.resumed(12.0, 2.0)) == [Ping()]
    # Late again soon after: no more time given back, so the call times out and the link is closed.
    assert core.resumed(14.0, 2.0) == []
    assert isinstance(only(core.expire(14.0), RejectCall).error, errors.CallTimedOut)
    assert core.resumed(58.0, 1.5) == []
    only(core.expire(58.0), CloseLink)


def test_closing_tabs_one_by_one_never_empties_a_window_the_session_may_not_close() -> None:
    core = make_core()
    windowed(core, placed(7, 1, 0), placed(8, 1, 1))
    core.open_session("s1", "s1")
    core.claim_tab("s1", 8)
    with pytest.raises(errors.WindowNotOwned):
        core.browser_request("s1", windows_call("close", 1), 0.0)
    core.close_tab("s1", 8, 0.0)
    core.extension_message(1, TabClosed(8), 1.0)
    with pytest.raises(errors.TabNotClaimed):
        core.close_tab("s1", 7, 1.0)
    assert [(t.id, t.window_id) for t in core.tabs()] == [(7, 1)]


def test_the_extensions_own_ownership_refusal_is_the_brokers_tab_not_claimed() -> None:
    core = make_core()
    connect(core, tabs=(shop_tab(),))
    call_id = start_call(core)
    refusal = ToolResult(call_id, error=WireError("tab 7 is not claimed by this session", "tab_not_claimed"))
    rejected = only(core.extension_message(1, refusal, 1.0), RejectCall)
    assert isinstance(rejected.error, errors.TabNotClaimed) and "not claimed" in rejected.error.message
