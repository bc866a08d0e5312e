"""The extension link: the WebSocket at ``/`` that browser extensions open.

Thin: checks who is knocking, upgrades, feeds every text frame to the :class:`~broker.hub.Hub`
and tells it when the socket ends. Frames up to the limit are read; a larger frame (up to twice
the limit) is refused with an error frame and the link stays up; anything larger still is cut by
aiohttp with close code 1009. Keepalive is the protocol's JSON ``ping``/``pong``, driven by the
core, because WebSocket-level pings do not keep an MV3 service worker awake.
"""

from __future__ import annotations

import logging

from aiohttp import WSCloseCode, WSMsgType, web

from .core.errors import Forbidden, TooManyLinks, Unauthorized, WebSocketRequired
from .core.security import check_bearer, check_host, is_allowed_origin
from .hub import Hub

__all__ = ["WebSocketLink", "extension_link"]

logger = logging.getLogger(__name__)


class WebSocketLink:
    def __init__(self, ws: web.WebSocketResponse) -> None:
        self._ws = ws

    async def send(self, data: bytes) -> None:
        await self._ws.send_frame(data, WSMsgType.TEXT)

    async def close(self, reason: str) -> None:
        await self._ws.close(code=WSCloseCode.GOING_AWAY, message=reason[:120].encode())


def check_extension_request(
    request: web.Request, allowed_extensions: frozenset[str], token: str, require_token: bool = False
) -> None:
    """An allowed extension origin, or (for scripts and tests without one) the bearer token.

    A token, when presented (``Authorization`` or ``?token=``; the extension has it from the native
    host), must be right whatever the origin. ``require_token`` demands it of extensions too:
    another local user can forge an ``Origin``, not read the token.

    Raises:
        Forbidden: a foreign Host, an Origin that is not an allowed extension, or a client token.
        Unauthorized: a wrong token, or none where one is needed.
    """
    check_host(request.headers.get("Host"))
    origin = request.headers.get("Origin")
    presented = request.headers.get("Authorization") or _query_token(request)
    if origin is not None:
        if not is_allowed_origin(origin, allowed_extensions):
            raise Forbidden(
                f"Origin {origin!r} may not open the extension link; allowed:"
                f" {', '.join(sorted('chrome-extension://' + i for i in allowed_extensions))}"
                " (add one with --allow-extension)"
            )
        if presented is None:
            if require_token:
                raise Unauthorized(
                    "this broker requires the token on the extension link (--require-extension-token):"
                    " the extension has it only through the native host (browser-mcp install-native-host)"
                )
            return
    if check_bearer(presented, token) is not None:
        raise Forbidden(
            "a client token cannot open the extension link: only the broker's own token can"
            " (the extension has it through the native host)"
        )


def _query_token(request: web.Request) -> str | None:
    token = request.query.get("token")
    return f"Bearer {token}" if token else None


async def extension_link(request: web.Request, hub: Hub) -> web.WebSocketResponse:
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
    try:
        link_id = await hub.link_opened(WebSocketLink(ws))
    except TooManyLinks as exc:
        # Others opened while this one upgraded: told in its close frame instead.
        await ws.close(code=WSCloseCode.TRY_AGAIN_LATER, message=exc.message[:120].encode())
        return ws
    logger.info("extension link %s opened from %s", link_id, request.headers.get("Origin", "a script"))
    reason = "closed by the extension"
    try:
        async for message in ws:
            # Binary frames are read as JSON too: some clients send UTF-8 JSON that way.
            if message.type is WSMsgType.TEXT or message.type is WSMsgType.BINARY:
                await hub.link_frame(link_id, message.data)
            elif message.type is WSMsgType.ERROR:
                reason = f"socket error: {ws.exception()}"
    finally:
        await hub.link_closed(link_id, reason)
        logger.info("extension link %s closed: %s", link_id, reason)
    return ws
