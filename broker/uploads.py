"""Which files browser_file_upload may send to a page, checked on disk before anything is sent.

An upload gives a website the person's files, so a path is taken only when it resolves (symlinks
followed) to a regular file inside one of the folders the caller may upload from: the client's
MCP roots, the folder ``browser-mcp mcp`` was started in when its client declares none, and the
folders of ``serve --upload-dir``. The extension gets the resolved absolute paths, with each
file's name and size for the person's approval window; a bad path fails the whole call.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote, urlsplit

from .core.errors import InvalidRequest, UploadNotAllowed, UploadTooLarge
from .core.messages import JsonObject

__all__ = ["WORKDIR_HEADER", "checked_upload", "root_folder", "workdir_of"]

# The working folder of ``browser-mcp mcp``, percent-encoded, on its /mcp/stream WebSocket.
WORKDIR_HEADER = "Browser-MCP-Workdir"


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


def _inside(path: Path, folders: list[Path]) -> bool:
    return any(path == folder or path.is_relative_to(folder) for folder in folders)


def _checked_file(given: object, folders: list[Path], max_bytes: int) -> JsonObject:
    if not isinstance(given, str) or not given:
        raise InvalidRequest("browser_file_upload needs `paths`: a list of file paths")
    path = Path(given)
    if not path.is_absolute():
        raise InvalidRequest(f"{given!r} is not an absolute path: name each file by its absolute path")
    try:
        resolved = path.resolve()
    # A NUL in the path (ValueError), a symlink loop (RuntimeError), a name too long (OSError).
    except (ValueError, RuntimeError, OSError) as exc:
        raise UploadNotAllowed(f"{given!r} cannot be resolved to a file: {exc}") from None
    if not _inside(resolved, folders):
        shown = f"{given!r}" if resolved == path else f"{given!r} (which leads to {str(resolved)!r})"
        raise UploadNotAllowed(
            f"{shown} is outside the folders files may be uploaded from"
            f" ({', '.join(map(str, folders)) or 'none here'}): an MCP client's roots (or the folder"
            " `browser-mcp mcp` was started in) and `serve --upload-dir`, which alone REST and the"
            " command line upload from"
        )
    try:
        info = resolved.stat()
    except FileNotFoundError:
        raise UploadNotAllowed(f"{given!r} does not exist") from None
    except OSError as exc:
        raise UploadNotAllowed(f"{given!r} cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise UploadNotAllowed(f"{given!r} is {kind}: only files can be uploaded")
    if info.st_size > max_bytes:
        raise UploadTooLarge(f"{given!r} is {info.st_size:,} bytes, over the upload limit of {max_bytes:,} bytes")
    if not os.access(resolved, os.R_OK):
        raise UploadNotAllowed(f"{given!r} cannot be read")
    return {"path": str(resolved), "name": resolved.name, "size": info.st_size}


def checked_upload(args: JsonObject, folders: Iterable[str], max_bytes: int) -> JsonObject:
    """browser_file_upload's arguments for the extension: ``paths`` resolved, ``files`` described.

    Raises:
        InvalidRequest: ``paths`` is not a list of absolute paths.
        UploadNotAllowed: a path is not a readable regular file inside ``folders``.
        UploadTooLarge: a file is larger than ``max_bytes``.
    """
    paths = args.get("paths")
    if paths is None:
        paths = []
    if not isinstance(paths, list):
        raise InvalidRequest("browser_file_upload's `paths` must be a list of file paths")
    allowed = [Path(folder).resolve() for folder in folders]
    files = [_checked_file(given, allowed, max_bytes) for given in paths]
    return {**args, "paths": [file["path"] for file in files], "files": files}
