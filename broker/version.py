"""The broker's version and the extension-link protocol's; importable without any dependency."""

from __future__ import annotations

__all__ = ["BROKER_HEADER", "PROTOCOL_VERSION", "VERSION"]

VERSION = "0.1.0"
# The extension link protocol (README, "The extension link"); bumped when a change would break a peer.
PROTOCOL_VERSION = 1
# On every answer, with VERSION: how the extension, probing ports, tells a broker from other servers.
BROKER_HEADER = "X-Browser-MCP-Broker"
