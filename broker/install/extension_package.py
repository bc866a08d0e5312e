"""``browser-mcp extension path | pack``: the browser extension this broker ships.

The extension is package data (``setup.cfg``: the repository's ``extension/`` becomes
``broker/extension/`` in the wheel and the sdist), so an installed broker carries the extension it
speaks with. ``path`` prints the folder to load unpacked at ``chrome://extensions``: the installed
package's, or, run from a clone, the repository's. ``pack`` writes the zip the Chrome Web Store
takes: the files the browser loads (the manifest, scripts, pages, styles, icons), nothing else (no
tests, lint or editor files, no icon sources), the manifest's ``version`` set to the package's, and
without the manifest's ``key``, which the store refuses (it assigns the id itself; a broker then
hears that id once started with ``--allow-extension ID``).

``--browser firefox`` serves Firefox from the same files (:mod:`broker.install.firefox_extension`):
``path`` writes them with the derived Firefox manifest into ``extension-firefox`` under the
user's data folder (copies, rewritten on each run, so the printed folder follows the installed or
cloned source) and prints it, to load as a temporary add-on at ``about:debugging``; ``pack``
writes the unsigned ``.xpi`` (a zip) that addons.mozilla.org signs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import zipfile
from pathlib import Path

from .. import codec, paths
from ..relay.errors import ClientError
from ..version import VERSION
from . import firefox_extension

__all__ = [
    "FIREFOX",
    "STORE_SUFFIXES",
    "add_arguments",
    "extension_dir",
    "firefox_folder",
    "main",
    "pack",
    "store_files",
]

# What the browser loads; anything else in the folder (a stray note, a source file) stays out.
STORE_SUFFIXES = frozenset({".js", ".html", ".css", ".png", ".json"})
# The store's limits on ``version``: one to four dot-separated integers, each at most 65535.
_CHROME_VERSION = re.compile(r"^(0|[1-9]\d{0,4})(\.(0|[1-9]\d{0,4})){0,3}$")
# Zip entries dated the same whatever the files' dates, so one version packs to the same bytes.
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
FIREFOX = "firefox"
_BROWSER_HELP = "chrome (any Chromium-family browser) or firefox (default: chrome)"


def extension_dir() -> Path:
    """The extension folder: the installed package's, else the clone's this module runs from.

    Raises:
        ClientError: neither holds a ``manifest.json`` (a broken install).
    """
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "extension", package.parent / "extension"):
        if (candidate / "manifest.json").is_file():
            return candidate
    raise ClientError(f"the browser extension is missing from this install ({package / 'extension'}): reinstall it")


def _is_store_file(relative: Path) -> bool:
    name = relative.name
    return (
        # A vendored library's licence goes with it.
        (relative.suffix in STORE_SUFFIXES or name.startswith("LICENSE"))
        and not any(part.startswith(".") for part in relative.parts)
        and not re.search(r"[._-](test|spec)\.[a-z]+$", name)
        and not any(part in ("test", "tests", "node_modules") for part in relative.parts)
    )


def store_files(folder: Path) -> list[str]:
    """The files of ``folder`` that go into the store's zip, as sorted POSIX paths."""
    found = (path.relative_to(folder) for path in folder.rglob("*") if path.is_file())
    return sorted(relative.as_posix() for relative in found if _is_store_file(relative))


def store_manifest(folder: Path, browser: str = "chrome") -> dict[str, object]:
    """The manifest as the store gets it: this package's version, no ``key``.

    Raises:
        ClientError: the package's version is not one Chrome takes.
    """
    if not _CHROME_VERSION.match(VERSION):
        raise ClientError(f"the package version {VERSION} is not a Chrome extension version (1 to 4 numbers, 1.2.3)")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["version"] = VERSION
    manifest.pop("key", None)
    return firefox_extension.firefox_manifest(manifest) if browser == FIREFOX else dict(manifest)


def firefox_folder(out: Path | None = None) -> Path:
    """The Firefox build written from this install's extension (into ``out``, else the data folder)."""
    source = extension_dir()
    return firefox_extension.build(source, store_files(source), out or paths.firefox_extension_dir())


def pack(out: Path, folder: Path | None = None, browser: str = "chrome") -> list[str]:
    """Write the store's zip of the extension to ``out`` (whole or not at all); returns its entries."""
    folder = folder or extension_dir()
    names = store_files(folder)
    manifest = codec.dumps_pretty(store_manifest(folder, browser)) + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.")
    try:
        with os.fdopen(handle, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as archive:
            for name in names:
                entry = zipfile.ZipInfo(name, _ZIP_DATE)
                entry.compress_type = zipfile.ZIP_DEFLATED
                entry.external_attr = 0o644 << 16
                data = manifest.encode() if name == "manifest.json" else (folder / name).read_bytes()
                archive.writestr(entry, data)
        os.replace(temporary, out)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="extension_command", required=True, metavar="ACTION")
    shower = actions.add_parser(
        "path", help="print the folder to load unpacked at chrome://extensions (Firefox: about:debugging)"
    )
    packer = actions.add_parser("pack", help="write the zip to upload to the Chrome Web Store (or Firefox's .xpi)")
    for action in (shower, packer):
        action.add_argument("--browser", choices=["chrome", FIREFOX], default="chrome", help=_BROWSER_HELP)
    packer.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="FILE",
        help=f"the zip to write (default: browser-mcp-extension-{VERSION}.zip here, or .xpi for firefox)",
    )


def main(args: argparse.Namespace) -> int:
    firefox = args.browser == FIREFOX
    if args.extension_command == "path":
        try:
            print(firefox_folder() if firefox else extension_dir())
        except OSError as exc:
            raise ClientError(f"cannot write the Firefox build: {exc.strerror or exc}") from None
        return 0
    out = args.out or Path(f"browser-mcp-extension-{VERSION}.{'xpi' if firefox else 'zip'}")
    try:
        names = pack(out, browser=args.browser)
    except OSError as exc:
        raise ClientError(f"cannot write {out}: {exc.strerror or exc}") from None
    where = "sign it at addons.mozilla.org" if firefox else "upload it in the Chrome Web Store's dashboard"
    print(f"wrote {out} (version {VERSION}, {len(names)} files): {where}")
    return 0
