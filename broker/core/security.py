"""Who may talk to the broker: loopback ``Host`` names, allowed origins, the bearer token.

Pure checks on header values, shared by the REST, MCP and extension-link adapters so that one
rule serves every door. Web pages can reach 127.0.0.1 from the browser, so a ``Host`` that is not
a loopback name (DNS rebinding) and a web ``Origin`` are refused everywhere; only
``chrome-extension://`` origins on the allow list pass, and, on the extension link alone, a
Firefox add-on's ``moz-extension://<uuid>``, which must then prove the link key (its uuid is drawn
per profile, so no list can name it).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
from collections.abc import Iterable
from typing import TypeAlias

from .errors import Forbidden, Unauthorized

__all__ = [
    "OWNER_CREDENTIAL",
    "Client",
    "PROJECT_EXTENSION_ID",
    "FIREFOX_EXTENSION_ID",
    "refuse_extension_ids",
    "check_bearer",
    "client_token",
    "check_host",
    "extension_origin",
    "is_allowed_origin",
    "is_firefox_extension_origin",
]

# Fixed by the `key` in extension/manifest.json, whatever folder the extension is loaded from.
PROJECT_EXTENSION_ID = "mchblnnplcjofeadimfinmipflmimflp"

# The Firefox build's ``browser_specific_settings.gecko.id``. Its pages' origin is
# ``moz-extension://<uuid>`` with a uuid drawn per profile, so that origin cannot be allowed in
# advance: a Firefox link is admitted by its link-key proof alone.
FIREFOX_EXTENSION_ID = "browser-mcp@broker"

_EXTENSION_ID = re.compile(r"^[a-p]{32}$")
_FIREFOX_ORIGIN = re.compile(r"^moz-extension://[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def is_firefox_extension_origin(origin: str) -> bool:
    """A Firefox add-on's origin: some add-on of the person's Firefox, which one no one can tell."""
    return _FIREFOX_ORIGIN.match(origin.rstrip("/")) is not None


def refuse_extension_ids(ids: Iterable[str]) -> str | None:
    """None when every id is a Chromium extension id, else a message naming those that are not."""
    bad = [i for i in ids if not _EXTENSION_ID.match(i)]
    return f"not an extension id (32 letters a-p): {', '.join(bad)}" if bad else None


_LOOPBACK_NAMES = frozenset({"127.0.0.1", "::1", "localhost", "localhost.", "ip6-localhost", "ip6-loopback"})


# A Host header is a bracketed IPv6 address or a name without colons, then an optional port:
# nothing may follow the bracket (``[::1]evil.example`` is not loopback).
_HOST = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[^:\[\]/@\s]+))(?::\d{1,5})?$")


def _host_name(host: str) -> str | None:
    found = _HOST.match(host)
    if found is None:
        return None
    return found.group("v6") or found.group("name")


def check_host(host: str | None) -> None:
    """Raises: Forbidden, unless ``host`` names this machine's loopback interface."""
    if not host:
        raise Forbidden("request has no Host header")
    name = (_host_name(host.strip()) or "").lower()
    if name in _LOOPBACK_NAMES or name.endswith(".localhost"):
        return
    try:
        if ipaddress.ip_address(name).is_loopback:
            return
    except ValueError:
        pass
    raise Forbidden(f"Host {host!r} is not a loopback name; the broker only answers on 127.0.0.1")


def extension_origin(extension_id: str) -> str:
    return f"chrome-extension://{extension_id}"


def is_allowed_origin(origin: str, allowed_extensions: frozenset[str], own_port: int | None = None) -> bool:
    """An allowed extension, or the broker's own origin (it serves no pages, so none can carry it).

    The MCP specification has servers accept their own loopback origin; a page elsewhere,
    ``null`` included, is refused.
    """
    origin = origin.rstrip("/")
    if origin in {extension_origin(i) for i in allowed_extensions}:
        return True
    return own_port is not None and origin in {
        f"http://{host}:{own_port}" for host in ("127.0.0.1", "localhost", "[::1]")
    }


# How the broker's own token is named to the person (``connect.credential``); no client token may
# bear this name (:func:`client_token`), so none can pose as the owner.
OWNER_CREDENTIAL = "owner"
CLIENT_TOKEN_PREFIX = "bmcp_"
_CLIENT_NAME = re.compile(r"^[A-Za-z0-9-]{1,48}$")

# Who a request acts for, as every door and the core name it: the name a client token bears
# (``browser-mcp mcp-config --client NAME``), or None for the broker's own token, the owner's
# (shown to the person as OWNER_CREDENTIAL).
Client: TypeAlias = str | None


def _is_client_name(label: str) -> bool:
    # The person tells the owner's sessions by this name: a client token may not bear it.
    return bool(_CLIENT_NAME.match(label)) and label.lower() != OWNER_CREDENTIAL


def client_token(token: str, label: str) -> str:
    """A token naming one client, derived from the broker's: the broker checks it without storing it.

    Raises:
        ValueError: ``label`` is not 1-48 letters, digits or dashes.
    """
    if not _is_client_name(label):
        raise ValueError(
            f"a client name for a token is 1-48 letters, digits or dashes, other than {OWNER_CREDENTIAL!r}"
            f" (the broker's own token), not {label!r}"
        )
    mac = hmac.new(token.encode(), f"client:{label}".encode(), hashlib.sha256).hexdigest()[:32]
    return f"{CLIENT_TOKEN_PREFIX}{label}_{mac}"


def check_bearer(authorization: str | None, token: str) -> Client:
    """Check ``Authorization: Bearer ...`` and return the client a client token names, else None (the owner).

    Raises:
        Unauthorized: no bearer token, or neither the broker's token nor a client token of it.
    """
    if not authorization:
        raise Unauthorized(
            'missing Authorization: Bearer <token>; the token is the "token" of the broker\'s'
            " discovery file (/tmp/browser-mcp/server-<pid>.json)"
        )
    scheme, _, presented = authorization.partition(" ")
    presented = presented.strip()
    if scheme.lower() == "bearer":
        if hmac.compare_digest(presented.encode(), token.encode()):
            return None
        if presented.startswith(CLIENT_TOKEN_PREFIX):
            label = presented[len(CLIENT_TOKEN_PREFIX) :].rpartition("_")[0]
            if _is_client_name(label) and hmac.compare_digest(presented.encode(), client_token(token, label).encode()):
                return label
    raise Unauthorized("wrong bearer token")
