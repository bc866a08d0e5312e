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
- A key names one call: reused for another tab, tool or arguments it is refused with
  :class:`~.errors.IdempotencyKeyReused` (422), as the IETF draft on the header asks. The adapter
  digests the arguments' meaning, not their bytes: the same JSON spaced or ordered otherwise is
  the same call.

The adapter keeps what a repeat waits on while the first call runs; this module keeps the rules.
"""

from __future__ import annotations

from typing import Any

import attrs

from .effects import SessionId
from .errors import BrokerError, CallTimedOut, ExtensionDisconnected, ExtensionError, IdempotencyKeyReused, TooManyCalls

__all__ = ["OnceKeys", "Outcome", "kept"]


def kept(error: BrokerError | None) -> bool:
    """Whether a call that ended so is answered the same to a repeat (see the module docstring)."""
    return error is None or isinstance(error, ExtensionError | CallTimedOut | ExtensionDisconnected)


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


@attrs.define
class _Entry:
    # Which call the key names: its tab, tool and arguments, as the adapter digests them.
    fingerprint: bytes
    outcome: Outcome | None = None
    ended_at: float = 0.0


@attrs.define
class _SessionKeys:
    running: dict[str, _Entry] = attrs.Factory(dict)
    # In the order they ended, so those that lapsed are at the front.
    ended: dict[str, _Entry] = attrs.Factory(dict)

    def __len__(self) -> int:
        return len(self.running) + len(self.ended)

    def lapse(self, before: float) -> None:
        while self.ended:
            key, entry = next(iter(self.ended.items()))
            if entry.ended_at > before:
                return
            del self.ended[key]


class OnceKeys:
    def __init__(self, keep_for: float, per_session: int) -> None:
        self.keep_for = keep_for
        self.per_session = per_session
        self._sessions: dict[SessionId, _SessionKeys] = {}

    def begin(self, session_id: SessionId, key: str, fingerprint: bytes, now: float) -> Outcome | bool:
        """Look a key up: an ended call's :class:`Outcome`, True while it runs, or False when the
        key is new (it now counts as running; end it with :meth:`end`).

        Raises:
            IdempotencyKeyReused: the key was used for another tab, tool or arguments.
            TooManyCalls: the key is new and the session holds ``per_session`` keys.
        """
        keys = self._sessions.setdefault(session_id, _SessionKeys())
        keys.lapse(now - self.keep_for)
        entry = keys.running.get(key) or keys.ended.get(key)
        if entry is not None:
            if entry.fingerprint != fingerprint:
                raise IdempotencyKeyReused(
                    f"Idempotency-Key {key!r} was used within the last {self.keep_for:g} s for another call"
                    " (another tab, tool or arguments): a key names one call; use a new key for a new call"
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
        self, session_id: SessionId, key: str, now: float, value: Any = None, error: BrokerError | None = None
    ) -> None:
        """The call a new key began has ended: its outcome is kept for repeats, or (refused) forgotten."""
        keys = self._sessions.get(session_id)
        entry = None if keys is None else keys.running.pop(key, None)
        if keys is None or entry is None:
            return
        if kept(error):
            entry.outcome = Outcome(value, None if error is None else error.anew())
            entry.ended_at = now
            keys.ended[key] = entry
        elif not keys:
            del self._sessions[session_id]

    def forget(self, session_id: SessionId) -> None:
        self._sessions.pop(session_id, None)

    def count(self, session_id: SessionId) -> int:
        """Keys the session holds, running or kept (lapsed ones may still be counted)."""
        keys = self._sessions.get(session_id)
        return 0 if keys is None else len(keys)
