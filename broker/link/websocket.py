"""The extension link: the WebSocket at ``/`` that browser extensions open.

Thin: checks who is knocking, upgrades, feeds every text frame to the :class:`~broker.daemon.hub.Hub`
and tells it when the socket ends. Frames up to the limit are read; a larger frame (up to twice
the limit) is refused with an error frame and the link stays up; anything larger still is cut by
aiohttp with close code 1009. Before the hub hears a frame, the link's handshake (the broker
proves it holds the link key, the extension proves it back, or pairs) is answered here by
:class:`_Door`; until the extension has proven the key, the link is one of the few
:class:`~broker.daemon.connections.UnprovenLinks`, for a few seconds at most. Keepalive is the
protocol's JSON ``ping``/``pong``, driven by the core, because WebSocket-level pings do not keep
an MV3 service worker awake.
"""

from __future__ import annotations

import asyncio
import logging

from aiohttp import WSCloseCode, WSMsgType, web

from .. import codec
from ..core.broker_messages import ErrorReply, HandshakeMessage, HandshakeReply, PairNonce
from ..core.effects import LinkId
from ..core.errors import BrokerError, Forbidden, InvalidMessage, TooManyLinks, Unauthorized, WebSocketRequired
from ..core.messages import Pong
from ..core.security import check_bearer, check_host, is_allowed_origin, is_firefox_extension_origin
from ..daemon.connections import CONNECTIONS, UnprovenLinks
from ..daemon.hub import Hub
from ..daemon.runtime import Runtime
from .handshake import LinkHandshake, local_port

__all__ = ["WebSocketLink", "extension_link"]

logger = logging.getLogger(__name__)


class WebSocketLink:
    def __init__(self, ws: web.WebSocketResponse) -> None:
        self._ws = ws

    async def send(self, data: bytes) -> None:
        await self._ws.send_frame(data, WSMsgType.TEXT)

    async def close(self, reason: str) -> None:
        await self._ws.close(code=WSCloseCode.GOING_AWAY, message=reason[:120].encode())


def check_extension_request(request: web.Request, allowed_extensions: frozenset[str], token: str) -> None:
    """An allowed extension origin, or (for scripts and tests without one) the broker's own token.

    A Firefox add-on's origin passes too: it cannot be pinned, so its link must prove the link
    key whatever the broker's settings (:func:`extension_link`).

    An extension proves it holds the link key on the link itself (:class:`LinkHandshake`); the
    token never travels in the URL. A token presented in ``Authorization`` must be right
    whatever the origin.

    Raises:
        Forbidden: a foreign Host, an Origin that is not an allowed extension, or a client token.
        Unauthorized: a wrong token, or none and no origin.
    """
    check_host(request.headers.get("Host"))
    origin = request.headers.get("Origin")
    presented = request.headers.get("Authorization")
    if origin is not None:
        if not is_allowed_origin(origin, allowed_extensions) and not is_firefox_extension_origin(origin):
            raise Forbidden(
                f"Origin {origin!r} may not open the extension link; allowed:"
                f" {', '.join(sorted('chrome-extension://' + i for i in allowed_extensions))}"
                " (add one with --allow-extension)"
            )
        if presented is None:
            return
    if check_bearer(presented, token) is not None:
        raise Forbidden("a client token cannot open the extension link: only the broker's own token can")


# Frames larger than this are never handshake frames: they are passed on unread.
_HANDSHAKE_FRAME_LIMIT = 4096
_KEEPALIVE = frozenset({"ping", "pong"})
# Seconds a link has to finish a pairing exchange it began.
PAIRING_TIME = 60.0


class _Door:
    """What the adapter does with a link's frames until the extension has proven itself or moved on.

    A link whose extension proved the link key (or that came with the broker's token) is
    *settled*: every frame goes to the hub. One whose first frame is neither handshake nor
    keepalive settles too (an extension that does not prove itself; allowed unless the broker
    requires proof). With ``--require-extension-token`` the hub hears of the link only once the
    extension has proven itself, so it is sent nothing before then. Until it settles, the link
    waits among the :class:`UnprovenLinks`, which close it when its time is up or more wait.
    """

    def __init__(
        self,
        ws: web.WebSocketResponse,
        hub: Hub,
        handshake: LinkHandshake,
        require_proof: bool,
        waiting: UnprovenLinks,
    ) -> None:
        self.ws = ws
        self.hub = hub
        self.handshake = handshake
        self.require_proof = require_proof
        self.waiting = waiting
        self.link_id: LinkId | None = None
        self.settled = False
        self.turned_away: str | None = None

    async def open(self, proven: bool) -> None:
        """Raises: _Refused, when as many links as the broker takes are open."""
        self.settled = proven
        if not proven:
            self.waiting.arrived(self)
        if proven or not self.require_proof:
            await self._open_link(proven)

    async def _open_link(self, proven: bool) -> None:
        try:
            self.link_id = await self.hub.link_opened(WebSocketLink(self.ws), proven)
        except TooManyLinks as exc:
            # Others opened while this one upgraded (or proved itself): told in its close frame.
            raise _Refused(exc.message) from None

    async def turn_away(self, reason: str) -> None:
        """Close a link that waited too long, or too many with it, to prove the link key."""
        self.turned_away = reason
        await self.ws.close(code=WSCloseCode.TRY_AGAIN_LATER, message=reason[:120].encode())

    async def frame(self, data: bytes) -> None:
        """Handle one frame from the extension.

        Raises:
            _Refused: the link is to close, and why.
        """
        if not self.settled and len(data) <= _HANDSHAKE_FRAME_LIMIT:
            try:
                message = codec.decode_handshake(data)
            except InvalidMessage as exc:
                await self._reply(ErrorReply(exc.code, exc.message))
                return
            if message is not None and not isinstance(message, str):
                await self._handshake(message)
                return
            if message not in _KEEPALIVE:
                await self._settle()
            elif self.link_id is None:
                if message == "ping":
                    await self._reply(Pong())
                return
        elif not self.settled:
            await self._settle()
        assert self.link_id is not None
        await self.hub.link_frame(self.link_id, data)

    async def _settle(self) -> None:
        if self.link_id is None:
            await self._reply(
                ErrorReply(
                    Unauthorized.code,
                    "this broker requires extensions to prove its link key first (--require-extension-token):"
                    " send authChallenge, then authResponse",
                )
            )
            raise _Refused("the extension did not prove the link key")
        self.settled = True
        # An extension that skips the handshake, where that is allowed: it stays unproven in the
        # hub, where any link that proves the key may take its place.
        self.waiting.left(self)

    async def _handshake(self, message: HandshakeMessage) -> None:
        try:
            reply = await self.handshake.answer(message, asyncio.get_running_loop().time())
        except Unauthorized as exc:
            await self._reply(ErrorReply(exc.code, exc.message))
            raise _Refused(exc.message) from None
        except BrokerError as exc:
            await self._reply(ErrorReply(exc.code, exc.message))
            return
        if reply is not None:
            await self._reply(reply)
        if isinstance(reply, PairNonce):
            # A pairing began against a live code: the exchange (stretching the code on both
            # sides, waiting its turn behind other links' proofs) must not be cut short.
            self.waiting.restart(self, max(self.waiting.timeout, PAIRING_TIME))
        if self.handshake.extension_proven and not self.settled:
            logger.info("the extension proved this broker's link key")
            self.settled = True
            self.waiting.left(self)
            if self.link_id is None:
                await self._open_link(proven=True)
            else:
                self.hub.link_proven(self.link_id)

    async def _reply(self, message: HandshakeReply) -> None:
        await self.ws.send_frame(codec.encode_broker_message(message), WSMsgType.TEXT)


class _Refused(Exception):
    """The link closes: the extension failed to prove itself where it had to."""


async def extension_link(request: web.Request, hub: Hub, runtime: Runtime) -> web.WebSocketResponse:
    ws = web.WebSocketResponse(
        max_msg_size=2 * hub.frame_limit,
        decode_text=False,
        # Loopback: deflate would only cost CPU on large screenshots.
        compress=False,
    )
    if not ws.can_prepare(request).ok:
        raise WebSocketRequired(
            "this is a browser-mcp broker's extension link: open a WebSocket here;"
            " scripts use the REST API (GET /status, GET /tabs) or MCP at /mcp"
        )
    # Refused before the upgrade, so a flood of links costs an HTTP answer each and nothing kept.
    hub.check_link_room()
    await ws.prepare(request)
    settings = runtime.settings
    handshake = LinkHandshake(settings.token, local_port(request, runtime.port), runtime.pairing)
    waiting = request.app[CONNECTIONS].links
    # Any Firefox add-on carries a moz-extension origin: only the link key's proof tells ours.
    origin = request.headers.get("Origin")
    require_proof = settings.require_extension_token or (origin is not None and is_firefox_extension_origin(origin))
    door = _Door(ws, hub, handshake, require_proof, waiting)
    try:
        # The guard checked a presented token: a script with the broker's token needs no handshake.
        await door.open(proven="Authorization" in request.headers)
    except _Refused as exc:
        waiting.left(door)
        await ws.close(code=WSCloseCode.TRY_AGAIN_LATER, message=str(exc)[:120].encode())
        return ws
    logger.info("extension link %s opened from %s", door.link_id, request.headers.get("Origin", "a script"))
    reason = "closed by the extension"
    try:
        async for message in ws:
            # Binary frames are read as JSON too: some clients send UTF-8 JSON that way.
            if message.type is WSMsgType.TEXT or message.type is WSMsgType.BINARY:
                if door.settled and door.link_id is not None:
                    # The hub's at once (what door.frame ends in): a page's answers come this way.
                    await hub.link_frame(door.link_id, message.data)
                else:
                    await door.frame(message.data)
            elif message.type is WSMsgType.ERROR:
                reason = f"socket error: {ws.exception()}"
    except _Refused as exc:
        reason = str(exc)
        await ws.close(code=WSCloseCode.POLICY_VIOLATION, message=reason[:120].encode())
    finally:
        waiting.left(door)
        if door.turned_away is not None:
            reason = door.turned_away
        if door.link_id is not None:
            await hub.link_closed(door.link_id, reason)
        logger.info("extension link %s closed: %s", door.link_id, reason)
    return ws
