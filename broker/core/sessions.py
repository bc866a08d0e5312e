"""AI sessions and how long each lives.

A session is one AI client connection, one REST caller or one stateless MCP client. It belongs
to the credential that opened it: a client token (``browser-mcp mcp-config --client NAME``) or
the broker's own token. Only that credential may use it, so no client can act in another's
session; the broker's own token may also end any session. Those with a
connection end when it does, which their adapter reports. Those without (``ends_when_idle``) end
once unused for the idle time: no call in flight, no listener open, and nothing asked for that
long. A call's end counts as a use, and so does a listener's end.

A session's key (:class:`SessionKey`) says which door made it and for whom (:class:`SessionKind`);
the core and every answer carry it as its string (``mcp-3f2a...``, ``rest:ci``), which only
:meth:`SessionKey.of` reads back.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

import attrs

from .effects import SessionId
from .errors import Forbidden, TooManySessions
from .security import OWNER_CREDENTIAL, Client

__all__ = ["OWNER_CREDENTIAL", "Session", "SessionKey", "SessionKind", "Sessions"]


class SessionKind(enum.Enum):
    """Who a session is, by the door that keys it; the value begins its key's string."""

    # An MCP connection: stdio through the tunnel, or Streamable HTTP's own stream.
    MCP_CONNECTION = "mcp-"
    # A 2025-11-25 Streamable HTTP session, by its Mcp-Session-Id.
    MCP_HTTP = "mcp-http-"
    # A stateless MCP client, by its client token's name, else by its clientInfo.name.
    MCP_CLIENT = "mcp-client:"
    MCP_NAME = "mcp-name:"
    # REST's default session: the broker's own token's (``rest``), or a client token's (``rest:<name>``).
    REST = "rest"
    # An X-Session-Id a REST caller chose.
    CHOSEN = ""


# Read longest first: every MCP kind begins with MCP_CONNECTION's "mcp-".
_READ_ORDER = (SessionKind.MCP_HTTP, SessionKind.MCP_CLIENT, SessionKind.MCP_NAME, SessionKind.MCP_CONNECTION)


@attrs.frozen
class SessionKey:
    """A session's key: its kind and what names it within the kind (None: REST's owner session)."""

    kind: SessionKind
    name: str | None = None

    def __str__(self) -> str:
        if self.kind is SessionKind.REST:
            return self.kind.value if self.name is None else f"{self.kind.value}:{self.name}"
        return f"{self.kind.value}{self.name or ''}"

    @property
    def reserved(self) -> bool:
        """A key only its door makes, which no REST caller may choose."""
        return self.kind is not SessionKind.CHOSEN

    @classmethod
    def of(cls, key: str) -> SessionKey:
        """The key ``key`` writes (the core's and the answers' string)."""
        if key == SessionKind.REST.value:
            return cls(SessionKind.REST)
        if key.startswith(f"{SessionKind.REST.value}:"):
            return cls(SessionKind.REST, key[len(SessionKind.REST.value) + 1 :])
        for kind in _READ_ORDER:
            if key.startswith(kind.value):
                return cls(kind, key[len(kind.value) :])
        return cls(SessionKind.CHOSEN, key)


@attrs.define
class Session:
    id: SessionId
    name: str
    ends_when_idle: bool = False
    last_used: float = 0.0
    listeners: int = 0
    # The client token's name that opened it; None for the broker's own token.
    credential: Client = None
    # The tab built-in browser tools act on when none is named: the one last opened, focused or claimed.
    current: tuple[str, int] | None = None
    # Tabs the person took back from it in the browser, until it claims them again: errors say so.
    taken_back: set[tuple[str, int]] = attrs.Factory(set)

    def used(self, now: float) -> None:
        self.last_used = max(self.last_used, now)


class Sessions(dict[SessionId, Session]):
    """Every live session by id, how many each credential holds, and when the next may have gone idle.

    How many may live: ``limit`` of the broker's own token, and ``limit`` of all client tokens
    together, each client token at most ``client_limit``. The owner's are apart so that clients,
    however many sessions they open, never lock out the owner (the CLI, the stdio relays).
    A connection that will carry one session (an MCP tunnel) is counted from when it opens
    (:meth:`hold`), so idle connections cannot pile up past the limits either.
    """

    def __init__(self, idle: float, limit: int = 1000, client_limit: int = 100) -> None:
        super().__init__()
        self.idle_time = idle
        self.limit = limit
        self.client_limit = client_limit
        # No session that ends when idle can have gone idle before this (None: there is none).
        # A use only moves a session's end later, so the bound stays true without being
        # recomputed on every request; it is recomputed when it passes.
        self.check_idle_at: float | None = None
        # What counts against each credential (None: the broker's own token): live sessions and
        # held connections, by id.
        self._counted: dict[str | None, set[SessionId]] = {}
        self._client_count = 0
        self._held: dict[SessionId, str | None] = {}

    def open(
        self, session_id: SessionId, name: str, now: float, ends_when_idle: bool, credential: Client = None
    ) -> bool:
        """Start a session, or note a use of an existing one; True when it is new.

        Raises:
            Forbidden: a client token names a session it did not open.
            TooManySessions: the session is new, not held, and its credential holds its limit.
        """
        session = self.get(session_id)
        if session is not None:
            self.check_use(session_id, credential)
            session.used(now)
            return False
        if session_id not in self._held:
            self._admit(credential)
            self._count(session_id, credential)
        self[session_id] = Session(session_id, name, ends_when_idle, last_used=now, credential=credential)
        if ends_when_idle:
            self.check_idle_at = _earliest(self.check_idle_at, now + self.idle_time)
        return True

    def close(self, session_id: SessionId) -> Session | None:
        """Take a session out; None when there was none by that id."""
        session = self.pop(session_id, None)
        if session is not None and session_id not in self._held:
            self._uncount(session_id, session.credential)
        return session

    def hold(self, key: SessionId, credential: Client) -> None:
        """Count a connection that will carry session ``key`` against ``credential``'s limits.

        Raises:
            TooManySessions: the credential holds its limit.
        """
        if key in self._held:
            return
        if key not in self:
            self._admit(credential)
            self._count(key, credential)
        self._held[key] = credential

    def release(self, key: SessionId) -> None:
        """The connection held by :meth:`hold` closed."""
        if key not in self._held:
            return
        credential = self._held.pop(key)
        if key not in self:
            self._uncount(key, credential)

    def _admit(self, credential: Client) -> None:
        """Raises: TooManySessions, when ``credential`` may not open another session."""
        mine = len(self._counted.get(credential, ()))
        if credential is None:
            if mine >= self.limit:
                raise TooManySessions(
                    f"{mine} sessions of the broker's own token are live, the most this broker keeps"
                    " (--max-sessions); end one (DELETE /sessions/{id}) or wait for idle ones to end"
                )
            return
        if mine >= self.client_limit:
            raise TooManySessions(
                f"client token {credential!r} holds {mine} live sessions, the most one client token may"
                " (--client-max-sessions); end one (DELETE /sessions/{id}) or wait for idle ones to end"
            )
        if self._client_count >= self.limit:
            raise TooManySessions(
                f"client tokens hold {self._client_count} live sessions, the most this broker gives them"
                " together (--max-sessions; the broker's own token has as many of its own); end one"
                " (DELETE /sessions/{id}) or wait for idle ones to end"
            )

    def _count(self, key: SessionId, credential: Client) -> None:
        self._counted.setdefault(credential, set()).add(key)
        if credential is not None:
            self._client_count += 1

    def _uncount(self, key: SessionId, credential: Client) -> None:
        keys = self._counted.get(credential)
        if keys is None or key not in keys:
            return
        keys.discard(key)
        if not keys:
            del self._counted[credential]
        if credential is not None:
            self._client_count -= 1

    def check_use(self, session_id: SessionId, credential: Client) -> None:
        """Raises: Forbidden, when ``session_id`` is a live session another credential opened."""
        session = self.get(session_id)
        if session is None or session.credential == credential:
            return
        opener = "the broker's own token" if session.credential is None else f"client token {session.credential}"
        raise Forbidden(
            f"session {session_id!r} was opened with {opener}, not with this one: a session is used"
            " only with the token that opened it (the client token acts only in its own sessions)"
        )

    def check_end(self, session_id: SessionId, credential: Client) -> None:
        """Raises: Forbidden, when a client token would end a session another credential opened."""
        if credential is not None:
            self.check_use(session_id, credential)

    def touch(self, session_id: SessionId, now: float) -> None:
        session = self.get(session_id)
        if session is not None:
            session.used(now)

    def listener_opened(self, session_id: SessionId) -> None:
        session = self.get(session_id)
        if session is not None:
            session.listeners += 1

    def listener_closed(self, session_id: SessionId, now: float) -> None:
        session = self.get(session_id)
        if session is not None:
            session.listeners -= 1
            session.used(now)

    def idle(self, now: float, busy: Callable[[SessionId], int]) -> list[Session]:
        """The sessions that end when idle and have been unused for the idle time at ``now``.

        ``busy`` says how many calls a session has in flight. The caller ends each one returned.
        """
        if self.check_idle_at is None or now < self.check_idle_at:
            return []
        found: list[Session] = []
        earliest: float | None = None
        for session in self.values():
            if not session.ends_when_idle:
                continue
            if session.listeners or busy(session.id):
                # Its idle time starts no sooner than when it is next free, which is after now.
                earliest = _earliest(earliest, now + self.idle_time)
            elif now - session.last_used >= self.idle_time:
                found.append(session)
            else:
                earliest = _earliest(earliest, session.last_used + self.idle_time)
        self.check_idle_at = earliest
        return found


def _earliest(bound: float | None, when: float) -> float:
    return when if bound is None else min(bound, when)
