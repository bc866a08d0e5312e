"""The frames the broker sends an extension, and the link handshake's in both directions.

As :mod:`broker.core.messages` (what extensions send, and what both directions share): one frozen
attrs class per ``type`` of the extension link protocol (docs/extension-link.md), snake_case here
and camelCase on the wire, no I/O and no JSON. The handshake's frames are not part of the two
unions (``ExtensionMessage``, ``BrokerMessage``): the adapter answers them itself, before the hub
hears the link.
"""

from __future__ import annotations

import attrs

from .messages import Arguments, JsonObject, Ping, Pong

__all__ = [
    "AuthChallenge",
    "AuthProof",
    "AuthResponse",
    "BrokerMessage",
    "BrowserAction",
    "BrowserRequest",
    "CallTool",
    "CancelCall",
    "CloseTab",
    "Connect",
    "Disconnect",
    "DiscoverTools",
    "ErrorReply",
    "FocusTab",
    "HandshakeMessage",
    "HandshakeReply",
    "OpenTab",
    "PairChallenge",
    "PairKey",
    "PairNonce",
    "PairProof",
    "TabClaimed",
    "TabReleased",
]


@attrs.frozen
class Connect:
    """Sent when a link opens (no ``session_id``) and when a session starts (with it).

    ``session_ids``, on the link's first ``connect`` only, lists the sessions alive at that moment
    (each is then announced with its own ``connect``), so an extension can forget the sessions of
    a broker that restarted. Not in the seed protocol; extensions that do not know it ignore it.

    ``credential``, with a session: the name of the client token that opened it
    (``mcp-config --client NAME``), or ``"owner"`` for the broker's own token. The client chose
    its name; the credential it could not, so the person tells two same-named clients apart by it.

    ``min_extension_version``, on a link's ``connect`` (no session): the oldest extension this
    broker works with, so an older one tells the person in its popup to update it.
    """

    server_version: str
    session_id: str | None = None
    client_name: str | None = None
    session_ids: tuple[str, ...] | None = None
    credential: str | None = None
    min_extension_version: str | None = None


@attrs.frozen
class OpenTab:
    """Open ``url`` in a new tab for a session; answered by ``tabCreated`` carrying ``request_id``.

    ``window_id`` (a window to open it in), ``new_window`` (in a window of its own) and
    ``pinned`` are sent only to extensions with the "windows" feature, and only when asked for:
    an extension that does not know them would open an ordinary tab.
    """

    session_id: str
    url: str
    focus: bool
    request_id: str
    window_id: int | None = None
    new_window: bool = False
    pinned: bool = False


@attrs.frozen
class CloseTab:
    """Close a tab; answered by ``tabClosed {tabId, requestId}``, or ``error {code, message,
    requestId}`` when the extension refuses (extensions of the seed protocol send neither with
    ``requestId``: their ``tabClosed`` still ends the request, a refusal times out)."""

    session_id: str
    tab_id: int
    request_id: str | None = None


@attrs.frozen
class FocusTab:
    """Bring a tab and its window to the front; the extension answers with ``tabFocused``.

    Not in the seed protocol: an extension that does not know it ignores it, and nothing else
    changes, since the broker does not wait for an answer.
    """

    session_id: str
    tab_id: int


@attrs.frozen
class TabClaimed:
    """A session made a tab its own: the extension shows it in that session's tab group.

    Not in the seed protocol (nor ``TabReleased``): an extension that does not know them ignores
    them, and only the grouping is lost.

    ``call_id``, only to an extension whose ``connected.features`` has ``claims``: it answers with
    ``toolResult`` (error ``tab_owned`` when another broker's live session holds the tab), and the
    claim ends with that answer, undone if refused.
    """

    session_id: str
    tab_id: int
    call_id: str | None = None


@attrs.frozen
class TabReleased:
    """A session gave a tab back to the person: the extension takes it out of the session's group."""

    session_id: str
    tab_id: int


@attrs.frozen
class CallTool:
    session_id: str
    call_id: str
    tab_id: int
    tool_name: str
    args: Arguments


@attrs.frozen
class BrowserAction:
    """A built-in browser tool (snapshot, click, ...) to carry out in a tab; answered by ``toolResult``."""

    session_id: str
    call_id: str
    tab_id: int
    action: str
    args: JsonObject


@attrs.frozen
class BrowserRequest:
    """Something of the browser's own, beyond its tabs' pages, answered by ``toolResult``.

    ``request`` is one of :data:`broker.core.browser_wide.REQUESTS` (``listWindows``,
    ``searchHistory`` ...), sent only to an extension whose ``connected.features`` has its
    feature. The broker has already checked what it may: a window to focus or close holds only
    the session's tabs. The extension checks what only it knows: whether the person shares their
    history and bookmarks (``consent_required`` when not).
    """

    session_id: str
    call_id: str
    request: str
    args: JsonObject


@attrs.frozen
class DiscoverTools:
    session_id: str
    call_id: str
    tab_id: int


@attrs.frozen
class CancelCall:
    """The broker stopped waiting for a call it sent: stop it where it runs (its page tool's
    ``AbortSignal`` fires, a built-in action stops waiting) and send no answer.

    ``reason``: ``cancelled`` (its client called it off or went away), ``timeout``, or
    ``session_ended``.
    """

    session_id: str
    call_id: str
    reason: str


@attrs.frozen
class Disconnect:
    session_id: str


@attrs.frozen
class ErrorReply:
    """Sent when the broker cannot use a frame; the link stays up."""

    code: str
    message: str


BrokerMessage = (
    Connect
    | OpenTab
    | CloseTab
    | FocusTab
    | TabClaimed
    | TabReleased
    | CallTool
    | BrowserAction
    | CancelCall
    | BrowserRequest
    | DiscoverTools
    | Ping
    | Pong
    | Disconnect
    | ErrorReply
)


@attrs.frozen
class AuthChallenge:
    """Extension -> broker, first on a new link: prove you hold the link key, over ``nonce``."""

    nonce: str


@attrs.frozen
class AuthProof:
    """Broker -> extension: its id (which key to check with), its own nonce, and the proof."""

    broker_id: str
    nonce: str
    proof: str


@attrs.frozen
class AuthResponse:
    """Extension -> broker, once the broker's proof held: the extension's proof over both nonces."""

    proof: str


@attrs.frozen
class PairChallenge:
    """Extension -> broker: start pairing with the code the person typed (which is not sent)."""

    nonce: str


@attrs.frozen
class PairNonce:
    """Broker -> extension: a code is out; here are its id and nonce to derive the code's keys with."""

    broker_id: str
    nonce: str


@attrs.frozen
class PairProof:
    """Extension -> broker: proof that it knows the code."""

    proof: str


@attrs.frozen
class PairKey:
    """Broker -> extension: proof that the broker knows the code, and the link key wrapped (AES-GCM)."""

    proof: str
    iv: str
    wrapped_key: str


HandshakeMessage = AuthChallenge | AuthResponse | PairChallenge | PairProof
HandshakeReply = AuthProof | PairNonce | PairKey | ErrorReply | Connect | Pong
