"""Idempotency keys in the core: what is kept for a repeat, for how long, and how many."""

from __future__ import annotations

import pytest

from broker.core import errors
from broker.core.config import Config
from broker.core.once import OnceKeys, Outcome, footprint, kept
from broker.core.state import Broker

CALL = b"tab 7, tool search, {}"
MB = 1024 * 1024


def once_keys(keep_for: float = 60, per_session: int = 10, bytes_per_credential: int = 4 * MB) -> OnceKeys:
    return OnceKeys(keep_for, per_session, bytes_per_credential)


def test_a_kept_error_is_raised_anew_each_time_and_holds_no_traceback() -> None:
    keys = once_keys()
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
    keys = once_keys()
    keys.begin("s", "k", CALL, 0.0)
    keys.end("s", "k", 1.0, error=errors.RateLimited("slow down", retry_after=1))
    assert keys.count("s") == 0
    assert keys.begin("s", "k", CALL, 2.0) is False  # the repeat runs


def test_a_key_names_one_call_and_lapses_after_its_time() -> None:
    keys = once_keys()
    keys.begin("s", "k", CALL, 0.0)
    keys.end("s", "k", 1.0, value={"hits": 1})
    with pytest.raises(errors.IdempotencyKeyReused, match="another tab, tool or arguments"):
        keys.begin("s", "k", b"tab 8, tool search, {}", 2.0)
    assert keys.begin("other-session", "k", b"tab 8, tool search, {}", 2.0) is False
    assert keys.begin("s", "k", CALL, 60.9) == Outcome({"hits": 1})
    assert keys.begin("s", "k", b"tab 8, tool search, {}", 61.0) is False  # lapsed: a new call


def test_a_session_holds_at_most_its_cap_of_keys_until_the_oldest_lapse() -> None:
    keys = once_keys(per_session=3)
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


def kept_call(keys: OnceKeys, session: str, key: str, now: float, value: str, credential: str | None = None) -> None:
    assert keys.begin(session, key, CALL, now, credential) is False
    keys.end(session, key, now, value=value, size=footprint(value))


def test_a_credentials_outcomes_stay_within_its_bytes_the_oldest_dropped_first() -> None:
    keys = once_keys(per_session=1000, bytes_per_credential=1 * MB)
    answer = "x" * 300_000  # four of them are more than 1 MB
    # One client token's two sessions share its bound; another credential has its own.
    for number in range(4):
        kept_call(keys, f"rest:mallory:{number % 2}", f"k{number}", float(number), answer, "mallory")
    kept_call(keys, "rest", "owner", 4.0, answer)
    assert footprint(answer) * 3 <= keys.kept_bytes("mallory") <= 1 * MB
    assert keys.kept_bytes(None) == footprint(answer)
    # The oldest outcome went; its key did not: a repeat is told, and does not run the call again.
    with pytest.raises(errors.IdempotencyOutcomeDropped, match="ran, but its outcome is no longer kept"):
        keys.begin("rest:mallory:0", "k0", CALL, 5.0, "mallory")
    with pytest.raises(errors.IdempotencyKeyReused):
        keys.begin("rest:mallory:0", "k0", b"another call", 5.0, "mallory")
    for number in (1, 2, 3):
        assert keys.begin(f"rest:mallory:{number % 2}", f"k{number}", CALL, 5.0, "mallory") == Outcome(answer)
    assert keys.begin("rest", "owner", CALL, 5.0) == Outcome(answer)


def test_an_outcome_larger_than_the_whole_bound_is_dropped_alone() -> None:
    keys = once_keys(bytes_per_credential=1 * MB)
    kept_call(keys, "s", "small", 0.0, "small answer", "mallory")
    kept_call(keys, "s", "huge", 1.0, "x" * (2 * MB), "mallory")
    assert keys.kept_bytes("mallory") == footprint("small answer")
    assert keys.begin("s", "small", CALL, 2.0, "mallory") == Outcome("small answer")
    with pytest.raises(errors.IdempotencyOutcomeDropped):
        keys.begin("s", "huge", CALL, 2.0, "mallory")


def test_outcomes_are_freed_when_they_lapse_though_their_session_never_calls_again() -> None:
    core = Broker(Config(server_version="test", idempotency_keep_for=60.0))
    assert core.next_wakeup() is None
    core.open_session("rest:mallory", "mallory", 0.0, credential="mallory")
    for number in range(3):
        kept_call(core.once_keys, "rest:mallory", f"k{number}", 10.0 + number, "x" * 100_000, "mallory")
    assert core.once_keys.kept_bytes("mallory") > 300_000
    assert core.next_wakeup() == 70.0  # the broker's timer comes back to free the first
    core.expire(70.0)
    assert core.once_keys.count("rest:mallory") == 2 and core.next_wakeup() == 71.0
    core.expire(72.5)
    assert core.once_keys.kept_bytes("mallory") == 0 and core.once_keys.count("rest:mallory") == 0
    assert core.next_wakeup() is None
    assert core.once_keys.begin("rest:mallory", "k0", b"a new call", 73.0, "mallory") is False


def test_an_ended_sessions_outcomes_are_freed_at_once() -> None:
    keys = once_keys()
    kept_call(keys, "s", "k", 0.0, "x" * 100_000, "mallory")
    keys.forget("s")
    assert keys.kept_bytes("mallory") == 0 and keys.next_lapse() is None


def test_the_footprint_of_a_deep_value_is_measured_without_recursion() -> None:
    deep: list[object] = []
    inner = deep
    for _ in range(10_000):
        inner.append([])
        inner = inner[0]  # type: ignore[assignment]
    assert footprint(deep) > 10_000 * 56
    assert footprint({"text": "x" * 1000}) > 1000
    assert footprint(errors.PageToolFailed("x" * 1000, page_code="stock")) > 1000
