"""Idempotency keys in the core: what is kept for a repeat, for how long, and how many."""

from __future__ import annotations

import pytest

from broker.core import errors
from broker.core.once import OnceKeys, Outcome, kept

CALL = b"tab 7, tool search, {}"


def test_a_kept_error_is_raised_anew_each_time_and_holds_no_traceback() -> None:
    keys = OnceKeys(keep_for=60, per_session=10)
    assert keys.begin("s", "k", CALL, 0.0) is False
    assert keys.begin("s", "k", CALL, 0.5) is True  # running: a repeat waits for it
    try:
        raise errors.PageToolFailed("out of stock", page_code="stock")
    except errors.PageToolFailed as raised:
        keys.end("s", "k", 1.0, error=raised)
    outcome = keys.begin("s", "k", CALL, 2.0)
    assert isinstance(outcome, Outcome) and outcome.error is not None
    assert outcome.error.__traceback__ is None and outcome.error.__context__ is None
    replays = []
    for _ in range(2):
        with pytest.raises(errors.PageToolFailed) as replayed:
            outcome.replay()
        assert replayed.value.page_code == "stock" and replayed.value.message == "out of stock"
        replays.append(replayed.value)
    assert replays[0] is not replays[1] and outcome.error.__traceback__ is None


def test_only_outcomes_of_calls_that_reached_the_page_are_kept() -> None:
    reached = [
        None,
        errors.PageToolFailed("threw"),
        errors.MessageTooLarge("too big"),
        errors.CallTimedOut("no answer"),
        errors.ExtensionDisconnected("link lost"),
    ]
    refused = [
        errors.RateLimited("slow down", retry_after=1),
        errors.TooManyCalls("256 in flight"),
        errors.TooManySessions("full"),
        errors.Paused("paused"),
        errors.NotApproved("denied"),
        errors.ConsentRequired("not shared"),
        errors.CircuitOpen("resting"),
        errors.ExtensionNotConnected("none"),
        errors.TabOwnedByOther("theirs", "other", "Other"),
        errors.TabNotClaimed("the person's"),
        errors.TabNotFound("gone"),
        errors.ToolNotFound("no such tool"),
        errors.SessionEnded("ended"),
        errors.InvalidRequest("bad"),
        errors.InternalError("bug"),
    ]
    assert all(kept(error) for error in reached)
    assert not any(kept(error) for error in refused)
    keys = OnceKeys(keep_for=60, per_session=10)
    keys.begin("s", "k", CALL, 0.0)
    keys.end("s", "k", 1.0, error=errors.RateLimited("slow down", retry_after=1))
    assert keys.count("s") == 0
    assert keys.begin("s", "k", CALL, 2.0) is False  # the repeat runs


def test_a_key_names_one_call_and_lapses_after_its_time() -> None:
    keys = OnceKeys(keep_for=60, per_session=10)
    keys.begin("s", "k", CALL, 0.0)
    keys.end("s", "k", 1.0, value={"hits": 1})
    with pytest.raises(errors.IdempotencyKeyReused, match="another tab, tool or arguments"):
        keys.begin("s", "k", b"tab 8, tool search, {}", 2.0)
    assert keys.begin("other-session", "k", b"tab 8, tool search, {}", 2.0) is False
    assert keys.begin("s", "k", CALL, 60.9) == Outcome({"hits": 1})
    assert keys.begin("s", "k", b"tab 8, tool search, {}", 61.0) is False  # lapsed: a new call


def test_a_session_holds_at_most_its_cap_of_keys_until_the_oldest_lapse() -> None:
    keys = OnceKeys(keep_for=60, per_session=3)
    for number in range(3):
        keys.begin("s", f"k{number}", CALL, float(number))
        keys.end("s", f"k{number}", float(number), value=number)
    with pytest.raises(errors.TooManyCalls, match="holds 3 Idempotency-Keys"):
        keys.begin("s", "k3", CALL, 10.0)
    assert keys.count("s") == 3
    assert keys.begin("s", "k0", CALL, 10.0) == Outcome(0)  # repeats still answered
    assert keys.begin("s", "k3", CALL, 60.0) is False  # k0 lapsed
    keys.forget("s")
    assert keys.count("s") == 0
