"""The core without an event loop: messages and clock readings in, effects out. Here the extension's
links: snapshots and tab events, which sessions a browser hears of, the same browser on a new link,
keepalive, the bounds on links, browsers and tabs, and time the broker stood still."""

from __future__ import annotations

import pytest

from broker.core import errors
from broker.core.broker_messages import CallTool, Connect, Disconnect, ErrorReply, TabClaimed
from broker.core.effects import CloseLink, RejectCall, ResolveCall, SendToExtension, TabsChanged
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
    ToolResult,
    ToolsChanged,
)

from .core_world import CART, SEARCH, connect, introduced, make_core, only, sent, shop_tab, start_call

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


def test_a_link_that_only_keeps_alive_is_no_browser_and_gets_no_new_tab() -> None:
    """A link still waiting to prove the link key (another run's browser, which cannot) answers the
    broker's ping with a pong, and may ping itself: that says nothing of which browser it is, so it
    is not listed, and the new tab of a client goes to the browser that announced itself."""
    core = make_core()
    connect(core, 1, (shop_tab(),), instance_id="ours")
    core.link_opened(2, 1.0)
    core.extension_message(2, Pong(), 2.0)
    assert sent(core.extension_message(2, Ping(), 2.0)) == [Pong()]
    assert [b.instance_id for b in core.browsers()] == ["ours"]
    core.open_session("s1", "s1")
    _, effects = core.open_tab("s1", "https://shop.example/", True, 3.0)
    assert [type(m).__name__ for m in sent(effects, 1)] == ["OpenTab"] and sent(effects, 2) == []


def test_ping_is_answered_with_pong() -> None:
    core = make_core()
    connect(core)
    assert sent(core.extension_message(1, Ping(), 1.0)) == [Pong()]


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


# Keepalive, bounds and the clock


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
