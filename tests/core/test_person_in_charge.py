"""The person's word (PersonInCharge) on its own, without the Broker: the sessions they ended,
the tabs they took back, and the calls that wait for them."""

from __future__ import annotations

import pytest

from broker.core.broker_messages import ErrorReply, TabReleased
from broker.core.effects import CallWaiting, SendToExtension, TabsChanged
from broker.core.errors import Paused, TabBusy
from broker.core.messages import ApprovalPending, PersonEndedSession, PersonReleasedTab
from broker.core.pending import CallKind
from broker.core.person import MAX_APPROVAL_WAIT, check_paused

from .parts_world import make_parts


def test_an_ending_the_person_asks_names_the_session_and_leaves_ending_it_to_the_broker() -> None:
    parts = make_parts()
    parts.browser.told.add("s1")

    asked = parts.person.ending_asked(parts.link, PersonEndedSession("s1"))

    assert not isinstance(asked, SendToExtension)
    session, note = asked
    assert session is parts.session and "the person ended session 'client one'" in note
    assert "s1" in parts.sessions
    assert not parts.person.ended_by_person("s1")


def test_a_session_the_browser_never_heard_of_is_not_its_to_end() -> None:
    parts = make_parts()

    refusal = parts.person.ending_asked(parts.link, PersonEndedSession("s1"))

    assert isinstance(refusal, SendToExtension) and isinstance(refusal.message, ErrorReply)
    assert refusal.message.code == "unknown_session"


def test_what_the_person_said_is_told_once_and_only_the_latest_endings_are_kept() -> None:
    parts = make_parts(max_sessions=2)
    for session_id in ("a", "b", "c"):
        parts.person.remember_ending(session_id, f"ended {session_id}")

    assert not parts.person.ended_by_person("a")
    assert parts.person.heard_ending("c") == "ended c"
    assert parts.person.heard_ending("c") is None


def test_a_tab_the_person_takes_back_is_released_and_remembered_for_its_session() -> None:
    parts = make_parts()
    parts.tab.owner = "s1"
    parts.session.current = (parts.browser.key, 7)

    effects = parts.person.on_released_tab(parts.link, PersonReleasedTab(7), 1.0)

    assert parts.tab.owner is None and parts.session.current is None
    assert (parts.browser.key, 7) in parts.session.taken_back
    assert SendToExtension(1, TabReleased("s1", 7)) in effects
    assert TabsChanged(frozenset({"s1"})) in effects


def test_a_call_waiting_for_approval_gets_the_persons_time_and_keeps_others_out_of_its_tab() -> None:
    parts = make_parts()
    pending = parts.calls.add(parts.session, parts.browser, CallKind.TOOL, 0.0, None, 7, "search")

    asked_for_a_day = ApprovalPending(pending.call_id, 10 * MAX_APPROVAL_WAIT)

    [waiting] = parts.person.on_approval_pending(parts.link, asked_for_a_day, 1.0)

    assert isinstance(waiting, CallWaiting) and waiting.up_to == MAX_APPROVAL_WAIT
    assert pending.deadline == 1.0 + MAX_APPROVAL_WAIT + pending.timeout
    parts.person.check_not_busy(parts.browser, parts.tab, "close", but_for="s1")
    with pytest.raises(TabBusy):
        parts.person.check_not_busy(parts.browser, parts.tab, "close", but_for="s2")


def test_a_paused_browser_refuses() -> None:
    parts = make_parts()
    check_paused(parts.browser)

    parts.browser.paused = True

    with pytest.raises(Paused):
        check_paused(parts.browser)
