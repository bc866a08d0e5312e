"""``browser-mcp install-native-host``: registers :mod:`broker.install.native_host` with the browsers.

For each chosen browser it writes two files into the browser's ``NativeMessagingHosts`` folder:

- ``browser_mcp.broker.json``, the host manifest: ``name``, ``description``, ``path`` (absolute),
  ``type: "stdio"`` and ``allowed_origins`` (``chrome-extension://<id>/``, trailing slash
  required: this project's extension and each ``--allow-extension``);
- ``browser_mcp.broker-host``, the ``path`` above: a ``/bin/sh`` launcher (0755) that execs this
  installation's ``browser-mcp native-host "$@"``, with ``--discovery-dir`` when one was given.
  It lives beside the manifest so that one folder holds everything a browser reads, and
  ``--uninstall`` removes both.

Folders, per user (Linux honours ``XDG_CONFIG_HOME``, as Chromium does):

=========  ==========================================  ==================================================
browser    Linux (``~/.config`` or ``$XDG_CONFIG_HOME``)  macOS (``~/Library/Application Support``)
=========  ==========================================  ==================================================
chrome     ``google-chrome``                           ``Google/Chrome``
chromium   ``chromium``                                ``Chromium``
brave      ``BraveSoftware/Brave-Browser``             ``BraveSoftware/Brave-Browser``
edge       ``microsoft-edge``                          ``Microsoft Edge``
=========  ==========================================  ==================================================

each followed by ``/NativeMessagingHosts``. Firefox (``firefox``) reads
``~/.mozilla/native-messaging-hosts`` on Linux and ``~/Library/Application
Support/Mozilla/NativeMessagingHosts`` on macOS, and its manifest names the add-on by its gecko id
(``allowed_extensions``) where Chromium's names origins. Without ``--browser`` every browser whose folder exists
is chosen, else Chromium. ``--user-data-dir DIR`` writes into ``DIR/NativeMessagingHosts``, which
is what Chromium reads when started with that ``--user-data-dir`` (it then ignores the home
folder's); given alone it replaces the default choice of browsers.

What it leaves out: system-wide folders (``/etc/chromium/native-messaging-hosts``; they need root
and a launcher outside any one user's venv) and Windows, where hosts are registered in the
registry.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from .. import codec, paths
from ..core.security import FIREFOX_EXTENSION_ID, PROJECT_EXTENSION_ID, refuse_extension_ids
from ..files import write_atomic

__all__ = [
    "BROWSERS",
    "HOST_NAME",
    "FIREFOX",
    "LAUNCHER_NAME",
    "MANIFEST_NAME",
    "Target",
    "add_arguments",
    "default_targets",
    "install",
    "main",
    "manifest",
    "targets",
    "uninstall",
]

# The name the browsers know the native messaging host by (the extension connects to it).
HOST_NAME = "browser_mcp.broker"
MANIFEST_NAME = f"{HOST_NAME}.json"
LAUNCHER_NAME = f"{HOST_NAME}-host"

# browser: (folder under the Linux config root, folder under macOS Application Support)
BROWSERS: dict[str, tuple[str, str]] = {
    "chrome": ("google-chrome", "Google/Chrome"),
    "chromium": ("chromium", "Chromium"),
    "brave": ("BraveSoftware/Brave-Browser", "BraveSoftware/Brave-Browser"),
    "edge": ("microsoft-edge", "Microsoft Edge"),
}

FIREFOX = "firefox"
# Firefox's folders: (Linux, under the home folder; macOS, under Application Support).
_FIREFOX_ROOTS = (".mozilla", "Mozilla")


class InstallError(Exception):
    """What the person asked for cannot be done; the message says why."""


@attrs.frozen
class Target:
    """Where one browser (or one custom profile) reads native messaging hosts."""

    label: str
    folder: Path
    firefox: bool = False

    @property
    def manifest(self) -> Path:
        return self.folder / MANIFEST_NAME

    @property
    def launcher(self) -> Path:
        return self.folder / LAUNCHER_NAME


def _browser_root(browser: str, platform: str) -> Path:
    if browser == FIREFOX:
        linux, macos = _FIREFOX_ROOTS
        support = Path.home() / "Library" / "Application Support"
        return support / macos if platform == "darwin" else Path.home() / linux
    linux, macos = BROWSERS[browser]
    if platform == "darwin":
        return Path.home() / "Library" / "Application Support" / macos
    config = os.environ.get("XDG_CONFIG_HOME")
    # The XDG spec ignores a relative XDG_CONFIG_HOME; so does Chromium.
    root = Path(config) if config and Path(config).is_absolute() else Path.home() / ".config"
    return root / linux


def targets(browsers: Sequence[str], user_data_dirs: Sequence[Path], platform: str = sys.platform) -> list[Target]:
    """The folders for ``browsers`` and ``user_data_dirs``.

    Raises:
        InstallError: Windows, or an unknown browser.
    """
    if platform == "win32":
        raise InstallError("Windows registers native messaging hosts in the registry; that is not supported yet")
    unknown = sorted(set(browsers) - {*BROWSERS, FIREFOX})
    if unknown:
        raise InstallError(f"unknown browser {', '.join(unknown)} (known: {', '.join([*BROWSERS, FIREFOX])})")
    found = [_target(b, platform) for b in dict.fromkeys(browsers)]
    found += [Target(f"user-data-dir {d}", d.absolute() / "NativeMessagingHosts") for d in user_data_dirs]
    return found


def _target(browser: str, platform: str) -> Target:
    root = _browser_root(browser, platform)
    if browser != FIREFOX:
        return Target(browser, root / "NativeMessagingHosts")
    return Target(browser, root / ("NativeMessagingHosts" if platform == "darwin" else "native-messaging-hosts"), True)


def default_targets(platform: str = sys.platform) -> list[Target]:
    """Every browser whose folder exists, else Chromium."""
    present = [b for b in [*BROWSERS, FIREFOX] if _browser_root(b, platform).is_dir()]
    return targets(present or ["chromium"], [], platform)


def manifest(launcher: Path, extension_ids: Sequence[str], *, firefox: bool = False) -> dict[str, Any]:
    """The host manifest (Firefox's allows the add-on's gecko id; ``extension_ids`` are Chromium's).

    Raises:
        InstallError: an id that is not an extension id.
    """
    ids = list(dict.fromkeys([PROJECT_EXTENSION_ID, *extension_ids]))
    refused = refuse_extension_ids(ids)
    if refused:
        raise InstallError(refused)
    allowed = (
        {"allowed_extensions": [FIREFOX_EXTENSION_ID]}
        if firefox
        else {"allowed_origins": [f"chrome-extension://{i}/" for i in ids]}
    )
    return {
        "name": HOST_NAME,
        "description": "browser-mcp: tells the extension which local brokers are running",
        "path": str(launcher),
        "type": "stdio",
        **allowed,
    }


def host_command(discovery_dir: Path | None = None) -> list[str]:
    """How the launcher starts the host: this installation's console script, else ``python -m broker``."""
    command = [*paths.broker_command(), "native-host"]
    if discovery_dir is not None:
        command += ["--discovery-dir", str(discovery_dir.absolute())]
    return command


def launcher_text(command: Sequence[str]) -> str:
    return (
        "#!/bin/sh\n"
        "# Written by browser-mcp install-native-host; the browser starts it for the browser-mcp extension.\n"
        f'exec {shlex.join(command)} "$@"\n'
    )


def install(where: Sequence[Target], extension_ids: Sequence[str], command: Sequence[str]) -> list[dict[str, Any]]:
    """Write the manifest and launcher into each target; what was written, for printing.

    Raises:
        InstallError: a bad extension id (nothing is written).
        OSError: a folder cannot be written.
    """
    # Refuses bad ids before writing.
    manifests = [manifest(t.launcher, extension_ids, firefox=t.firefox) for t in where]
    done = []
    for target, content in zip(where, manifests, strict=True):
        target.folder.mkdir(parents=True, exist_ok=True)
        # Atomic: a browser may read them at any moment.
        write_atomic(target.launcher, launcher_text(command).encode(), 0o755)
        write_atomic(target.manifest, codec.dumps_pretty(content).encode() + b"\n", 0o644)
        done.append(
            {
                "browser": target.label,
                "manifest": str(target.manifest),
                "launcher": str(target.launcher),
                "allowedOrigins": content.get("allowed_origins", content.get("allowed_extensions")),
            }
        )
    return done


def uninstall(where: Sequence[Target]) -> list[str]:
    """Remove the manifest and launcher from each target; the files that were removed."""
    removed = []
    for target in where:
        for path in (target.manifest, target.launcher):
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            removed.append(str(path))
    return removed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--browser",
        action="append",
        default=[],
        choices=[*BROWSERS, FIREFOX],
        help="repeatable (default: every browser whose config folder exists, else chromium)",
    )
    parser.add_argument(
        "--user-data-dir",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="a custom profile folder (browser started with --user-data-dir DIR); repeatable",
    )
    parser.add_argument(
        "--allow-extension",
        action="append",
        default=[],
        metavar="ID",
        help=f"another extension id that may start the host (repeatable; {PROJECT_EXTENSION_ID} always may)",
    )
    parser.add_argument("--discovery-dir", type=Path, help="make the host read discovery files from this folder only")
    parser.add_argument("--uninstall", action="store_true", help="remove the manifests and launchers instead")
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")


def main(args: argparse.Namespace) -> int:
    try:
        if args.browser or args.user_data_dir:
            where = targets(args.browser, args.user_data_dir)
        elif args.uninstall:
            where = targets([*BROWSERS, FIREFOX], [])  # wherever it was installed
        else:
            where = default_targets()
        if args.uninstall:
            removed = uninstall(where)
            if args.json:
                print(codec.dumps_pretty({"removed": removed}))
            else:
                print("\n".join(f"removed {p}" for p in removed) or "nothing to remove")
            return 0
        done = install(where, args.allow_extension, host_command(args.discovery_dir))
    except (InstallError, OSError) as exc:
        print(f"browser-mcp {args.command}: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(codec.dumps_pretty({"installed": done}))
    else:
        for item in done:
            print(f"{item['browser']}: wrote {item['manifest']}\n  launcher {item['launcher']}")
        print(f"allowed: {', '.join(done[0]['allowedOrigins'])}" if done else "nothing installed")
    return 0
