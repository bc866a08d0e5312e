"""The broker's side of proving who it is: the extension link's handshake and two HTTP routes.

- :class:`LinkHandshake` answers one extension link's handshake frames (``authChallenge``,
  ``authResponse``, ``pairChallenge``, ``pairProof``; docs/extension-link.md) before the
  hub hears the link: the broker proves it holds the link key, the extension proves it back, and
  pairing hands the link key to an extension that has none. The rules and the arithmetic are
  :mod:`broker.core.link_auth`'s; this module adds the randomness, the thread that stretches a
  pairing code, and AES-GCM, which wraps the link key (``cryptography``; the extension unwraps
  it with WebCrypto).
- ``POST /auth/challenge {nonce}`` (no token needed) answers ``{brokerId, proof}``: how the
  command line, the stdio relay and other readers of a discovery file check that the server on
  its port is the broker holding its token before they send that token.
- ``POST /pairing`` (the broker's own token only) issues a pairing code: what
  ``browser-mcp pair`` prints.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import weakref
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .. import codec
from ..core import link_auth
from ..core.broker_messages import (
    AuthChallenge,
    AuthProof,
    AuthResponse,
    HandshakeMessage,
    PairChallenge,
    PairKey,
    PairNonce,
    PairProof,
)
from ..core.errors import Forbidden, InvalidMessage, InvalidRequest, PairingFailed, Unauthorized
from ..core.link_auth import PairingDesk, Role
from ..daemon.runtime import CLIENT, RUNTIME, Runtime
from ..daemon.views import json_response

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = [
    "OPEN_PATHS",
    "LinkHandshake",
    "issue_code",
    "local_port",
    "new_code",
    "new_nonce",
    "setup_auth_routes",
]

# Routes any local caller may use without a token: proving the broker is the point of them.
OPEN_PATHS = frozenset({"/auth/challenge"})


def _aes_gcm(key: bytes) -> AESGCM:
    # Loaded on a pairing's first wrap: cryptography maps its Rust binding and OpenSSL's libcrypto,
    # some 10 MB of a broker's memory, and nothing else needs them.
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: PLC0415

    return AESGCM(key)


def new_nonce() -> str:
    return link_auth.b64(secrets.token_bytes(32))


def new_code() -> str:
    return "".join(secrets.choice(link_auth.CODE_ALPHABET) for _ in range(link_auth.CODE_LENGTH))


def issue_code(runtime: Runtime) -> dict[str, Any]:
    """A new pairing code (replacing any earlier one), as ``POST /pairing`` answers it."""
    now = asyncio.get_running_loop().time()
    code = new_code()
    expires_at = runtime.pairing.issue(code, now)
    return {
        "code": link_auth.format_code(code),
        "expiresIn": round(expires_at - now),
        "port": runtime.port,
        "brokerId": link_auth.broker_id(runtime.settings.token),
    }


def local_port(request: web.Request, fallback: int) -> int:
    """The port this request came in on: the one the peer believes it reached."""
    sockname = request.transport.get_extra_info("sockname") if request.transport else None
    return int(sockname[1]) if sockname else fallback


def _nonce(value: str, what: str) -> str:
    if not link_auth.is_nonce(value):
        raise InvalidMessage(f"{what} must be 16 to 64 random bytes in base64url")
    return value


class LinkHandshake:
    """One extension link's handshake; :attr:`extension_proven` once the extension proved the key."""

    def __init__(self, token: str, port: int, desk: PairingDesk) -> None:
        self._key = link_auth.link_key(token)
        self.broker_id = link_auth.broker_id(token)
        self._port = port
        self._desk = desk
        self._challenge: tuple[str, str] | None = None
        self._pairing: tuple[str, str] | None = None
        self.extension_proven = False

    async def answer(self, message: HandshakeMessage, now: float) -> AuthProof | PairNonce | PairKey | None:
        """The reply to one handshake frame (None for an extension's right proof).

        Raises:
            InvalidMessage: a bad nonce, or a frame out of turn.
            Unauthorized: the extension's proof of the link key is wrong.
            NoPairingCode: pairing was asked for while no code is out.
            PairingFailed: the extension's proof of the pairing code is wrong.
        """
        if isinstance(message, AuthChallenge):
            theirs, ours = _nonce(message.nonce, "authChallenge's nonce"), new_nonce()
            self._challenge = (theirs, ours)
            return AuthProof(self.broker_id, ours, link_auth.proof(self._key, Role.BROKER, self._port, theirs, ours))
        if isinstance(message, AuthResponse):
            if self._challenge is None:
                raise InvalidMessage("authResponse before authChallenge")
            if not link_auth.check_proof(message.proof, self._key, Role.EXTENSION, self._port, *self._challenge):
                raise Unauthorized(
                    "the extension's proof of this broker's link key is wrong: pair it again"
                    " (browser-mcp pair) or check which broker its native host names"
                )
            self.extension_proven = True
            return None
        if isinstance(message, PairChallenge):
            self._desk.current(now)
            theirs, ours = _nonce(message.nonce, "pairChallenge's nonce"), new_nonce()
            self._pairing = (theirs, ours)
            return PairNonce(self.broker_id, ours)
        if self._pairing is None:
            raise InvalidMessage("pairProof before pairChallenge")
        return await self._pair(message, *self._pairing)

    async def _pair(self, message: PairProof, theirs: str, ours: str) -> PairKey:
        self._pairing = None
        # One proof at a time per broker: each is settled against the code as the one before left
        # it, so proofs racing each other cannot outlive the code's voiding and pass for right.
        async with _turn(self._desk):
            code = self._desk.current(asyncio.get_running_loop().time())
            # PBKDF2 is slow on purpose: off the event loop, so other links and calls go on meanwhile.
            keys = await asyncio.to_thread(link_auth.pairing_keys, code, self.broker_id, self._port, theirs, ours)
            right = secrets.compare_digest(message.proof.encode(), keys.extension_proof.encode())
            self._desk.settle(code, right, asyncio.get_running_loop().time())
        if not right:  # settle raised for every wrong proof; this holds whatever it does
            raise PairingFailed("wrong pairing code")
        iv = os.urandom(12)
        wrapped = _aes_gcm(keys.wrap_key).encrypt(iv, self._key, self.broker_id.encode())
        return PairKey(keys.broker_proof, link_auth.b64(iv), link_auth.b64(wrapped))


_turns: weakref.WeakKeyDictionary[PairingDesk, asyncio.Lock] = weakref.WeakKeyDictionary()


def _turn(desk: PairingDesk) -> asyncio.Lock:
    """The lock that lets one pairing proof at a time be checked against ``desk``'s code."""
    lock = _turns.get(desk)
    if lock is None:
        lock = _turns[desk] = asyncio.Lock()
    return lock


routes = web.RouteTableDef()


def setup_auth_routes(app: web.Application) -> None:
    app.add_routes(routes)


async def _body(request: web.Request) -> dict[str, Any]:
    try:
        return codec.loads_object(await request.read(), "the body")
    except ValueError as exc:
        raise InvalidRequest(str(exc)) from None


@routes.post("/auth/challenge")
async def auth_challenge(request: web.Request) -> web.Response:
    """``{nonce}`` -> ``{brokerId, proof}``: the broker proves it holds the token of its discovery file."""
    nonce = (await _body(request)).get("nonce")
    if not link_auth.is_nonce(nonce):
        raise InvalidRequest('send {"nonce": "<16 to 64 random bytes in base64url>"}')
    runtime = request.app[RUNTIME]
    token = runtime.settings.token
    port = local_port(request, runtime.port)
    assert isinstance(nonce, str)
    return json_response(
        {
            "brokerId": link_auth.broker_id(token),
            "proof": link_auth.proof(link_auth.link_key(token), Role.HTTP, port, nonce),
        }
    )


@routes.post("/pairing")
async def pairing(request: web.Request) -> web.Response:
    """Issue a pairing code (replacing any earlier one) for the person to type into the extension."""
    if request[CLIENT] is not None:
        raise Forbidden("a client token cannot pair a browser: use the broker's own token (browser-mcp pair)")
    return json_response(issue_code(request.app[RUNTIME]))
