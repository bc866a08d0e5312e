"""What the broker says to a browser about a session (Messenger) on its own, without the Broker."""

from __future__ import annotations

from broker.core.broker_messages import Connect, FocusTab
from broker.core.effects import SendToExtension, TabsChanged

from .parts_world import make_parts


def test_a_browser_hears_of_a_session_once_right_before_the_first_frame_about_it() -> None:
    parts = make_parts()

    first = parts.messenger.tell(parts.browser, FocusTab("s1", 7))
    second = parts.messenger.tell(parts.browser, FocusTab("s1", 7))

    assert first == [
        SendToExtension(1, Connect("test", "s1", "client one", credential="owner")),
        SendToExtension(1, FocusTab("s1", 7)),
    ]
    assert second == [SendToExtension(1, FocusTab("s1", 7))]


def test_a_change_of_the_persons_tab_touches_no_sessions_tools_but_an_owners_does() -> None:
    parts = make_parts()

    assert parts.messenger.changed(parts.browser, parts.tab) == []
    parts.tab.owner = "s1"
    assert parts.messenger.changed(parts.browser, parts.tab, "s2") == [TabsChanged(frozenset({"s1", "s2"}))]


def test_a_tab_is_shown_with_its_owners_name() -> None:
    parts = make_parts()
    parts.tab.owner = "s1"

    view = parts.messenger.view(parts.browser, parts.tab)

    assert (view.browser, view.id, view.owner, view.owner_name) == (parts.browser.key, 7, "s1", "client one")
