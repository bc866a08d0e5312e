"""How much a session may ask, and when a tool that keeps timing out is left alone for a while.

- :class:`RateLimiter`: a token bucket per session, and one per client token shared by all of
  its sessions (so a client cannot multiply its rate by opening sessions; the broker's own token
  has none, so clients cannot use up the owner's calls). Each call to the browser takes a token
  from both; a bucket refills at its ``rate`` a second up to its ``burst``. An empty bucket
  refuses the call with :class:`~broker.core.errors.RateLimited`, saying when to try again.
- :class:`Unproven`: connections that have not yet shown a token. At most ``limit``; each one past
  it pushes out the oldest, which the adapter closes. The oldest goes, not the newcomer, so a
  flood of idle sockets cannot keep a real client out: it sends its request at once and is proven
  before ``limit`` more have come, and a proven connection (any valid token, or the extension
  link) is no longer counted. So idle sockets cannot take the file descriptors the browser's link
  and real clients need.
- :class:`HeldConnections`: connections that have shown a token, counted by credential: the
  broker's own token, each client token, and all client tokens together, each capped
  (:class:`ConnectionCaps`). One past its credential's cap is refused with
  :class:`~broker.core.errors.TooManyConnections` (the adapter answers and closes it), so a
  client holding many requests open takes none of the owner's room.
- :func:`connection_caps` sizes those caps from the broker's limit of open files, so that together
  they can never use it up, and the owner's token and the extension links always keep room: what
  is left after the broker's own files and the links' bound goes a quarter to connections that
  have shown no token, a quarter to the client tokens together (each client token half of that),
  and the rest, at least half, to the owner's token. A connection is counted from its accept, when
  nobody can tell whose it is yet: so it is first among those that showed no token, then its
  credential's once its headers have come. Each cap is at most its ``Config`` value.
  A request body is held to a deadline for the whole body (``Config.body_timeout``), not to a
  least rate: a rate lets a body of the greatest size hold its connection for minutes, while over
  loopback any real client sends the largest body allowed in well under a second.
- :class:`Breakers`: a circuit breaker per tab, tool and client. After ``failures`` timeouts in a
  row, that client's calls to that tool on that tab fail at once with
  :class:`~broker.core.errors.CircuitOpen` for ``cooldown`` seconds; then one trial call goes
  through, and its outcome closes the breaker or opens it again. Any answer (a result or the
  page's error) counts as the tool working. Per client, because a client can make its own calls
  time out (``?timeout=0.001``): that must not rest the tool for everyone else. A client is a
  client token (all its sessions are one agent, which must not escape its breaker by opening
  another session), or, for the broker's own token, a session (every stdio relay and the CLI
  share that token, and each is a client of its own); see :func:`client_of`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Generic, TypeVar

import attrs

from .config import Config
from .effects import CallId, SessionId
from .errors import CircuitOpen, RateLimited, TooManyConnections
from .security import Client

__all__ = [
    "Breakers",
    "ConnectionCaps",
    "HeldConnections",
    "RateLimiter",
    "ToolKey",
    "Unproven",
    "client_of",
    "connection_caps",
    "descriptors_wanted",
    "raised_file_limit",
]

# The browser's key, the tab id, the tool's name (``browser_click`` for a built-in one) and the
# client calling it (:func:`client_of`).
ToolKey = tuple[str, int, str, str]


def client_of(session_id: SessionId, credential: Client) -> str:
    """Who a breaker counts the timeouts of: a client token, else the session (see the docstring)."""
    return f"session {session_id}" if credential is None else f"client token {credential}"


@attrs.define
class _Bucket:
    tokens: float
    filled_at: float


class _Buckets:
    """A token bucket per key, refilled at ``rate`` a second up to ``burst``; a rate of 0 is none."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = max(burst, 1)
        self._buckets: dict[str, _Bucket] = {}
        self._prune_at = 64

    def fill(self, key: str, now: float) -> _Bucket | None:
        """The key's bucket refilled to ``now``, or None when this limit is off."""
        if self.rate <= 0:
            return None
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self._prune_at:
                self._prune(now)
            bucket = self._buckets[key] = _Bucket(self.burst, now)
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.filled_at) * self.rate)
        bucket.filled_at = now
        return bucket

    def wait(self, bucket: _Bucket) -> float:
        return (1 - bucket.tokens) / self.rate

    def forget(self, key: str) -> None:
        self._buckets.pop(key, None)

    def _prune(self, now: float) -> None:
        # A bucket full again is the same as none: forgetting it changes no answer.
        refill = self.burst / self.rate
        for key in [k for k, b in self._buckets.items() if now - b.filled_at >= refill]:
            del self._buckets[key]
        self._prune_at = max(64, 2 * len(self._buckets))


class RateLimiter:
    """Calls a second per session, and per client token across all of its sessions."""

    def __init__(self, rate: float, burst: int, client_rate: float = 0.0, client_burst: int = 1) -> None:
        self._sessions = _Buckets(rate, burst)
        self._clients = _Buckets(client_rate, client_burst)

    def take(self, session_id: SessionId, now: float, credential: Client = None) -> None:
        """Take a call from the session's bucket and from its client token's (``credential``).

        Raises:
            RateLimited: either bucket is empty; neither is then taken from.
        """
        session = self._sessions.fill(session_id, now)
        client = None if credential is None else self._clients.fill(credential, now)
        if session is not None and session.tokens < 1:
            limit = self._sessions
            wait = limit.wait(session)
            raise RateLimited(
                f"more than {limit.rate:g} calls a second (bursts of {limit.burst}): retry in {wait:.2f} s",
                retry_after=wait,
            )
        if client is not None and client.tokens < 1:
            limit = self._clients
            wait = limit.wait(client)
            raise RateLimited(
                f"client token {credential!r} made more than {limit.rate:g} calls a second across its"
                f" sessions (bursts of {limit.burst}; --client-rate-limit): retry in {wait:.2f} s",
                retry_after=wait,
            )
        for bucket in (session, client):
            if bucket is not None:
                bucket.tokens -= 1

    def forget(self, session_id: SessionId) -> None:
        # A client token's bucket stays: ending its sessions must not give it a fresh burst.
        self._sessions.forget(session_id)


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
        browser, tab_id, tool, client = key
        if now < breaker.open_until:
            raise CircuitOpen(
                f"tool {tool!r} on tab {browser}:{tab_id} timed out {breaker.timeouts} times in a row for"
                f" {client}: its calls to it fail at once until it is tried again in"
                f" {math.ceil(breaker.open_until - now)} s (other clients' calls go on)"
            )
        if breaker.trial is not None:
            raise CircuitOpen(
                f"tool {tool!r} on tab {browser}:{tab_id} timed out {breaker.timeouts} times in a row for"
                f" {client}, and a trial call to it is in flight: try again when it has answered"
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


Connection = TypeVar("Connection", bound=Hashable)


class Unproven(Generic[Connection]):
    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 1)
        self._open: dict[Connection, None] = {}  # oldest first

    def opened(self, connection: Connection) -> Connection | None:
        """Count a new connection; returns the oldest unproven one to close when past the limit."""
        self._open[connection] = None
        if len(self._open) <= self.limit:
            return None
        oldest = next(iter(self._open))
        del self._open[oldest]
        return oldest

    def proven(self, connection: Connection) -> None:
        self._open.pop(connection, None)

    def closed(self, connection: Connection) -> None:
        self._open.pop(connection, None)

    def __len__(self) -> int:
        return len(self._open)


@attrs.frozen
class ConnectionCaps:
    """How many connections of each kind the broker keeps open, sized by :func:`connection_caps`."""

    # The broker's limit of open files they were sized from.
    descriptors: int
    unproven: int
    owner: int
    clients: int
    per_client: int


def connection_caps(config: Config, descriptors: int) -> ConnectionCaps:
    """The caps that fit ``descriptors`` open files, each at most its ``config`` value (module docstring)."""
    links = config.max_links + config.max_unproven_links
    room = max(descriptors - config.spare_descriptors - links, 4)
    quarter = room // 4
    unproven = max(1, min(config.max_unproven_connections, quarter))
    clients = max(1, min(config.max_client_token_connections, quarter))
    per_client = max(1, min(config.max_connections_per_client, clients // 2))
    owner = max(1, min(config.max_owner_connections, room - unproven - clients))
    return ConnectionCaps(descriptors, unproven, owner, clients, per_client)


def raised_file_limit(soft: int, hard: int, wanted: int, unlimited: int) -> int:
    """The soft limit of open files a broker raises its own to: toward ``wanted`` as far as
    ``hard`` allows, never below ``soft``; ``unlimited`` is how the system writes no limit."""
    if soft == unlimited:
        return soft
    return max(soft, wanted if hard == unlimited else min(wanted, hard))


def descriptors_wanted(config: Config) -> int:
    """The fewest open files with which :func:`connection_caps` gives every cap its ``config`` value."""
    unproven, clients = config.max_unproven_connections, config.max_client_token_connections
    room = max(4 * max(unproven, clients), unproven + clients + config.max_owner_connections)
    return config.spare_descriptors + config.max_links + config.max_unproven_links + room


_UNCOUNTED = object()


class HeldConnections(Generic[Connection]):
    def __init__(self, caps: ConnectionCaps) -> None:
        self.caps = caps
        # A connection's credential: a client token's label, or None for the broker's own token.
        self._holders: dict[Connection, str | None] = {}
        self._counts: dict[str | None, int] = {}
        self._clients = 0

    def admit(self, connection: Connection, credential: Client) -> None:
        """Count ``connection`` as ``credential``'s (None: the broker's own token) from now until it closes.

        Raises:
            TooManyConnections: the credential, or the client tokens together, hold their cap;
                ``connection`` is then not counted.
        """
        held = self._holders.get(connection, _UNCOUNTED)
        if held == credential:
            return
        if held is not _UNCOUNTED:
            # A connection kept alive may bring another credential's request: it changes hands.
            self.closed(connection)
        count = self._counts.get(credential, 0)
        caps = self.caps
        limit = f"sized from the broker's limit of {caps.descriptors} open files: browser-mcp doctor"
        if credential is None:
            if count >= caps.owner:
                raise TooManyConnections(
                    f"the broker's own token holds {count} open connections, the most it may ({limit}); the"
                    " rest are kept for the browser's extension: close some, or send requests on fewer"
                )
        else:
            if count >= caps.per_client:
                raise TooManyConnections(
                    f"client token {credential!r} holds {count} open connections, the most one client token"
                    f" may ({limit}): close some, or send requests on fewer"
                )
            if self._clients >= caps.clients:
                raise TooManyConnections(
                    f"client tokens hold {self._clients} open connections together, the most the broker"
                    f" gives them ({limit}): try again once some have closed"
                )
            self._clients += 1
        self._counts[credential] = count + 1
        self._holders[connection] = credential

    def closed(self, connection: Connection) -> None:
        if connection not in self._holders:
            return
        credential = self._holders.pop(connection)
        left = self._counts[credential] - 1
        if left:
            self._counts[credential] = left
        else:
            del self._counts[credential]
        if credential is not None:
            self._clients -= 1

    def held_by(self, credential: Client) -> int:
        return self._counts.get(credential, 0)

    def __len__(self) -> int:
        return len(self._holders)
