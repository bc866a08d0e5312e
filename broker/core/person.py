"""What the person in charge of a browser does to AI agents, as the core hears it. No I/O.

The extension reports what the person did in the browser (docs/extension-link.md), and
this module turns each report into the broker's state and into errors a client can act on:

- ``personEndedSession``: the session ends as if its client had ended it (calls withdrawn, tabs
  released), and is remembered so that the client's next request hears that the person ended
  it, rather than that it is merely gone. That request is refused; the one after starts a new
  session: ending a session takes its tabs back, it does not ban the client (pausing stops all).
- ``personReleasedTab``: the tab loses its owner, and the owner's next built-in tool on it says
  the person took it back.
- ``pauseChanged`` (and ``connected.paused``): a paused browser refuses tool calls, built-in
  browser actions and opening, closing or focusing tabs at once, before anything reaches it.
  The extension refuses them too, so a broker that did not hear of the pause still gets
  ``paused`` back; the broker's own check spares the round trip.
- ``approvalPending``: the call's deadline moves by the approval's time, so the broker never
  times a call out while the person decides, and its caller is told the call waits
  (:class:`~broker.core.effects.CallWaiting`). Until that call ends, its tab takes nothing else
  from any client (page tools, built-in actions, navigation included, closing, focusing, its
  window focused or closed, another session's claim or release): each is refused at once with
  ``tab_busy``, so what the person sees in the approval window stays what they approve. The
  extension checks too, right before the call runs, that the tab still shows the document they
  approved (the person, or the page itself, may still navigate it).

:class:`PersonInCharge` owns the one thing the person's word leaves behind: the sessions they
ended whose clients have not heard so yet. Ending such a session is the
:class:`~broker.core.state.Broker`'s to do (:meth:`PersonInCharge.ending_asked` says which and
why); sessions, tabs and calls are their registries' and :class:`~broker.core.link_calls.LinkCalls`'.
Kept apart because these rules answer to the person rather than to clients.
"""

from __future__ import annotations

import logging

from .broker_messages import ErrorReply, TabReleased
from .browsers import Browser, Browsers, Tab
from .config import Config
from .effects import CallWaiting, Effect, SendToExtension, SessionId
from .errors import Paused, TabBusy
from .link_calls import Link, LinkCalls
from .links import Handlers, announced_tab
from .messages import ApprovalPending, PauseChanged, PersonEndedSession, PersonReleasedTab
from .messenger import Messenger
from .pending import CallKind
from .sessions import Session, Sessions

__all__ = ["MAX_APPROVAL_WAIT", "PersonInCharge", "check_paused", "taken_back"]

logger = logging.getLogger(__name__)

# The longest an extension may ask the broker to wait for the person, whatever it says: a call
# must still end, and an extension that asked for a day would hold a client that long.
MAX_APPROVAL_WAIT = 600.0


def check_paused(browser: Browser) -> None:
    """Raises: Paused, when the person paused AI agents in ``browser``."""
    if browser.paused:
        raise Paused(
            f"the person paused AI agents in this browser ({browser.key}, {browser.name or 'unnamed'}):"
            " nothing reaches its pages until they resume them from the browser-mcp popup"
        )


def taken_back(session: Session, browser: Browser, tab: Tab) -> str:
    """What to add to a refusal of a tab the person took back from ``session`` ("" for any other)."""
    if (browser.key, tab.id) not in session.taken_back:
        return ""
    return " The person took this tab back from you in the browser; claim it again only if they ask you to."


class PersonInCharge:
    """The person's side of the Broker's rules; see the module docstring."""

    def __init__(
        self, config: Config, browsers: Browsers, sessions: Sessions, calls: LinkCalls, messenger: Messenger
    ) -> None:
        self._config = config
        self._browsers = browsers
        self._sessions = sessions
        self._calls = calls
        self._messenger = messenger
        # Sessions the person ended whose client has not heard so yet: id -> what to tell it.
        self._ended_by_person: dict[SessionId, str] = {}

    def ended_by_person(self, session_id: SessionId) -> bool:
        """Whether the person ended this session and its client has not been told yet."""
        return session_id in self._ended_by_person

    def heard_ending(self, session_id: SessionId) -> str | None:
        """What to tell the client of a session the person ended, once; None if they did not."""
        return self._ended_by_person.pop(session_id, None)

    def check_not_busy(self, browser: Browser, tab: Tab, action: str, but_for: SessionId | None = None) -> None:
        """Raises: TabBusy, while a call in the tab waits for the person's approval (or runs with it),
        unless it is ``but_for``'s own."""
        waiting = self._calls.pending.awaiting_in(browser.key, tab.id)
        if waiting is None or waiting.session_id == but_for:
            return
        session = self._sessions.get(waiting.session_id)
        raise TabBusy(
            f"cannot {action} tab {browser.key}:{tab.id} now: an approval is waiting there (the person is asked"
            f" in the browser to allow {waiting.tool_name} of session"
            f" {session.name if session else waiting.session_id!r}); the tab takes no other action until that"
            " call ends"
        )

    def ending_asked(self, link: Link, message: PersonEndedSession) -> tuple[Session, str] | SendToExtension:
        """The session a ``personEndedSession`` ends and what its client is to hear, or the error
        frame that refuses it. The Broker ends the session, then :meth:`remember_ending`."""
        browser = self._browsers[link.browser]
        session = self._sessions.get(message.session_id)
        if session is None or session.id not in browser.told:
            # Ended already, or never this browser's to end: the same answer, so a link learns
            # nothing of other browsers' sessions by asking.
            text = (
                f"personEndedSession names session {message.session_id!r}, which this browser was not told of"
                " (connect) or which has ended"
            )
            logger.info("link %s: %s", link.id, text)
            return SendToExtension(link.id, ErrorReply("unknown_session", text))
        note = (
            f"the person ended session {session.name!r} from the browser ({browser.name or browser.key}):"
            " its calls were withdrawn and its tabs given back to them; your next request starts a new session"
        )
        logger.info("session %s (%s) ended by the person in %s", session.id, session.name, browser.key)
        return session, note

    def remember_ending(self, session_id: SessionId, note: str) -> None:
        """Keep ``note`` for the next request of the session the person ended."""
        self._ended_by_person[session_id] = note
        while len(self._ended_by_person) > self._config.max_sessions:
            del self._ended_by_person[next(iter(self._ended_by_person))]

    def handlers(self) -> Handlers:
        """What this part hears from extensions, by message type (``personEndedSession`` is the Broker's)."""
        return {
            PersonReleasedTab: self.on_released_tab,
            PauseChanged: self.on_pause_changed,
            ApprovalPending: self.on_approval_pending,
        }

    # Extension message handlers

    def on_released_tab(self, link: Link, message: PersonReleasedTab, now: float) -> list[Effect]:
        browser, tab = announced_tab(self._browsers, link, message.tab_id)
        owner = tab.owner
        if owner is None:
            return []
        tab.owner = None
        session = self._sessions.get(owner)
        if session is not None:
            place = (browser.key, tab.id)
            session.taken_back.add(place)
            if session.current == place:
                session.current = None
        logger.info("the person took tab %s:%s back from session %s", browser.key, tab.id, owner)
        # Told back like any release, so the extension ungroups the tab in one place.
        return [
            *self._messenger.tell(browser, TabReleased(owner, tab.id)),
            *self._messenger.changed(browser, tab, owner),
        ]

    def on_pause_changed(self, link: Link, message: PauseChanged, now: float) -> list[Effect]:
        browser = self._browsers[link.browser]
        browser.paused = message.paused
        logger.info("the person %s AI agents in %s", "paused" if message.paused else "resumed", browser.key)
        return []

    def on_approval_pending(self, link: Link, message: ApprovalPending, now: float) -> list[Effect]:
        pending = self._calls.reply_to(link, message.call_id, CallKind.TOOL, CallKind.ACTION, CallKind.BROWSER)
        if pending is None:
            return []
        wait = min(max(message.timeout, 0.0), MAX_APPROVAL_WAIT)
        self._calls.pending.await_person(pending.call_id)
        self._calls.pending.postpone(pending.call_id, now + wait + pending.timeout)
        note = (
            f"waiting for the person to approve {pending.tool_name} on {pending.place} in the browser"
            f" (up to {wait:g} s)"
        )
        return [CallWaiting(pending.call_id, wait, note)]
