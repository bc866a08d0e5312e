"""The files built-in tools write for a client: where each goes, which names are refused, the writing.

A tool writes a file when its driver answers with a file (an MCP embedded resource whose ``uri``
is ``browser-mcp:file/<suggested name>``: a PDF, a trace, a storage state), or when the client
gives it a ``filename`` (a snapshot, a screenshot, console messages ... saved instead of
answered). Either way the answer then names the file's absolute path instead of carrying it.

Where (:class:`OutputPlaces`):

- the client's output folder: ``serve --output-dir`` when set, else a folder per client in the
  broker's data folder (platformdirs), ``output/<client>``, made 0700;
- a relative ``filename`` is resolved against the client's first folder (its first MCP root, or
  the folder ``browser-mcp mcp`` was started in), else against its output folder, as Playwright
  MCP resolves it against its workspace root;
- an absolute one must be inside the output folder or one of the client's folders.

Refused (:class:`broker.core.errors.OutputNotAllowed`), before anything is written: a name with
a ``..`` part, an empty name or a folder's, a path outside those folders once every symlink on
its way is followed (a link out of them), a name that is a symlink or not a regular file already,
and a file of another user. Files are written whole and at once, 0600 (:func:`broker.files.write_atomic`).
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import Any

import attrs
import platformdirs

from .core.errors import OutputNotAllowed
from .files import owned_by_another_user, private_dir, write_atomic
from .paths import APP_NAME

__all__ = ["FILE_URI", "OutputPlaces", "holds_file", "output_places", "saved"]

FILE_URI = "browser-mcp:file/"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_EXTENSIONS = {
    "image/png": ".png",
    "image/jpeg": ".jpeg",
    "image/webp": ".webp",
    "application/pdf": ".pdf",
    "application/json": ".json",
    "video/webm": ".webm",
}


@attrs.frozen
class OutputPlaces:
    """Where one client's files may go: its output folder, and its own folders (MCP roots)."""

    output: Path
    client_folders: tuple[Path, ...] = ()

    def path_for(self, filename: str) -> Path:
        """The file a client's ``filename`` names, checked.

        Raises:
            OutputNotAllowed: a ``..`` part, no file name, or a place outside the client's folders.
        """
        if not isinstance(filename, str) or not filename.strip():
            raise OutputNotAllowed("`filename` must name a file, such as page.pdf")
        given = PurePath(filename)
        if ".." in given.parts:
            raise OutputNotAllowed(f"`filename` {filename!r} has a '..' part: name a file inside your output folder")
        if filename.endswith(("/", os.sep)) or given.name in ("", "."):
            raise OutputNotAllowed(f"`filename` {filename!r} names a folder, not a file")
        base = self.client_folders[0] if self.client_folders else self.output
        path = Path(given) if given.is_absolute() else base / given
        allowed = [self.output, *self.client_folders]
        real = _real(path)
        if real is None or not any(_inside(real, _real(folder) or folder) for folder in allowed):
            places = ", ".join(str(folder) for folder in allowed)
            raise OutputNotAllowed(
                f"`filename` {filename!r} is outside the folders your files may be written to ({places})"
            )
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise OutputNotAllowed(f"{path} is a link or not a regular file: it is not written over")
        if owned_by_another_user(path):
            raise OutputNotAllowed(f"{path} belongs to another user: it is not written over")
        return real

    def default_path(self, suggested: str, mime_type: str) -> Path:
        """A new file in the output folder named after what the tool suggested, with the time."""
        stem, dot, extension = _UNSAFE.sub("-", PurePath(suggested).name or "file").rpartition(".")
        if not dot:
            stem, extension = extension, _EXTENSIONS.get(mime_type, ".bin").lstrip(".")
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = self.output / f"{stem or 'file'}-{stamp}.{extension}"
        counter = 1
        while path.exists():
            counter += 1
            path = self.output / f"{stem or 'file'}-{stamp}-{counter}.{extension}"
        return path


def output_places(output_dir: str | None, client: str, client_folders: Sequence[str] = ()) -> OutputPlaces:
    """The places of a client named ``client`` (its token's name, else its MCP name)."""
    folder = Path(output_dir) if output_dir else Path(platformdirs.user_data_dir(APP_NAME)) / "output"
    folder = folder / (_UNSAFE.sub("-", client).strip("-.") or "client")
    return OutputPlaces(folder, tuple(Path(found) for found in client_folders if Path(found).is_absolute()))


def saved(value: Any, filename: str | None, places: OutputPlaces) -> Any:
    """``value`` (an action's answer) with its files written and named in their place.

    Each ``browser-mcp:file/`` resource is written (the first to ``filename`` when given) and
    replaced by a line naming its path; without such a resource, a ``filename`` takes the answer's
    image, else its text, and the answer names the file instead. Off the event loop: it writes.

    Raises:
        OutputNotAllowed: ``filename`` may not be written, or a file cannot be.
    """
    content = value.get("content") if isinstance(value, dict) else None
    if not isinstance(content, list):
        if filename is None:
            return value
        content = [{"type": "text", "text": value if isinstance(value, str) else str(value)}]
    files = [item for item in content if _is_file(item)]
    if not files and filename is None:
        return value
    target = places.path_for(filename) if filename is not None else None
    if files:
        out = []
        for item in content:
            if _is_file(item):
                resource = item["resource"]
                path = target or places.default_path(resource["uri"][len(FILE_URI) :], resource.get("mimeType", ""))
                target = None
                out.append(_wrote(path, _bytes_of(resource.get("blob"), resource.get("text"))))
            else:
                out.append(item)
        return {**value, "content": out}
    assert target is not None
    images = [item for item in content if isinstance(item, dict) and item.get("type") == "image"]
    if images:
        written = _wrote(target, _bytes_of(images[0].get("data"), None))
        rest = [item for item in content if item is not images[0]]
        return {**value, "content": [written, *rest]}
    texts = [item["text"] for item in content if isinstance(item, dict) and isinstance(item.get("text"), str)]
    return {**value, "content": [_wrote(target, "\n\n".join(texts).encode())]}


def holds_file(value: Any) -> bool:
    """Whether an action's answer carries a file to write."""
    content = value.get("content") if isinstance(value, dict) else None
    return isinstance(content, list) and any(_is_file(item) for item in content)


def _is_file(item: object) -> bool:
    if not isinstance(item, dict) or item.get("type") != "resource" or not isinstance(item.get("resource"), dict):
        return False
    uri = item["resource"].get("uri")
    return isinstance(uri, str) and uri.startswith(FILE_URI)


def _bytes_of(blob: object, text: object) -> bytes:
    if isinstance(text, str):
        return text.encode()
    if not isinstance(blob, str):
        raise OutputNotAllowed("the browser answered a file with no content")
    try:
        return base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError):
        raise OutputNotAllowed("the browser answered a file that is not base64") from None


def _wrote(path: Path, data: bytes) -> dict[str, Any]:
    try:
        private_dir(path.parent)
        write_atomic(path, data)
    except OSError as exc:
        raise OutputNotAllowed(f"{path} could not be written: {exc.strerror or exc}") from None
    return {"type": "text", "text": f"Saved to {path} ({len(data):,} bytes)"}


def _real(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return None


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)
