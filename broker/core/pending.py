"""The pending-call table: every call the broker waits on, by id, by session, by link and by deadline.

Each call the core sends the extension (a tool call, tool discovery, opening or closing a tab)
gets a broker-minted id and a deadline. The table answers what the core asks of it: a call by
id, the calls of a session or of a link, the overdue ones, the next deadline. Deadlines live in
a heap whose entries for calls already gone, or whose deadline was moved (a call waiting for
the person's approval), are skipped when they surface, so ending or postponing a call costs no
search. It also knows which tabs hold a call that waits for the person's approval. Rules about
what a call means stay in :mod:`broker.core.state`.
"""

from __future__ import annotations

import enum
import heapq
import itertools
from collections.abc import Hashable, Iterator
from typing import TypeVar

import attrs

from .effects import CallId, LinkId, SessionId
from .limits import ToolKey
from .messages import Arguments
from .snapshots import View

__all__ = ["CallKind", "Pending", "PendingCalls"]

Key = TypeVar("Key", bound=Hashable)


class CallKind(enum.Enum):
    TOOL = "tool call"
    DISCOVER = "tool discovery"
    OPEN_TAB = "opening a tab"
    CLOSE_TAB = "closing a tab"
    ACTION = "browser action"
    BROWSER = "browser request"
    CLAIM = "claiming a tab"


@attrs.define
class Pending:
    call_id: CallId
    kind: CallKind
    session_id: SessionId
    link_id: LinkId
    deadline: float
    timeout: float
    browser: str
    tab_id: int | None = None
    tool_name: str | None = None
    # A discovery that a tool call waits on: the call's arguments, sent once the tool is found.
    then_call: Arguments | None = None
    # The extension said the call waits for the person's approval (its deadline was moved).
    awaiting_person: bool = False
    # The circuit breaker a tool call or browser action goes through, and whose outcome it tells.
    breaker: ToolKey | None = None
    # What a browser action's answer shows of the page it reports.
    view: View | None = None
    # An openTab's: how many tabs its browser had announced when it was sent; a later one is its tab.
    tabs_heard_before: int | None = None

    @property
    def place(self) -> str:
        """Where the call acts: ``tab b1:7``, or the browser ``b1`` for a call of the browser's own."""
        return f"tab {self.browser}:{self.tab_id}" if self.tab_id is not None else self.browser

    def describe(self) -> str:
        """What the call was waiting for, as a timeout message names it."""
        if self.kind is CallKind.BROWSER:
            what = f"{self.tool_name} on {self.place}"  # the request: searchHistory on b1
        elif self.tool_name:
            what = f"tool {self.tool_name!r} on {self.place}"
        else:
            what = f"{self.kind.value} on {self.place}"
        return f"{what}, after waiting for the person's approval," if self.awaiting_person else what


class PendingCalls:
    def __init__(self) -> None:
        self._calls: dict[CallId, Pending] = {}
        self._by_session: dict[SessionId, set[CallId]] = {}
        self._by_link: dict[LinkId, set[CallId]] = {}
        self._deadlines: list[tuple[float, CallId]] = []
        # (browser, tab id) -> its calls that the extension said wait for the person.
        self._awaiting: dict[tuple[str, int], set[CallId]] = {}
        self._ids = itertools.count(1)

    def new_id(self) -> CallId:
        """An id for an answer given at once, which never enters the table but shares its id space."""
        return f"k{next(self._ids)}"

    def add(
        self,
        kind: CallKind,
        session_id: SessionId,
        link_id: LinkId,
        browser: str,
        now: float,
        timeout: float,
        tab_id: int | None = None,
        tool_name: str | None = None,
    ) -> Pending:
        call_id = f"c{next(self._ids)}"
        pending = Pending(call_id, kind, session_id, link_id, now + timeout, timeout, browser, tab_id, tool_name)
        self._calls[call_id] = pending
        self._by_session.setdefault(session_id, set()).add(call_id)
        self._by_link.setdefault(link_id, set()).add(call_id)
        heapq.heappush(self._deadlines, (pending.deadline, call_id))
        return pending

    def postpone(self, call_id: CallId, deadline: float) -> None:
        """Move a call's deadline; the heap entry of the old one is skipped when it surfaces."""
        pending = self._calls.get(call_id)
        if pending is None:
            return
        pending.deadline = deadline
        heapq.heappush(self._deadlines, (deadline, call_id))

    def postpone_all(self, by: float) -> None:
        """Move every call's deadline ``by`` seconds later."""
        for pending in self._calls.values():
            pending.deadline += by
        self._deadlines = [(pending.deadline, pending.call_id) for pending in self._calls.values()]
        heapq.heapify(self._deadlines)

    def get(self, call_id: CallId) -> Pending | None:
        return self._calls.get(call_id)

    def await_person(self, call_id: CallId) -> None:
        """Note that a call waits for the person's approval, until it ends."""
        pending = self._calls.get(call_id)
        if pending is None:
            return
        pending.awaiting_person = True
        if pending.tab_id is not None:
            self._awaiting.setdefault((pending.browser, pending.tab_id), set()).add(call_id)

    def awaiting_in(self, browser: str, tab_id: int) -> Pending | None:
        """A call in the tab that waits (or waited, and now runs) with the person's approval."""
        calls = self._awaiting.get((browser, tab_id))
        return self._calls[min(calls)] if calls else None

    def pop(self, call_id: CallId) -> Pending | None:
        """Take a call out of the table; None when it had already ended."""
        pending = self._calls.pop(call_id, None)
        if pending is None:
            return None
        _discard(self._by_session, pending.session_id, call_id)
        _discard(self._by_link, pending.link_id, call_id)
        if pending.awaiting_person and pending.tab_id is not None:
            _discard(self._awaiting, (pending.browser, pending.tab_id), call_id)
        return pending

    def of_session(self, session_id: SessionId) -> list[CallId]:
        return list(self._by_session.get(session_id, ()))

    def of_link(self, link_id: LinkId) -> list[Pending]:
        return [self._calls[call_id] for call_id in self._by_link.get(link_id, ())]

    def count_of(self, session_id: SessionId) -> int:
        return len(self._by_session.get(session_id, ()))

    def overdue(self, now: float) -> Iterator[Pending]:
        """The calls whose deadline has passed, earliest first; the caller ends each one."""
        while self._deadlines and self._deadlines[0][0] <= now:
            deadline, call_id = heapq.heappop(self._deadlines)
            pending = self._calls.get(call_id)
            if pending is not None and pending.deadline == deadline:
                yield pending

    def next_deadline(self) -> float | None:
        while self._deadlines and not self._live(*self._deadlines[0]):
            heapq.heappop(self._deadlines)
        return self._deadlines[0][0] if self._deadlines else None

    def _live(self, deadline: float, call_id: CallId) -> bool:
        pending = self._calls.get(call_id)
        return pending is not None and pending.deadline == deadline

    def __len__(self) -> int:
        return len(self._calls)


def _discard(index: dict[Key, set[CallId]], key: Key, call_id: CallId) -> None:
    calls = index.get(key)
    if calls is not None:
        calls.discard(call_id)
        if not calls:
            del index[key]
