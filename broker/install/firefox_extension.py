"""The Firefox build of the extension: the same source files under a manifest derived by code.

Firefox loads the Chromium manifest once a few keys change, so no second manifest is kept by
hand: :func:`firefox_manifest` derives it. The background is an event page (``background.scripts``,
an ES module) since Firefox has no extension service workers; the add-on's id is fixed
(:data:`~broker.core.security.FIREFOX_EXTENSION_ID`) so native messaging can name it; the content
security policy leaves out ``upgrade-insecure-requests``, Firefox's default for MV3, which would
turn the link's ``ws://127.0.0.1`` into ``wss:``; the Chromium-only keys and permissions go, and
what the WebExtension page driver needs comes (``webRequest``, the snapshot agent's modules
reachable from pages).
:func:`build` writes the source files and that manifest into a folder of their own, the one
``browser-mcp extension path --browser firefox`` prints and Firefox loads as a temporary add-on.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from .. import codec
from ..core.security import FIREFOX_EXTENSION_ID

__all__ = ["FIREFOX_MIN_VERSION", "build", "firefox_manifest"]

# Content scripts in the page's MAIN world, which the polyfill needs, came with Firefox 128.
FIREFOX_MIN_VERSION = "128.0"
# Chromium-only: Firefox would warn of them, or refuse the add-on.
_CHROMIUM_KEYS = ("key", "minimum_chrome_version", "externally_connectable")
_FIREFOX_LACKS = frozenset({"debugger"})
# What the WebExtension page driver needs beside the Chromium manifest's (docs/page-drivers.md):
# webRequest for browser_network_requests (and, blocking, to hold the page hooks' dialogs; and
# webRequestFilterResponse to read response bodies and answer routes: browser_network_request),
# <all_urls> for tabs.captureTab, and the snapshot
# agent's modules, which each frame's isolated world imports, reachable from pages (their address
# holds the per-install uuid).
_FIREFOX_ADDS = ("webRequest", "webRequestBlocking", "webRequestFilterResponse")
_PAGE_AGENT = (
    "actions/webext/page_agent.js",
    "actions/page/items.js",
    "actions/page/names.js",
    "actions/page/roles.js",
    "actions/page/snapshot.js",
    "actions/page/yaml.js",
    # The testing tools' checks and locators (actions/webext/testing.js).
    "actions/page/checks.js",
    "actions/page/locators.js",
    # The recorder of the person's actions (actions/webext/recording.js).
    "actions/page/recorder.js",
)
_CSP = "script-src 'self'; object-src 'self'"


def firefox_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """The Firefox manifest derived from the Chromium one (which is left as it was)."""
    derived = {key: value for key, value in manifest.items() if key not in _CHROMIUM_KEYS}
    background = manifest["background"]
    derived["background"] = {"scripts": [background["service_worker"]], "type": background.get("type", "module")}
    permissions = [name for name in manifest.get("permissions", []) if name not in _FIREFOX_LACKS]
    derived["permissions"] = [*permissions, *(name for name in _FIREFOX_ADDS if name not in permissions)]
    # tabs.captureTab (browser_take_screenshot) is there only for an add-on that may read every page.
    derived["host_permissions"] = [*manifest.get("host_permissions", []), "<all_urls>"]
    derived["web_accessible_resources"] = [
        {"resources": list(_PAGE_AGENT), "matches": list(manifest.get("host_permissions", []))}
    ]
    derived["content_security_policy"] = {"extension_pages": _CSP}
    derived["browser_specific_settings"] = {
        "gecko": {"id": FIREFOX_EXTENSION_ID, "strict_min_version": FIREFOX_MIN_VERSION}
    }
    return derived


def build(source: Path, files: list[str], out: Path, version: str | None = None) -> Path:
    """Write ``files`` of ``source`` and the Firefox manifest into ``out`` (replaced whole)."""
    manifest = firefox_manifest(json.loads((source / "manifest.json").read_text(encoding="utf-8")))
    if version is not None:
        manifest["version"] = version
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
    try:
        for name in files:
            if name == "manifest.json":
                continue
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / name, target)
        (staging / "manifest.json").write_text(codec.dumps_pretty(manifest) + "\n", encoding="utf-8")
        if out.exists():
            old = out.with_name(f".{out.name}.old.{os.getpid()}")
            out.rename(old)
            shutil.rmtree(old, ignore_errors=True)
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out
