"""Every error the broker reports, and the one place that turns an exception into a wire error.

Each class carries its wire ``code`` and the HTTP ``status`` REST answers with. Errors the
caller caused are kept apart from errors of the extension or page, and from conditions of the
moment, as h11 keeps ``RemoteProtocolError`` apart from ``LocalProtocolError``::

    BrokerError
    ├── RequestError                  the AI client or REST caller asked for something wrong
    │   ├── InvalidRequest            400 invalid_request
    │   ├── Unauthorized              401 unauthorized
    │   ├── Forbidden                 403 forbidden
    │   ├── TabNotFound               404 tab_not_found
    │   ├── ToolNotFound              404 tool_not_found
    │   ├── BrowserNotFound           404 browser_not_found
    │   ├── WindowNotFound            404 window_not_found
    │   ├── AmbiguousTab              409 ambiguous_tab
    │   ├── TabOwnedByOther           409 tab_owned
    │   ├── TabHeldElsewhere          409 tab_owned (the browser says another broker's session holds it)
    │   ├── TabNotClaimed             409 tab_not_claimed (the person's tab: claim it first)
    │   ├── WindowNotOwned            409 window_not_owned (it holds a tab not the session's)
    │   ├── TabBusy                   409 tab_busy (a call in it waits for the person's approval)
    │   ├── DialogOpen                409 dialog_open (its page's dialog waits for browser_handle_dialog)
    │   ├── CloseHeld                 409 close_held (its page's beforeunload asks the person to leave)
    │   ├── UploadNotAllowed          403 upload_not_allowed (a file outside the folders uploads may use)
    │   ├── UploadTooLarge            413 upload_too_large (a file over the upload size limit)
    │   ├── OutputNotAllowed          403 output_not_allowed (a tool's file may not be written there)
    │   ├── InvalidScriptName         400 invalid_script_name (a script's name breaks a rule it names)
    │   ├── RequestTimedOut           408 request_timeout (a request body that came too slowly)
    │   ├── RequestTooLarge           413 request_too_large (a body declared over the size limit)
    │   ├── UnsupportedEncoding       415 unsupported_encoding (a compressed request body)
    │   ├── IdempotencyKeyReused      422 idempotency_key_reused (the key named another call)
    │   ├── NoPairingCode             409 no_pairing_code (run browser-mcp pair first)
    │   ├── PairingFailed             403 pairing_failed (a wrong pairing code)
    │   ├── TooManyCalls              429 too_many_calls
    │   ├── RateLimited               429 rate_limited (``retry_after`` seconds)
    │   ├── TooManySessions           429 too_many_sessions
    │   └── TooManyConnections        429 too_many_connections (a credential's open connections)
    ├── ExtensionError                the extension or the page answered wrongly or failed
    │   ├── InvalidMessage            400 invalid_message (a frame the broker cannot read)
    │   ├── MessageTooLarge           413 message_too_large
    │   ├── BadReply                  502 bad_reply (a call's answer the broker cannot read)
    │   ├── TooManyLinks              429 too_many_links (``--max-links`` extension links are open)
    │   └── PageToolFailed            502 tool_failed (the page's own code and message ride along)
    ├── NotSupported                  501 not_supported (the browser's extension cannot do it)
    ├── PersonDeclined                the person in charge of the browser said no
    │   ├── Paused                    423 paused (AI agents are paused in that browser)
    │   ├── NotApproved               403 not_approved (denied, window closed, or no answer in time)
    │   └── ConsentRequired           403 consent_required (history and bookmarks not shared)
    ├── Unavailable                   the call could not finish through no fault of the caller
    │   ├── ExtensionNotConnected     503 no_extension
    │   ├── ExtensionDisconnected     503 extension_disconnected (the link was lost mid-call)
    │   ├── CallTimedOut              504 timeout
    │   ├── SessionEnded              410 session_ended (also when the person ended it)
    │   ├── IdempotencyOutcomeDropped 410 idempotency_outcome_dropped (the key's call ran; its outcome is gone)
    │   └── CircuitOpen               503 circuit_open (a tool that keeps timing out is rested)
    └── InternalError                 500 internal_error

A class whose message quotes what a web page wrote (the page's own error, the names of its tools,
tab titles) says so with ``page_text``, so the doors mark it untrusted as they mark page results.

Only :func:`error_to_wire` turns exceptions into ``{"code", "message"}``; anything it does not
know becomes ``internal_error`` and is logged with its traceback. This module does no I/O.
"""

from __future__ import annotations

import logging
from typing import ClassVar, Self

__all__ = [
    "AmbiguousTab",
    "BrokerError",
    "BrowserNotFound",
    "CallTimedOut",
    "CircuitOpen",
    "ConsentRequired",
    "CloseHeld",
    "DialogOpen",
    "ExtensionDisconnected",
    "ExtensionError",
    "ExtensionNotConnected",
    "Forbidden",
    "IdempotencyKeyReused",
    "IdempotencyOutcomeDropped",
    "InternalError",
    "InvalidScriptName",
    "InvalidMessage",
    "InvalidRequest",
    "MessageTooLarge",
    "BadReply",
    "NoPairingCode",
    "NotApproved",
    "NotSupported",
    "PageToolFailed",
    "PairingFailed",
    "Paused",
    "PersonDeclined",
    "RateLimited",
    "RequestError",
    "RequestTimedOut",
    "RequestTooLarge",
    "SessionEnded",
    "TabBusy",
    "TabHeldElsewhere",
    "TabNotClaimed",
    "TabNotFound",
    "TabOwnedByOther",
    "ToolNotFound",
    "TooManyCalls",
    "TooManyConnections",
    "TooManyLinks",
    "TooManySessions",
    "Unauthorized",
    "Unavailable",
    "UnsupportedEncoding",
    "UploadNotAllowed",
    "UploadTooLarge",
    "OutputNotAllowed",
    "WebSocketRequired",
    "WindowNotFound",
    "WindowNotOwned",
    "error_to_wire",
]

logger = logging.getLogger(__name__)


class BrokerError(Exception):
    """Base of every error the broker reports to a caller or a peer.

    Each subclass names its wire code and HTTP status where it is declared:
    ``class Forbidden(RequestError, code="forbidden", status=403)``.
    """

    code: ClassVar[str] = "internal_error"
    status: ClassVar[int] = 500
    page_text: ClassVar[bool] = False

    def __init_subclass__(cls, code: str | None = None, status: int | None = None) -> None:
        super().__init_subclass__()
        if code is not None:
            cls.code = code
        if status is not None:
            cls.status = status

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def anew(self) -> Self:
        """A copy never raised: one kept to be raised again must not hold the frames it was raised in."""
        copy = type(self).__new__(type(self), *self.args)
        copy.__dict__.update(self.__dict__)
        return copy


class RequestError(BrokerError, code="invalid_request", status=400):
    """The caller asked for something that cannot be done."""


class InvalidRequest(RequestError, code="invalid_request", status=400): ...


class Unauthorized(RequestError, code="unauthorized", status=401): ...


class Forbidden(RequestError, code="forbidden", status=403): ...


class WebSocketRequired(RequestError, code="websocket_required", status=426): ...


class TabNotFound(RequestError, code="tab_not_found", status=404): ...


class ToolNotFound(RequestError, code="tool_not_found", status=404):
    page_text = True  # it lists the tools the page declared


class BrowserNotFound(RequestError, code="browser_not_found", status=404): ...


class WindowNotFound(RequestError, code="window_not_found", status=404): ...


class AmbiguousTab(RequestError, code="ambiguous_tab", status=409): ...


class TabOwnedByOther(RequestError, code="tab_owned", status=409):
    def __init__(self, message: str, owner_session_id: str, owner_name: str) -> None:
        super().__init__(message)
        self.owner_session_id = owner_session_id
        self.owner_name = owner_name


class TabHeldElsewhere(RequestError, code="tab_owned", status=409):
    """The browser refused a claim: a session of another broker it is joined to holds the tab
    (the message, the browser's, names it)."""


class TabNotClaimed(RequestError, code="tab_not_claimed", status=409): ...


class WindowNotOwned(RequestError, code="window_not_owned", status=409):
    """A window may be focused or closed only by the session owning every tab in it."""

    page_text = True  # it names the tabs in the way by their titles


class RecordNotFound(RequestError, code="record_not_found", status=404):
    """A bookmark id the browser does not have, or an address its history holds no visit of."""


class FolderNotEmpty(RequestError, code="folder_not_empty", status=409):
    """A bookmark folder holding something, asked deleted without ``recursive``."""


class RecordsBusy(RequestError, code="records_busy", status=409):
    """A deletion of the person's records waits for their approval (or runs with it): the browser
    takes no other until it ends, so the person never answers one window for another's deletion."""


class IdempotencyKeyReused(RequestError, code="idempotency_key_reused", status=422): ...


class UnsupportedEncoding(RequestError, code="unsupported_encoding", status=415): ...


class RequestTimedOut(RequestError, code="request_timeout", status=408): ...


class RequestTooLarge(RequestError, code="request_too_large", status=413): ...


class TabBusy(RequestError, code="tab_busy", status=409):
    """A call in the tab waits for the person's approval: the tab takes nothing else until it ends,
    so nothing a client does meanwhile changes what the person is approving."""


class DialogOpen(RequestError, code="dialog_open", status=409):
    """A dialog the tab's page opened waits for the client's browser_handle_dialog; the extension,
    which alone knows of it, refuses every other built-in tool there until it is answered."""

    page_text = True  # it quotes the dialog's message


class CloseHeld(RequestError, code="close_held", status=409):
    """A tab asked to close stays open: its page's ``beforeunload`` handler asks the person whether
    to leave, and the tab closes only if they say so."""


class UploadNotAllowed(RequestError, code="upload_not_allowed", status=403):
    """browser_file_upload named a path that is not a regular file under a folder uploads may use
    (the client's MCP roots, stdio's working folder, serve --upload-dir), or no longer exists."""


class UploadTooLarge(RequestError, code="upload_too_large", status=413): ...


class OutputNotAllowed(RequestError, code="output_not_allowed", status=403):
    """A tool's file may not be written where its ``filename`` says (a ``..`` part, outside the
    client's output folder and MCP roots, a link out of them), or could not be written at all."""


class InvalidScriptName(RequestError, code="invalid_script_name", status=400):
    """browser_run_script named a script no file of the person's script library may have (a path
    separator, ``..``, a leading dot, too long), checked before any file is opened."""


class NoPairingCode(RequestError, code="no_pairing_code", status=409):
    """An extension asked to pair while the broker has no code out (or it expired)."""


class PairingFailed(RequestError, code="pairing_failed", status=403):
    """An extension's proof of the pairing code was wrong."""


class TooManyCalls(RequestError, code="too_many_calls", status=429): ...


class RateLimited(RequestError, code="rate_limited", status=429):
    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class TooManySessions(RequestError, code="too_many_sessions", status=429): ...


class TooManyConnections(RequestError, code="too_many_connections", status=429): ...


class ExtensionError(BrokerError, code="extension_error", status=502):
    """The extension sent something unusable, or the page's tool failed."""


class InvalidMessage(ExtensionError, code="invalid_message", status=400): ...


class MessageTooLarge(ExtensionError, code="message_too_large", status=413): ...


class BadReply(ExtensionError, code="bad_reply", status=502): ...


class TooManyLinks(ExtensionError, code="too_many_links", status=429): ...


class PageToolFailed(ExtensionError, code="tool_failed", status=502):
    """The page's tool threw or reported an error; ``page_code`` is the page's own code, if any."""

    page_text = True

    def __init__(self, message: str, page_code: str | None = None) -> None:
        super().__init__(message)
        self.page_code = page_code


class NotSupported(BrokerError, code="not_supported", status=501): ...


class PersonDeclined(BrokerError, code="declined", status=403):
    """The person in charge of the browser refused: not a fault of the page or of the broker.

    Kept apart from :class:`ExtensionError` so that a refusal never counts against a tool (the
    circuit breaker) and a client can tell "ask again later" from "the tool is broken".
    """


# 423 Locked: the browser is there and the request was fine, but the person holds it.
class Paused(PersonDeclined, code="paused", status=423): ...


class NotApproved(PersonDeclined, code="not_approved", status=403): ...


class ConsentRequired(PersonDeclined, code="consent_required", status=403):
    """The person has not shared their history and bookmarks; the message says where to."""


class Unavailable(BrokerError, code="unavailable", status=503): ...


class ExtensionNotConnected(Unavailable, code="no_extension", status=503): ...


class ExtensionDisconnected(Unavailable, code="extension_disconnected", status=503): ...


class CallTimedOut(Unavailable, code="timeout", status=504): ...


class SessionEnded(Unavailable, code="session_ended", status=410): ...


class IdempotencyOutcomeDropped(Unavailable, code="idempotency_outcome_dropped", status=410):
    """The call an Idempotency-Key names ran, but its outcome was dropped to keep the credential's
    kept outcomes within their bound: a repeat is told so rather than run the call again."""


class CircuitOpen(Unavailable, code="circuit_open", status=503): ...


class InternalError(BrokerError, code="internal_error", status=500): ...


def error_to_wire(exc: BaseException) -> dict[str, str]:
    """Return the ``{"code", "message"}`` a peer sees for ``exc``.

    A page tool's failure keeps the page's own code, when it gave one, as ``pageCode``.
    """
    if isinstance(exc, PageToolFailed) and exc.page_code:
        return {"code": exc.code, "message": exc.message, "pageCode": exc.page_code}
    if isinstance(exc, BrokerError):
        return {"code": exc.code, "message": exc.message}
    logger.error("unexpected error", exc_info=exc)
    return {"code": InternalError.code, "message": "internal error in the broker"}
