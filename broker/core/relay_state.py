"""The stdio relay's JSON-RPC bookkeeping across broker restarts, no I/O.

``browser-mcp mcp`` (:mod:`broker.relay.stdio_relay`) passes an AI client's messages to a broker and
back; this class decides what to pass where when the broker link comes and goes. Inputs are
parsed messages with the text they came as (the adapter parses; the text is passed on unchanged)
and the link's ups and downs; outputs are lists of effects: :class:`SendToBroker` and
:class:`SendToClient`. It never parses or encodes: a message it makes up itself comes as a dict
with no text, for the adapter to encode.

What it owns:

- Which client requests are in flight (string or integer ids; JSON-RPC allows nothing else the
  relay could track), and which the broker has asked of the client.
- What waits for a link: before the first link everything waits; later, while no link is up,
  ``tools/call`` is answered at once with an ``isError`` result saying the broker is not
  reachable (:data:`UNAVAILABLE`), and everything else waits for the next link.
- What a lost link does to requests sent on it: ``tools/call`` gets an ``isError`` result saying
  the broker went away during the call (:data:`GONE_DURING_CALL`); ``initialize`` and
  ``subscriptions/listen`` are kept and sent again to the next broker; any other request gets a
  JSON-RPC error (:data:`CONNECTION_CLOSED`). Requests the broker made of the client are
  forgotten, so the client's late answers are dropped.
- What a new link after a lost one gets first: the client's ``initialize`` (when the session was
  established on an old broker) under a private id whose reply is swallowed, then its
  ``notifications/initialized``, then the kept requests; and the client is told its tool list
  changed (2025: ``notifications/tools/list_changed``; 2026: the same on each listen stream that
  asked for tool changes), since its tabs were in the old session.
- What a broker's refusal of the session does (its credential holds as many sessions as it
  may, :meth:`RelayState.refused`): every request waiting for a link is answered at once with the
  broker's error (a ``tools/call`` as an ``isError`` result), and so is each one that comes until
  a link is up, instead of waiting for a link that may not come.
- ``notifications/cancelled`` ends the cancelled request's bookkeeping: no answer comes and
  nothing is replayed.
- A request may come by its head alone (:meth:`RelayState.from_client_head`): its id and method,
  which is all the bookkeeping reads of any request but ``initialize`` and
  ``subscriptions/listen``. Its params are read, with the reader the adapter gave, only if the
  relay must answer it itself.

What it leaves out: every other protocol rule (the SDK in the broker answers malformed messages,
unknown methods and era mismatches; a client message that is not an object is passed on for it
to judge), finding brokers, timing and retries.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import Any

import attrs

__all__ = [
    "CONNECTION_CLOSED",
    "GONE_BEFORE_ANSWER",
    "GONE_DURING_CALL",
    "RELAY_CODES",
    "READS_PARAMS",
    "UNAVAILABLE",
    "Effect",
    "RelayState",
    "SendToBroker",
    "SendToClient",
]

logger = logging.getLogger(__name__)

Json = dict[str, Any]
RequestId = str | int

PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
SUBSCRIPTION_ID_META_KEY = "io.modelcontextprotocol/subscriptionId"
# JSON-RPC "connection closed", the code the SDK uses for a peer that went away.
CONNECTION_CLOSED = -32000
# Requests that are not failed when the link drops but sent again to the next broker.
_KEPT_METHODS = frozenset({"initialize", "subscriptions/listen"})
# Requests whose params the bookkeeping reads as they pass: these never come by their head alone.
READS_PARAMS = frozenset({"initialize", "subscriptions/listen"})
# The prefix of the ids of replayed initialize requests, whose replies the client never sees.
PRIVATE_ID_PREFIX = "browser-mcp-relay-"

UNAVAILABLE = (
    "browser-mcp: the broker is not reachable (it stopped or is restarting). This session reconnects"
    " by itself when a broker is back; retry in a moment. If none comes back, start one with"
    " `browser-mcp serve`."
)
GONE_DURING_CALL = (
    "browser-mcp: the broker went away during this call, so whether the page tool ran is unknown."
    " This session reconnects by itself when a broker is back; retry in a moment."
)
GONE_BEFORE_ANSWER = "browser-mcp: the broker went away before answering; retry"
# The error codes of the relay's own failed tool results, in the broker's ``{"error": {...}}``
# form (docs/rest.md's table), so a client branches on them as on the broker's.
RELAY_CODES = {UNAVAILABLE: "broker_unreachable", GONE_DURING_CALL: "broker_gone"}


# Effects


@attrs.frozen
class SendToBroker:
    """Send ``line`` to the broker as it is; with no ``line``, ``message`` encoded."""

    message: object
    line: str | None = None


@attrs.frozen
class SendToClient:
    """Write ``line`` to the client as it is; with no ``line``, ``message`` encoded."""

    message: Json
    line: str | None = None


Effect = SendToBroker | SendToClient


def request_id(message: Json) -> RequestId | None:
    """The message's id when it is one the relay can track (a string or an integer)."""
    value = message.get("id")
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


@attrs.define(eq=False)
class _Request:
    """A client request the broker has not answered yet."""

    id: RequestId
    message: Json  # with no params when it came by its head alone
    line: str
    sent: bool = False  # given to a link; until then it waits in the outbox
    whole: bool = True  # False: it came by its head alone

    @property
    def method(self) -> str:
        return str(self.message["method"])

    def modern(self, read: Callable[[str], object] | None) -> bool:
        """The request names the 2026 protocol era in its ``_meta``.

        ``read`` parses the text of one that came by its head alone; without one it is taken to
        be of the older era.
        """
        message = self.message if self.whole or read is None else read(self.line)
        params = message.get("params") if isinstance(message, dict) else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        return isinstance(meta, dict) and PROTOCOL_VERSION_META_KEY in meta

    @property
    def wants_tool_changes(self) -> bool:
        params = self.message.get("params")
        wanted = params.get("notifications") if isinstance(params, dict) else None
        return isinstance(wanted, dict) and wanted.get("toolsListChanged") is True


@attrs.define(eq=False)
class _Waiting:
    """A client message waiting for a link; ``request`` when it is a tracked request."""

    message: object
    line: str
    request: _Request | None


class RelayState:
    """One stdio session's JSON-RPC bookkeeping between a client and a broker that may restart."""

    def __init__(self, read: Callable[[str], object] | None = None) -> None:
        """``read`` parses a message's text: the adapter's JSON reader (this module parses nothing)."""
        self._read = read
        self._pending: dict[RequestId, _Request] = {}
        self._outbox: list[_Waiting] = []
        self._broker_requests: set[RequestId] = set()
        self._private_ids: set[str] = set()
        self._ids = itertools.count(1)
        self._initialize: Json | None = None
        self._initialized: _Waiting | None = None
        self._up = False
        self._linked_before = False
        # The broker's word on why it refused the session (its code, the text the client reads),
        # while no link is up; None otherwise.
        self._refusal: tuple[str, str] | None = None

    @property
    def up(self) -> bool:
        """A link to a broker is up."""
        return self._up

    @property
    def linked_before(self) -> bool:
        """A link has been up at some time: the session started on a broker."""
        return self._linked_before

    @property
    def settled(self) -> bool:
        """No request waits for an answer, but for listen streams, which are answered only at their end."""
        return all(r.method == "subscriptions/listen" for r in self._pending.values())

    # Client side

    def from_client(self, message: object, line: str) -> list[Effect]:
        """One message from the client, parsed, and its text."""
        return self._from_client(message, line, whole=True)

    def from_client_head(self, key: RequestId, method: str, line: str) -> list[Effect]:
        """A client request known by its head alone: its id and method, read from its text's ends.

        Spares the adapter parsing a long line (a ``tools/call`` with large arguments); the text
        goes on unchanged. Not for the methods of :data:`READS_PARAMS`.
        """
        if method in READS_PARAMS:
            raise ValueError(f"{method} requests must come whole: the bookkeeping reads their params")
        return self._from_client({"jsonrpc": "2.0", "id": key, "method": method}, line, whole=False)

    def _from_client(self, message: object, line: str, whole: bool) -> list[Effect]:
        if not isinstance(message, dict):
            return self._to_broker(_Waiting(message, line, None))
        method = message.get("method")
        key = request_id(message)
        if not isinstance(method, str):
            if key is not None and key in self._broker_requests:
                self._broker_requests.discard(key)
                return self._to_broker(_Waiting(message, line, None))
            logger.debug("dropping the answer to %r: the broker that asked has gone", message.get("id"))
            return []
        if method == "notifications/initialized":
            self._initialized = _Waiting(message, line, None)
        elif method == "notifications/cancelled":
            params = message.get("params")
            cancelled = params.get("requestId") if isinstance(params, dict) else None
            if isinstance(cancelled, (str, int)):
                self._pending.pop(cancelled, None)  # no answer comes; nothing to replay
        if key is None:
            return self._to_broker(_Waiting(message, line, None))
        request = _Request(key, message, line, whole=whole)
        if method == "initialize":
            self._initialize = message
        if self._refusal is not None and not self._up:
            code, why = self._refusal
            return [self._unavailable(request, why, code)]
        if method == "tools/call" and self._linked_before and not self._up:
            return [self._unavailable(request, UNAVAILABLE)]
        self._pending[key] = request
        return self._to_broker(_Waiting(message, line, request))

    def _to_broker(self, waiting: _Waiting) -> list[Effect]:
        if not self._up:
            self._outbox.append(waiting)
            return []
        if waiting.request is not None:
            if self._pending.get(waiting.request.id) is not waiting.request:
                return []  # answered or cancelled while it waited: it must not run
            waiting.request.sent = True
        return [SendToBroker(waiting.message, waiting.line)]

    # Broker side

    def from_broker(self, message: object, frame: str) -> list[Effect]:
        """One message from the broker, parsed, and its text."""
        if not isinstance(message, dict):
            logger.warning("dropping a frame from the broker that is not a JSON-RPC message")
            return []
        key = request_id(message)
        if key is not None and "method" in message:
            self._broker_requests.add(key)
        elif key is not None:
            if isinstance(key, str) and key in self._private_ids:
                self._private_ids.discard(key)
                if "error" in message:
                    logger.warning("the broker refused the replayed initialize: %s", message["error"])
                return []
            self._pending.pop(key, None)
        return [SendToClient(message, frame)]

    # The link

    def link_up(self) -> list[Effect]:
        """A link to a broker is up: bring the broker to where the last one was, then send what waited."""
        effects: list[Effect] = []
        reconnect = self._linked_before
        self._linked_before = True
        self._up = True
        self._refusal = None
        self._broker_requests.clear()
        if reconnect:
            effects += self._resume()
        waiting, self._outbox = self._outbox, []
        for item in waiting:
            effects += self._to_broker(item)
        return effects

    def _resume(self) -> list[Effect]:
        effects: list[Effect] = []
        init = self._initialize
        # Established with the old broker, unless the initialize itself is still in flight.
        established = init is not None and init["id"] not in self._pending
        if init is not None and established:
            # Open a session like it on the new broker; its reply is not the client's to see.
            private = f"{PRIVATE_ID_PREFIX}{next(self._ids)}"
            self._private_ids.add(private)
            effects.append(SendToBroker({**init, "id": private}))
            if self._initialized is not None:
                effects.append(SendToBroker(self._initialized.message, self._initialized.line))
        # Kept requests the old broker had: initialize in flight, open listen streams.
        effects += [SendToBroker(r.message, r.line) for r in self._pending.values() if r.sent]
        notice: Json = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        if established:
            effects.append(SendToClient(notice))
        for key, request in self._pending.items():
            if request.method == "subscriptions/listen" and request.sent and request.wants_tool_changes:
                effects.append(SendToClient({**notice, "params": {"_meta": {SUBSCRIPTION_ID_META_KEY: key}}}))
        return effects

    def refused(self, code: str, why: str) -> list[Effect]:
        """The broker refused to open the session (its error ``code``, and ``why`` as the client is to
        read it): what waits for a link is answered with it, and so is what comes, until a link is up."""
        self._refusal = (code, why)
        effects: list[Effect] = []
        kept: list[_Waiting] = []
        for waiting in self._outbox:
            request = waiting.request
            if request is None or request.method == "subscriptions/listen":
                kept.append(waiting)  # notifications wait; a listen stream is answered only at its end
            elif self._pending.pop(request.id, None) is request:
                effects.append(self._unavailable(request, why, code))
        self._outbox = kept
        return effects

    def link_down(self) -> list[Effect]:
        """The link is lost: answer what was sent on it, keep what the next broker gets again."""
        if not self._up:
            return []
        self._up = False
        self._broker_requests.clear()
        self._private_ids.clear()
        effects: list[Effect] = []
        # While a link is up nothing waits in the outbox, so every pending request was sent on it.
        for key, request in list(self._pending.items()):
            if request.method in _KEPT_METHODS:
                continue
            del self._pending[key]
            effects.append(
                self._unavailable(request, GONE_DURING_CALL if request.method == "tools/call" else GONE_BEFORE_ANSWER)
            )
        return effects

    def _unavailable(self, request: _Request, text: str, code: str | None = None) -> SendToClient:
        """The answer to ``request`` when no broker will give one: a failed tool result, or an error.
        ``code``: the broker's, when it refused; else the relay's own for ``text``."""
        if request.method == "tools/call":
            result: Json = {
                "content": [{"type": "text", "text": text}],
                "structuredContent": {"error": {"code": code or RELAY_CODES[text], "message": text}},
                "isError": True,
            }
            if request.modern(self._read):
                result["resultType"] = "complete"
            return SendToClient({"jsonrpc": "2.0", "id": request.id, "result": result})
        error = {"code": CONNECTION_CLOSED, "message": text}
        return SendToClient({"jsonrpc": "2.0", "id": request.id, "error": error})
