"""Which files an upload (browser_file_upload, browser_drop) may send to a page, and the bytes it
sends, read when checked.

An upload gives a website the person's files. A path is taken only when it resolves (symlinks
followed) to a regular file inside one of the folders the caller may upload from
(:func:`upload_places`): the folders of ``serve --upload-dir``, for every caller; and for an MCP
client its MCP roots, or the folder ``browser-mcp mcp`` was started in when it declares none. A
client token cannot widen its own reach: its roots (or working folder) count only inside the
person's home, never the root folder, and elsewhere only inside an ``--upload-dir``.

Whatever the folders, the broker's own secrets and the usual secret folders are refused
(:func:`protected_places`): its token file and configuration folder, the discovery folders, the
browsers' folders (profiles, link keys kept by the extension, native host manifests), any folder
holding a browser profile, ``~/.ssh``, ``~/.gnupg``, ``~/.aws``, ``~/.config/gcloud``, the
folders of other tools' credentials (``~/.docker``, ``~/.kube``, ``~/.config/gh``, the keyrings,
``~/.password-store`` ...), the AI clients' folders and MCP configurations (which may hold client
tokens), ``/etc/ssh`` and ``/etc/ssl/private``. Only a folder the person named with
``--upload-dir`` at or below such a place opens it.

Some files are never sent, whatever the folders (:func:`credential_files`): ``~/.netrc``,
``~/.git-credentials``, ``~/.npmrc``, ``~/.pypirc``, ``~/.claude.json``, the shells' and
interpreters' histories, ``/etc/shadow`` and its kin, found by their path or, for a hard link
elsewhere, by their inode; and any file holding a private key block (PEM, OpenSSH, PGP, PuTTY),
whatever its name. A folder holding them can be named with ``--upload-dir`` to send its other files.

What the person approves is what is sent: each file is opened when it is checked (never through
a symlink at its last step, and refused if the opened file is not the one the path resolved to),
read whole into memory from that one open file, and refused if it changed while it was read. The
extension gets those bytes (base64) with the name, size and path shown in the approval window,
and hands the page those bytes, not the path: replacing the file afterwards changes nothing.
Each file also carries ``flags`` that the approval window lists first: hidden (a name starting
with a dot below the folder it was taken from), outside the project folder (the client's own
roots or working folder), large, reached through a symlink. A bad path fails the whole call.

Blocking file I/O: the doors run :func:`checked_upload` in a thread.
"""

from __future__ import annotations

import base64
import mimetypes
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote, urlsplit

import attrs

from . import paths
from .core.errors import InvalidRequest, UploadNotAllowed, UploadTooLarge
from .core.messages import JsonObject

__all__ = [
    "LARGE_BYTES",
    "WORKDIR_HEADER",
    "UploadPlaces",
    "checked_upload",
    "credential_files",
    "protected_places",
    "root_folder",
    "upload_places",
    "workdir_of",
]

# The working folder of ``browser-mcp mcp``, percent-encoded, on its /mcp/stream WebSocket.
WORKDIR_HEADER = "Browser-MCP-Workdir"
# A file this large is flagged in the approval window.
LARGE_BYTES = 10 * 1024 * 1024

# Under the home folder: secrets of the usual tools, and the browsers' folders (their profiles,
# the link keys the extension keeps there, the native host manifests install-native-host writes).
_HOME_SECRETS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".config/gcloud",
    ".config/google-chrome",
    ".config/google-chrome-beta",
    ".config/google-chrome-unstable",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".config/vivaldi",
    ".config/opera",
    ".mozilla",
    "snap/chromium",
    "snap/firefox",
    ".var/app/org.chromium.Chromium",
    ".var/app/com.google.Chrome",
    ".var/app/org.mozilla.firefox",
    "Library/Application Support/Google/Chrome",
    "Library/Application Support/Chromium",
    "Library/Application Support/BraveSoftware",
    "Library/Application Support/Microsoft Edge",
    "Library/Application Support/Firefox",
    "Library/Keychains",
)
# Folders of other tools' credentials, under the home folder: opened only as those above are.
_HOME_CREDENTIAL_FOLDERS = (
    ".docker",
    ".kube",
    ".config/gh",
    ".config/hub",
    ".config/git",
    ".config/rclone",
    ".local/share/keyrings",
    ".password-store",
    ".azure",
    ".terraform.d",
    # AI clients' own folders and MCP configurations, which may hold client tokens and API keys.
    ".claude",
    ".cursor",
    ".codex",
    ".gemini",
    ".codeium",
    ".config/Claude",
    ".config/Code/User",
    "Library/Application Support/Claude",
    "Library/Application Support/Code/User",
)
# Native host manifests for every user of the machine.
_SYSTEM_SECRETS = ("/etc/chromium/native-messaging-hosts", "/etc/opt/chrome/native-messaging-hosts")
# Files that hold credentials (or the commands typed with them) wherever the folders reach: sent to no
# page, whatever ``--upload-dir`` names, as a person who means to send one can pick it in the browser.
_HOME_CREDENTIAL_FILES = (
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".yarnrc",
    ".pypirc",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".claude.json",
    ".bash_history",
    ".zsh_history",
    ".history",
    ".sh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".node_repl_history",
    ".local/share/fish/fish_history",
)
_SYSTEM_CREDENTIAL_FILES = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/security/opasswd",
    "/etc/sudoers",
    "/etc/master.passwd",
)
_SYSTEM_CREDENTIAL_FOLDERS = ("/etc/ssl/private", "/etc/sudoers.d", "/etc/ssh")
# A PEM or OpenSSH private key (RSA, EC, DSA, ENCRYPTED, OPENSSH ...), a PGP secret key, a PuTTY key.
_PRIVATE_KEY = re.compile(rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d+:")
# What a folder holding a browser profile has at its top: Chromium's user data folder, a Firefox profile.
_PROFILE_MARKS = (("Local State",), ("prefs.js", "compatibility.ini"))


def workdir_of(header: str | None) -> str | None:
    """The absolute folder a relay's :data:`WORKDIR_HEADER` names, else None."""
    folder = unquote(header) if header else ""
    return folder if os.path.isabs(folder) else None


def root_folder(uri: str) -> str | None:
    """The local folder a ``file://`` MCP root names; None for any other kind of root."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return unquote(parts.path) or None


def _resolved(folder: str | Path) -> Path | None:
    try:
        return Path(folder).resolve()
    except (ValueError, RuntimeError, OSError):
        return None


def _inside(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == folder or path.is_relative_to(folder) for folder in folders)


@attrs.frozen
class UploadPlaces:
    """Where one caller's uploads may come from (folders resolved).

    ``folders``: the files must be inside one; ``project``: the caller's own (its roots or working
    folder), files elsewhere flagged; ``named``: the person's ``--upload-dir`` folders, which alone
    open a protected place; ``refused``: the caller's folders not taken, each with why.
    """

    folders: tuple[Path, ...]
    project: tuple[Path, ...] = ()
    named: tuple[Path, ...] = ()
    refused: tuple[str, ...] = ()


def upload_places(
    upload_dirs: Iterable[str], client_folders: Iterable[str] = (), *, client_token: bool = False
) -> UploadPlaces:
    """The places a caller uploads from: ``upload_dirs`` (``serve --upload-dir``) and the client's
    own ``client_folders`` (its MCP roots or working folder). A client token's folders count only
    inside the person's home (not the root folder, whatever the home), or inside an upload dir."""
    named = tuple(folder for given in upload_dirs if (folder := _resolved(given)) is not None)
    home = _resolved(Path.home())
    reach = [*named, *([home] if home is not None else [])]
    taken: list[Path] = []
    refused: list[str] = []
    for given in client_folders:
        folder = _resolved(given)
        if folder is None:
            refused.append(f"{given!r} (it cannot be resolved)")
        elif client_token and folder == Path(folder.anchor):
            refused.append(f"{given!r} (the root folder is never a client token's root)")
        elif client_token and not _inside(folder, reach):
            refused.append(
                f"{given!r} (a client token's roots count only inside the person's home, {home}, or inside a"
                " folder named with `serve --upload-dir`)"
            )
        else:
            taken.append(folder)
    return UploadPlaces((*named, *taken), tuple(taken), named, tuple(refused))


def protected_places(extra: Iterable[str] = ()) -> list[Path]:
    """The broker's own files and the usual secret folders, resolved: never uploaded unless a folder
    the person named with ``--upload-dir`` is at or below one. ``extra``: more of the broker's
    own (the discovery folder ``serve --discovery-dir`` chose)."""
    home = Path.home()
    token = paths.token_file()
    places = [
        token,
        # The configuration folder the token lives in by default, whatever else it comes to hold.
        token.parent if os.environ.get(paths.ENV_TOKEN_FILE) is None else token,
        *paths.discovery_dirs(),
        paths.DEFAULT_DISCOVERY_DIR,
        paths.runtime_discovery_dir(),
        *(Path(place) for place in extra),
        *(home / place for place in (*_HOME_SECRETS, *_HOME_CREDENTIAL_FOLDERS)),
        *(_config_home() / place for place in ("gh", "hub", "git", "rclone", "Claude", "Code/User")),
        *(Path(place) for place in (*_SYSTEM_SECRETS, *_SYSTEM_CREDENTIAL_FOLDERS)),
    ]
    return list(dict.fromkeys(place for given in places if (place := _resolved(given)) is not None))


def _config_home() -> Path:
    """Where XDG applications keep their settings (``$XDG_CONFIG_HOME``, else ``~/.config``)."""
    given = os.environ.get("XDG_CONFIG_HOME")
    return Path(given) if given and os.path.isabs(given) else Path.home() / ".config"


def credential_files() -> list[Path]:
    """The credential files no upload sends, whatever the folders: their paths as written (not
    resolved, so that a link planted at one of these names is refused by its own name too)."""
    home = Path.home()
    return [*(home / name for name in _HOME_CREDENTIAL_FILES), *(Path(name) for name in _SYSTEM_CREDENTIAL_FILES)]


def _credential_file(resolved: Path, info: os.stat_result | None = None) -> Path | None:
    """The credential file ``resolved`` is: by its path, or with ``info`` by its inode too (a hard
    link elsewhere)."""
    for place in credential_files():
        if _resolved(place) == resolved:
            return place
        if info is None:
            continue
        try:
            there = os.stat(place)
        except OSError:
            continue
        if (there.st_dev, there.st_ino) == (info.st_dev, info.st_ino):
            return place
    return None


def _profile_folder(path: Path) -> Path | None:
    """The folder above ``path`` that holds a browser profile, if any."""
    for folder in path.parents:
        if any(all((folder / mark).is_file() for mark in marks) for marks in _PROFILE_MARKS):
            return folder
    return None


def _protection(path: Path, protected: list[Path], named: tuple[Path, ...]) -> Path | None:
    """The protected place ``path`` lies in, unless a folder the person named opens it; else None."""
    places = [place for place in protected if _inside(path, [place])]
    profile = _profile_folder(path)
    if profile is not None:
        places.append(profile)
    for place in places:
        # A protected file is opened by naming its folder; a protected folder, by naming it or one below.
        area = place.parent if place == path else place
        if not any(_inside(path, [folder]) and _inside(folder, [area]) for folder in named):
            return place
    return None


def _is_checked_file(handle: int, info: os.stat_result, resolved: Path) -> bool:
    """Whether the file ``handle`` is open on is the one ``resolved`` named: by the path Linux
    names it by (no folder on the way swapped for a link between the check and the open), else
    by device and inode."""
    named = Path(f"/proc/self/fd/{handle}")
    try:
        if named.parent.is_dir():
            return Path(os.readlink(named)) == resolved
        now = os.stat(resolved, follow_symlinks=False)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (info.st_dev, info.st_ino)


def _read(given: str, resolved: Path, max_bytes: int, room: int) -> tuple[bytes, os.stat_result]:
    """The file's bytes, read from one open file that is the one ``resolved`` named when checked.

    Raises:
        UploadNotAllowed: it is not a readable regular file, or changed while it was opened or read.
        UploadTooLarge: it is larger than ``max_bytes``, or than the ``room`` the files before it left.
    """
    changed = f"{given!r} changed while it was checked (replaced, or written to): nothing was sent"
    try:
        # No symlink at the last step, and no wait on a FIFO.
        handle = os.open(resolved, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise UploadNotAllowed(f"{given!r} does not exist") from None
    except OSError as exc:
        if os.path.islink(resolved):
            raise UploadNotAllowed(changed) from None
        raise UploadNotAllowed(f"{given!r} cannot be read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise UploadNotAllowed(f"{given!r} is {kind}: only files can be uploaded")
        if info.st_size > max_bytes:
            raise UploadTooLarge(f"{given!r} is {info.st_size:,} bytes, over the upload limit of {max_bytes:,} bytes")
        if info.st_size > room:
            raise UploadTooLarge(
                f"{given!r} ({info.st_size:,} bytes) and the files before it are over the upload limit of"
                f" {max_bytes:,} bytes for all the files of one upload together"
            )
        if not _is_checked_file(handle, info, resolved):
            raise UploadNotAllowed(changed)
        chunks = []
        left = info.st_size + 1
        while left > 0 and (chunk := os.read(handle, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        after = os.fstat(handle)
    except OSError as exc:
        raise UploadNotAllowed(f"{given!r} cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(handle)
    if len(data) != info.st_size or (after.st_size, after.st_mtime_ns) != (info.st_size, info.st_mtime_ns):
        raise UploadNotAllowed(changed)
    return data, info


def _flags(given: Path, resolved: Path, size: int, places: UploadPlaces) -> list[str]:
    flags = []
    folder = max((f for f in places.folders if _inside(resolved, [f])), key=lambda f: len(f.parts))
    if any(part.startswith(".") for part in resolved.relative_to(folder).parts):
        flags.append("hidden")
    if places.project and not _inside(resolved, places.project):
        flags.append("outside the project folder")
    if size >= LARGE_BYTES:
        flags.append("large")
    if Path(os.path.normpath(given)) != resolved:
        flags.append("through a symlink")
    return flags


def _refuse_credential(shown: str, credential: Path | None) -> None:
    if credential is not None:
        raise UploadNotAllowed(
            f"{shown} is {credential} (or a link to it), which holds credentials: no upload sends it, whatever"
            " folders are named"
        )


def _checked_file(
    given: object, places: UploadPlaces, protected: list[Path], max_bytes: int, room: int, tool: str
) -> JsonObject:
    if not isinstance(given, str) or not given:
        raise InvalidRequest(f"{tool} needs `paths`: a list of file paths")
    path = Path(given)
    if not path.is_absolute():
        raise InvalidRequest(f"{given!r} is not an absolute path: name each file by its absolute path")
    try:
        resolved = path.resolve()
    # A NUL in the path (ValueError), a symlink loop (RuntimeError), a name too long (OSError).
    except (ValueError, RuntimeError, OSError) as exc:
        raise UploadNotAllowed(f"{given!r} cannot be resolved to a file: {exc}") from None
    shown = f"{given!r}" if resolved == path else f"{given!r} (which leads to {str(resolved)!r})"
    if not _inside(resolved, places.folders):
        refused = f"; not taken: {', '.join(places.refused)}" if places.refused else ""
        raise UploadNotAllowed(
            f"{shown} is outside the folders files may be uploaded from"
            f" ({', '.join(map(str, places.folders)) or 'none here'}): an MCP client's roots (or the folder"
            " `browser-mcp mcp` was started in) and `serve --upload-dir`, which alone REST and the"
            f" command line upload from{refused}"
        )
    place = _protection(resolved, protected, places.named)
    if place is not None:
        raise UploadNotAllowed(
            f"{shown} is in {place}, which holds the broker's own files or the person's secrets (keys,"
            " tokens, browser profiles): it is never uploaded unless the person names that folder with"
            " `serve --upload-dir`"
        )
    _refuse_credential(shown, _credential_file(resolved))
    data, info = _read(given, resolved, max_bytes, room)
    _refuse_credential(shown, _credential_file(resolved, info))
    if _PRIVATE_KEY.search(data):
        raise UploadNotAllowed(f"{shown} holds a private key: no upload sends one, whatever its name or folder")
    return {
        "path": str(resolved),
        "name": resolved.name,
        "size": info.st_size,
        "flags": _flags(path, resolved, info.st_size, places),
        "type": mimetypes.guess_type(resolved.name)[0] or "",
        "modified": info.st_mtime_ns // 1_000_000,
        "data": base64.b64encode(data).decode("ascii"),
    }


def checked_upload(
    args: JsonObject,
    places: UploadPlaces,
    max_bytes: int,
    protected_extra: Iterable[str] = (),
    tool: str = "browser_file_upload",
) -> JsonObject:
    """The upload ``tool``'s arguments for the extension: ``paths`` resolved, ``files`` described
    and read (the module docstring says what each carries). ``max_bytes`` bounds each file and all
    of them together, as they are held in memory until sent.

    Raises:
        InvalidRequest: ``paths`` is not a list of absolute paths.
        UploadNotAllowed: a path is not a readable regular file inside the places, is protected,
            or changed while it was read.
        UploadTooLarge: a file, or all of them, are larger than ``max_bytes``.
    """
    given = args.get("paths")
    if given is None:
        given = []
    if not isinstance(given, list):
        raise InvalidRequest(f"{tool}'s `paths` must be a list of file paths")
    protected = protected_places(protected_extra) if given else []
    files = []
    total = 0
    for path in given:
        file = _checked_file(path, places, protected, max_bytes, max_bytes - total, tool)
        total += file["size"]
        files.append(file)
    return {**args, "paths": [file["path"] for file in files], "files": files}
