"""How much a session may ask, and when a tool that keeps timing out is left alone for a while.

- :class:`RateLimiter`: a token bucket per session. Each call to the browser takes a token; the
  bucket refills at ``rate`` a second up to ``burst``. An empty bucket refuses the call with
  :class:`~broker.core.errors.RateLimited`, saying when to try again. Other sessions have buckets
  of their own.
- :class:`Breakers`: a circuit breaker per tab and tool. After ``failures`` timeouts in a row,
  calls to that tool on that tab fail at once with :class:`~broker.core.errors.CircuitOpen` for
  ``cooldown`` seconds; then one trial call goes through, and its outcome closes the breaker or
  opens it again. Any answer (a result or the page's error) counts as the tool working.
"""

from __future__ import annotations

import math

import attrs

from .effects import CallId, SessionId
from .errors import CircuitOpen, RateLimited

__all__ = ["Breakers", "RateLimiter", "ToolKey"]

# The browser's key, the tab id and the tool's name (``browser_click`` for a built-in one).
ToolKey = tuple[str, int, str]


@attrs.define
class _Bucket:
    tokens: float
    filled_at: float


class RateLimiter:
    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = max(burst, 1)
        self._buckets: dict[SessionId, _Bucket] = {}

    def take(self, session_id: SessionId, now: float) -> None:
        """Raises: RateLimited, when the session has used its calls for now."""
        if self.rate <= 0:
            return
        bucket = self._buckets.setdefault(session_id, _Bucket(self.burst, now))
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.filled_at) * self.rate)
        bucket.filled_at = now
        if bucket.tokens < 1:
            wait = (1 - bucket.tokens) / self.rate
            raise RateLimited(
                f"more than {self.rate:g} calls a second (bursts of {self.burst}): retry in {wait:.2f} s",
                retry_after=wait,
            )
        bucket.tokens -= 1

    def forget(self, session_id: SessionId) -> None:
        self._buckets.pop(session_id, None)


@attrs.define
class _Breaker:
    timeouts: int = 0
    open_until: float | None = None
    trial: CallId | None = None


class Breakers:
    def __init__(self, failures: int, cooldown: float) -> None:
        self.failures = failures
        self.cooldown = cooldown
        self._breakers: dict[ToolKey, _Breaker] = {}

    def admit(self, key: ToolKey, now: float) -> None:
        """Let a call through, or refuse it while the tool's breaker is open.

        Raises:
            CircuitOpen: it is open, or half open with its one trial call in flight.
        """
        breaker = self._breakers.get(key)
        if breaker is None or breaker.open_until is None:
            return
        browser, tab_id, tool = key
        if now < breaker.open_until:
            raise CircuitOpen(
                f"tool {tool!r} on tab {browser}:{tab_id} timed out {breaker.timeouts} times in a row: calls"
                f" to it fail at once until it is tried again in {math.ceil(breaker.open_until - now)} s"
            )
        if breaker.trial is not None:
            raise CircuitOpen(
                f"tool {tool!r} on tab {browser}:{tab_id} timed out {breaker.timeouts} times in a row, and a"
                " trial call to it is in flight: try again when it has answered"
            )

    def started(self, key: ToolKey, call_id: CallId, now: float) -> None:
        """A call :meth:`admit` let through went out; past the cooldown it is the one trial."""
        breaker = self._breakers.get(key)
        if breaker is not None and breaker.open_until is not None and now >= breaker.open_until:
            breaker.trial = call_id

    def ended(self, key: ToolKey, call_id: CallId, timed_out: bool, now: float) -> None:
        """A call through the breaker ended: timed out, or answered."""
        if not timed_out:
            self._breakers.pop(key, None)
            return
        breaker = self._breakers.setdefault(key, _Breaker())
        breaker.timeouts += 1
        breaker.trial = None
        if breaker.timeouts >= self.failures:
            breaker.open_until = now + self.cooldown

    def withdrawn(self, key: ToolKey, call_id: CallId) -> None:
        """A call ended with no word on the tool (its caller gave up, its tab or link went)."""
        breaker = self._breakers.get(key)
        if breaker is not None and breaker.trial == call_id:
            breaker.trial = None

    def forget_tab(self, browser: str, tab_id: int) -> None:
        for key in [k for k in self._breakers if k[:2] == (browser, tab_id)]:
            del self._breakers[key]
