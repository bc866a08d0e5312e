"""Idempotency keys: a tool call made with one runs at most once per session and key.

A REST call may carry ``Idempotency-Key``. The first call with a key runs; a repeat while it runs
waits for it, and a repeat up to ``keep_for`` seconds after it ended gets its outcome again
instead of running the tool twice. What is kept, and for how long, is bounded:

- Outcomes only: a result, or an error copied afresh (no traceback, so nothing of the request
  or response it was raised in). Each repeat raises a new copy.
- Only outcomes of calls that reached the page: a result, the page's or extension's error
  (:class:`~.errors.ExtensionError`), a timeout or a link lost mid-call (the tool may have run,
  so a repeat must not run it again). A call refused before it ran is never kept, so a repeat
  can succeed: rate limits and other 429s, ``paused``, ``not_approved``, ``consent_required``,
  ``circuit_open``, ``no_extension``, ownership errors, a tab or tool not found, an ended session,
  bad arguments.
- At most ``per_session`` keys a session, running or kept; a new key past that is refused
  (429 ``too_many_calls``) until the oldest lapses. A session's keys go when it ends.
- Outcomes as the client was sent them (a page's result after the cut), and at most
  ``bytes_per_credential`` bytes of them for each credential (the broker's own token, or one
  client token, whatever the number of its sessions), as the adapter measures them with
  :func:`footprint`. Past that the oldest outcomes are dropped, their keys kept: a repeat of one
  is told its call ran and its outcome is gone (410 ``idempotency_outcome_dropped``) rather than
  run twice. An outcome larger than the whole bound is dropped at once.
- Outcomes are freed when they lapse, whether or not their session calls again: :meth:`OnceKeys.lapse`
  runs on the broker's timer (:meth:`OnceKeys.next_lapse`).
- A key names one call: reused for another tab, tool or arguments it is refused with
  :class:`~.errors.IdempotencyKeyReused` (422), as the IETF draft on the header asks. The adapter
  digests the arguments' meaning, not their bytes: the same JSON spaced or ordered otherwise is
  the same call.

The adapter keeps what a repeat waits on while the first call runs; this module keeps the rules.
"""

from __future__ import annotations

import sys
from typing import Any

import attrs

from .effects import SessionId
from .errors import (
    BrokerError,
    CallTimedOut,
    ExtensionDisconnected,
    ExtensionError,
    IdempotencyKeyReused,
    IdempotencyOutcomeDropped,
    TooManyCalls,
)
from .security import Client

__all__ = ["OnceKeys", "Outcome", "footprint", "kept"]


def kept(error: BrokerError | None) -> bool:
    """Whether a call that ended so is answered the same to a repeat (see the module docstring)."""
    return error is None or isinstance(error, ExtensionError | CallTimedOut | ExtensionDisconnected)


def footprint(value: Any) -> int:
    """The bytes ``value`` and everything it holds take in memory: plain data (strings, numbers,
    lists, tuples, dicts) and broker errors. Walked without recursion, as a page's value may nest
    as deep as JSON lets it."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        total += sys.getsizeof(item)
        if isinstance(item, dict):
            stack += item.keys()
            stack += item.values()
        elif isinstance(item, list | tuple):
            stack += item
        elif isinstance(item, BaseException):
            stack.append(vars(item))
    return total


@attrs.frozen
class Outcome:
    value: Any = None
    error: BrokerError | None = None

    def replay(self) -> Any:
        """The first call's result, or a fresh copy of its error raised.

        Raises:
            BrokerError: the first call's error.
        """
        if self.error is not None:
            raise self.error.anew()
        return self.value


# Where a key lives: its session and the key.
_Place = tuple[SessionId, str]


@attrs.define
class _Entry:
    # Which call the key names: its tab, tool and arguments, as the adapter digests them.
    fingerprint: bytes
    outcome: Outcome | None = None
    ended_at: float = 0.0
    # Bytes the kept outcome takes; 0 once dropped, or while running.
    size: int = 0
    dropped: bool = False


@attrs.define
class _SessionKeys:
    credential: Client
    running: dict[str, _Entry] = attrs.Factory(dict)
    ended: dict[str, _Entry] = attrs.Factory(dict)

    def __len__(self) -> int:
        return len(self.running) + len(self.ended)


@attrs.define
class _CredentialOutcomes:
    # The outcomes kept, in the order they ended: the oldest is dropped first.
    entries: dict[_Place, _Entry] = attrs.Factory(dict)
    size: int = 0


class OnceKeys:
    """The keys of every session. ``now`` never goes back between calls (the broker's clock)."""

    def __init__(self, keep_for: float, per_session: int, bytes_per_credential: int) -> None:
        self.keep_for = keep_for
        self.per_session = per_session
        self.bytes_per_credential = bytes_per_credential
        self._sessions: dict[SessionId, _SessionKeys] = {}
        # Every ended key, in the order they ended, so those that lapsed are at the front.
        self._ended: dict[_Place, _Entry] = {}
        self._outcomes: dict[str | None, _CredentialOutcomes] = {}

    def begin(
        self, session_id: SessionId, key: str, fingerprint: bytes, now: float, credential: Client = None
    ) -> Outcome | bool:
        """Look a key up: an ended call's :class:`Outcome`, True while it runs, or False when the
        key is new (it now counts as running; end it with :meth:`end`). ``credential``: whose
        session it is (None: the broker's own token), whose bound its outcome will count against.

        Raises:
            IdempotencyKeyReused: the key was used for another tab, tool or arguments.
            IdempotencyOutcomeDropped: the key's call ended, but its outcome was dropped.
            TooManyCalls: the key is new and the session holds ``per_session`` keys.
        """
        self.lapse(now)
        keys = self._sessions.setdefault(session_id, _SessionKeys(credential))
        entry = keys.running.get(key) or keys.ended.get(key)
        if entry is not None:
            if entry.fingerprint != fingerprint:
                raise IdempotencyKeyReused(
                    f"Idempotency-Key {key!r} was used within the last {self.keep_for:g} s for another call"
                    " (another tab, tool or arguments): a key names one call; use a new key for a new call"
                )
            if entry.dropped:
                raise IdempotencyOutcomeDropped(
                    f"the call of Idempotency-Key {key!r} ran, but its outcome is no longer kept: the broker"
                    f" keeps at most {self.bytes_per_credential:,} bytes of outcomes per credential, the"
                    " oldest dropped first; it does not run the call again"
                )
            return entry.outcome if entry.outcome is not None else True
        if len(keys) >= self.per_session:
            raise TooManyCalls(
                f"this session holds {len(keys)} Idempotency-Keys of calls running or ended in the last"
                f" {self.keep_for:g} s, the most one session keeps: retry once the oldest has lapsed,"
                " or call without the header"
            )
        keys.running[key] = _Entry(fingerprint)
        return False

    def end(
        self,
        session_id: SessionId,
        key: str,
        now: float,
        value: Any = None,
        error: BrokerError | None = None,
        size: int = 0,
    ) -> None:
        """The call a new key began has ended: its outcome is kept for repeats, or (refused) forgotten.
        ``size``: the bytes the outcome takes (:func:`footprint` of what the client was sent)."""
        keys = self._sessions.get(session_id)
        entry = None if keys is None else keys.running.pop(key, None)
        if keys is None or entry is None:
            return
        if not kept(error):
            if not keys:
                del self._sessions[session_id]
            return
        place = (session_id, key)
        entry.ended_at = now
        keys.ended[key] = entry
        self._ended[place] = entry
        if size > self.bytes_per_credential:
            entry.dropped = True
            return
        entry.outcome = Outcome(value, None if error is None else error.anew())
        entry.size = size
        outcomes = self._outcomes.setdefault(keys.credential, _CredentialOutcomes())
        outcomes.entries[place] = entry
        outcomes.size += size
        while outcomes.size > self.bytes_per_credential:
            oldest = next(iter(outcomes.entries))
            self._drop_outcome(keys.credential, oldest)
            outcomes.entries[oldest].dropped = True
            del outcomes.entries[oldest]

    def _drop_outcome(self, credential: Client, place: _Place) -> None:
        outcomes = self._outcomes[credential]
        entry = outcomes.entries[place]
        outcomes.size -= entry.size
        entry.outcome = None
        entry.size = 0

    def _forget_ended(self, place: _Place, keys: _SessionKeys) -> None:
        entry = keys.ended.pop(place[1])
        outcomes = self._outcomes.get(keys.credential)
        if outcomes is not None and place in outcomes.entries:
            self._drop_outcome(keys.credential, place)
            del outcomes.entries[place]
            if not outcomes.entries:
                del self._outcomes[keys.credential]
        entry.dropped = True

    def lapse(self, now: float) -> None:
        """Forget the keys (and free the outcomes) of calls that ended ``keep_for`` seconds ago or more."""
        before = now - self.keep_for
        while self._ended:
            place, entry = next(iter(self._ended.items()))
            if entry.ended_at > before:
                return
            del self._ended[place]
            keys = self._sessions[place[0]]
            self._forget_ended(place, keys)
            if not keys:
                del self._sessions[place[0]]

    def next_lapse(self) -> float | None:
        """When :meth:`lapse` next has something to forget, or None."""
        oldest = next(iter(self._ended.values()), None)
        return None if oldest is None else oldest.ended_at + self.keep_for

    def forget(self, session_id: SessionId) -> None:
        keys = self._sessions.pop(session_id, None)
        if keys is None:
            return
        for key in list(keys.ended):
            place = (session_id, key)
            del self._ended[place]
            self._forget_ended(place, keys)

    def count(self, session_id: SessionId) -> int:
        """Keys the session holds, running or ended within ``keep_for`` s (as of the last lapse)."""
        keys = self._sessions.get(session_id)
        return 0 if keys is None else len(keys)

    def kept_bytes(self, credential: Client) -> int:
        """Bytes of outcomes kept for ``credential``'s sessions."""
        outcomes = self._outcomes.get(credential)
        return 0 if outcomes is None else outcomes.size
