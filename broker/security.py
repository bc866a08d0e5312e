"""Who may talk to the broker: loopback ``Host`` names, allowed origins, the bearer token.

Pure checks on header values, shared by the REST, MCP and extension-link adapters so that one
rule serves every door. Web pages can reach 127.0.0.1 from the browser, so a ``Host`` that is not
a loopback name (DNS rebinding) and a web ``Origin`` are refused everywhere; only
``chrome-extension://`` origins on the allow list pass.
"""

from __future__ import annotations

import hmac
import ipaddress

from .errors import Forbidden, Unauthorized

__all__ = [
    "PROJECT_EXTENSION_ID",
    "check_bearer",
    "check_host",
    "extension_origin",
    "is_allowed_origin",
]

# Fixed by the `key` in extension/manifest.json, whatever folder the extension is loaded from.
PROJECT_EXTENSION_ID = "mchblnnplcjofeadimfinmipflmimflp"

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost", "ip6-loopback"})


def _host_name(host: str) -> str:
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    name, _, port = host.rpartition(":")
    return name if name and port.isdigit() else host


def check_host(host: str | None) -> None:
    """Raises: Forbidden, unless ``host`` names this machine's loopback interface."""
    if not host:
        raise Forbidden("request has no Host header")
    name = _host_name(host.strip()).lower()
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


def is_allowed_origin(origin: str, allowed_extensions: frozenset[str]) -> bool:
    return origin.rstrip("/") in {extension_origin(i) for i in allowed_extensions}


def check_bearer(authorization: str | None, token: str) -> None:
    """Raises: Unauthorized, unless ``authorization`` is ``Bearer <token>``."""
    if not authorization:
        raise Unauthorized(
            'missing Authorization: Bearer <token>; the token is the "token" of the broker\'s'
            " discovery file (/tmp/browser-mcp/server-<pid>.json)"
        )
    scheme, _, presented = authorization.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(presented.strip().encode(), token.encode()):
        raise Unauthorized("wrong bearer token")
