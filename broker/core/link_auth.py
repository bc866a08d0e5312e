"""How a peer proves it is this broker, and how the extension proves it holds the broker's link key.

Every secret here comes from the broker's token (kept across restarts in the token file):

- the **link key**, ``HMAC-SHA256(token, "browser-mcp link key v1")``: what the extension holds
  (derived from the token the native host gave it, or received once by pairing) and what every
  proof is keyed with. The token itself never crosses a socket to prove anything;
- the **broker id**, the first 16 bytes of ``HMAC-SHA256(token, "browser-mcp broker id v1")`` in
  hex: announced to anyone, so the extension knows which stored key to use; it reveals nothing of
  the key.

A proof is ``HMAC-SHA256(link key, role, port, nonces)`` written base64url. The role keeps a
broker's proof from being replayed as an extension's and the other way round; the port is the one
the prover's peer connected to, so a server on another port that relays the real broker's proof
(or the extension's) presents one made for the wrong port and fails.

Pairing (no native host): ``browser-mcp pair`` asks the broker for a short code, the person
types it into the extension's popup, and the two run an exchange over the extension link where
each proves it knows the code (keyed by PBKDF2 of the code and both nonces, so an answer seen
does not let anyone test guesses quickly), the extension first. Only then does the broker send
the link key, wrapped under a key derived the same way (:func:`pairing_keys`). A code is valid
for :data:`CODE_LIFETIME` seconds, gives way after :data:`CODE_ATTEMPTS` wrong proofs, and is
spent by the first right one; the adapter checks one proof at a time, and a proof counts only
against the code still out when it is settled (:meth:`PairingDesk.settle`).

This module is pure: callers pass in the nonces, the codes and ``now``; sockets, randomness and
the wrapping cipher are the adapters' (:mod:`broker.link.handshake`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re

import attrs

from .errors import NoPairingCode, PairingFailed

__all__ = [
    "CODE_ALPHABET",
    "CODE_ATTEMPTS",
    "CODE_LENGTH",
    "CODE_LIFETIME",
    "PAIRING_ITERATIONS",
    "PairingDesk",
    "PairingKeys",
    "Role",
    "b64",
    "broker_id",
    "check_proof",
    "format_code",
    "is_nonce",
    "link_key",
    "normalize_code",
    "pairing_keys",
    "pairing_text",
    "proof",
    "unb64",
]

# No 0/O, 1/I/L, 2/Z, 5/S, 8/B: a code read off a terminal is typed right the first time.
CODE_ALPHABET = "ACDEFGHJKMNPQRTUVWXY34679"
CODE_LENGTH = 8
CODE_LIFETIME = 300.0
CODE_ATTEMPTS = 3
# WebCrypto's PBKDF2 takes about a tenth of a second for this in an extension's worker.
PAIRING_ITERATIONS = 200_000

_NONCE = re.compile(r"^[A-Za-z0-9_-]{22,86}$")


class Role:
    BROKER = "browser-mcp broker proof v1"
    EXTENSION = "browser-mcp extension proof v1"
    HTTP = "browser-mcp http proof v1"
    PAIR_BROKER = "browser-mcp pair broker v1"
    PAIR_EXTENSION = "browser-mcp pair extension v1"
    PAIR_WRAP = "browser-mcp pair wrap v1"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    """Raises: ValueError, when ``text`` is not base64url."""
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, UnicodeEncodeError) as exc:
        raise ValueError(f"not base64url: {exc}") from None


def is_nonce(value: object) -> bool:
    """A nonce as both ends write it: 16 to 64 random bytes in base64url."""
    return isinstance(value, str) and _NONCE.match(value) is not None


def _mac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode(), hashlib.sha256).digest()


def link_key(token: str) -> bytes:
    return _mac(token.encode(), "browser-mcp link key v1")


def broker_id(token: str) -> str:
    return _mac(token.encode(), "browser-mcp broker id v1")[:16].hex()


def _transcript(role: str, port: int, nonces: tuple[str, ...]) -> str:
    # Nonces are base64url and the port a number: newlines cannot occur inside a part.
    return "\n".join([role, str(port), *nonces])


def proof(key: bytes, role: str, port: int, *nonces: str) -> str:
    return b64(_mac(key, _transcript(role, port, nonces)))


def check_proof(presented: object, key: bytes, role: str, port: int, *nonces: str) -> bool:
    """Whether ``presented`` is the proof of ``role`` on ``port`` over ``nonces``, compared in constant time."""
    if not isinstance(presented, str):
        return False
    return hmac.compare_digest(presented.encode(), proof(key, role, port, *nonces).encode())


def format_code(code: str) -> str:
    """``ABCDEFGH`` as ``ABCD-EFGH``, read off a screen more easily."""
    half = len(code) // 2
    return f"{code[:half]}-{code[half:]}"


def pairing_text(port: int, code: str, expires_in: float) -> str:
    """What ``browser-mcp pair`` and a first ``serve`` tell the person."""
    return (
        f"Pairing code for the broker on port {port}: {code}\n"
        f'Open the browser-mcp extension\'s popup: it shows "found a broker on port {port} that is not paired";'
        f" type the code there and press Pair. The code works once, for {round(expires_in / 60)} minutes."
    )


def normalize_code(code: str) -> str:
    """A code as typed (any case, spaces or dashes between groups) as it was issued."""
    return re.sub(r"[\s-]", "", code).upper()


@attrs.frozen
class PairingKeys:
    """What both ends derive from the code and the exchange's nonces."""

    extension_proof: str
    broker_proof: str
    wrap_key: bytes


def pairing_keys(code: str, broker: str, port: int, extension_nonce: str, broker_nonce: str) -> PairingKeys:
    """The proofs each end gives of knowing ``code``, and the key that wraps the link key."""
    salt = _transcript("browser-mcp pairing v1", port, (broker, extension_nonce, broker_nonce))
    stretched = hashlib.pbkdf2_hmac("sha256", normalize_code(code).encode(), salt.encode(), PAIRING_ITERATIONS)
    nonces = (extension_nonce, broker_nonce)
    return PairingKeys(
        extension_proof=proof(stretched, Role.PAIR_EXTENSION, port, *nonces),
        broker_proof=proof(stretched, Role.PAIR_BROKER, port, *nonces),
        wrap_key=_mac(stretched, _transcript(Role.PAIR_WRAP, port, nonces)),
    )


@attrs.define
class _Code:
    code: str
    expires_at: float
    attempts_left: int = CODE_ATTEMPTS


class PairingDesk:
    """The one pairing code a broker has out (a new ``browser-mcp pair`` replaces the last)."""

    def __init__(self) -> None:
        self._code: _Code | None = None

    def issue(self, code: str, now: float) -> float:
        """Hand out ``code`` (made by the caller from :data:`CODE_ALPHABET`); returns its expiry."""
        self._code = _Code(code, now + CODE_LIFETIME)
        return self._code.expires_at

    def current(self, now: float) -> str:
        """The code a pairing exchange may be checked against now.

        Raises:
            NoPairingCode: none is out, or it expired.
        """
        if self._code is not None and now >= self._code.expires_at:
            self._code = None
            raise NoPairingCode("the pairing code expired: run browser-mcp pair again for a new one")
        if self._code is None:
            raise NoPairingCode(
                "this broker has no pairing code out: run browser-mcp pair, then type the code it shows"
            )
        return self._code.code

    def settle(self, code: str, right: bool, now: float) -> None:
        """A proof of ``code`` was checked: a right one spends it, wrong ones wear it out.

        Whatever the proof, it counts only against the code still out: one checked against a code
        that was voided, replaced or expired meanwhile is refused, so that a proof checked late
        never passes for a right one.

        Raises:
            NoPairingCode: ``code`` is no longer out.
            PairingFailed: the proof was wrong (the message says whether the code is now void).
        """
        if self.current(now) != code:
            raise NoPairingCode("the pairing code was replaced while this proof was checked: type the new one")
        assert self._code is not None
        if right:
            self._code = None
            return
        self._code.attempts_left -= 1
        if self._code.attempts_left <= 0:
            self._code = None
            raise PairingFailed("wrong pairing code, and too many tries: run browser-mcp pair again for a new one")
        raise PairingFailed(f"wrong pairing code ({self._code.attempts_left} more tries before it is void)")
