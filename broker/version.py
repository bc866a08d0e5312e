"""The broker's version and the extension-link protocol's; importable without any dependency."""

from __future__ import annotations

__all__ = ["BROKER_HEADER", "MIN_EXTENSION_VERSION", "PROTOCOL_VERSION", "VERSION"]

VERSION = "0.1.0"
# The extension link protocol (docs/extension-link.md); bumped when a change would break a peer.
PROTOCOL_VERSION = 1
# The oldest extension this broker works with as documented: raised to this package's version when
# the broker starts relying on something an extension says or does that older ones do not. An
# extension that does not say its version (``connected.extensionVersion``) is older than any. An
# older one still joins and works as far as it can; status, the log and its popup say to update it.
MIN_EXTENSION_VERSION = "0.1.0"
# On every answer, with VERSION: how the extension, probing ports, tells a broker from other servers.
BROKER_HEADER = "X-Browser-MCP-Broker"
