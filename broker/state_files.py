"""The storage state file ``browser_set_storage_state`` restores, read by the broker.

The file is the client's word for what the person's cookies and site storage become, so it is
taken as an upload's file is (:mod:`broker.uploads`: inside the caller's folders once symlinks are
followed, never in the broker's own or the person's secret folders, never a credential file,
opened once and read whole): the browser hears its parsed content, never its path. A relative
``filename`` is resolved against the client's first folder (its first MCP root, or the folder
``browser-mcp mcp`` started in), as Playwright MCP resolves it against its workspace root.

What it holds must have Playwright's storage-state shape: ``{"cookies": [{name, value, domain,
path, expires, httpOnly, secure, sameSite}], "origins": [{origin, localStorage: [{name,
value}]}]}``. Which of it is restored (only the sites of the client's own tabs) is the
extension's to decide, with the person.

Blocking file I/O: the hub runs :func:`checked_state` in a thread.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import codec, uploads
from .core.errors import InvalidRequest, UploadNotAllowed
from .core.messages import JsonObject
from .core.storage_rules import SAME_SITE, needs_state_file

__all__ = ["MAX_STATE_BYTES", "checked_state"]

# A storage state is text a person could read; far more is not one.
MAX_STATE_BYTES = 8 * 1024 * 1024
_MAX_COOKIES = 3000
_MAX_ORIGINS = 1000
_MAX_ITEMS = 10_000


def checked_state(
    args: JsonObject,
    places: uploads.UploadPlaces,
    max_bytes: int,
    protected_extra: Iterable[str] = (),
    tool: str = "browser_set_storage_state",
) -> JsonObject:
    """``tool``'s arguments for the extension: ``state``, the file's parsed storage state, and
    ``file``, where it came from (path, name, size, flags); no ``filename``.

    Raises:
        InvalidRequest: no ``filename``, or a file that is not a storage state.
        UploadNotAllowed, UploadTooLarge: a file the upload rules refuse.
    """
    needs_state_file(tool, args)
    filename = args["filename"]
    path = Path(filename)
    if not path.is_absolute():
        if not places.project:
            raise UploadNotAllowed(
                f"{filename!r} is relative and you have no folder to resolve it against (no MCP roots):"
                " name the file by its absolute path"
            )
        path = places.project[0] / path
    checked = uploads.checked_upload(
        {"paths": [str(path)]}, places, min(max_bytes, MAX_STATE_BYTES), protected_extra, tool
    )
    file = checked["files"][0]
    data = base64.b64decode(file.pop("data"))
    try:
        state = codec.loads_object(data, f"{file['path']}")
    except ValueError as exc:
        raise InvalidRequest(f"{exc}: a storage state is a JSON object with `cookies` and `origins`") from None
    rest = {name: value for name, value in args.items() if name != "filename"}
    return {**rest, "state": _state(state, file["path"]), "file": file}


def _state(state: dict[str, Any], where: str) -> JsonObject:
    cookies = state.get("cookies", [])
    origins = state.get("origins", [])
    if not isinstance(cookies, list) or not isinstance(origins, list):
        raise InvalidRequest(f"{where}: a storage state's `cookies` and `origins` are lists")
    if len(cookies) > _MAX_COOKIES or len(origins) > _MAX_ORIGINS:
        raise InvalidRequest(f"{where} holds more than {_MAX_COOKIES} cookies or {_MAX_ORIGINS} origins")
    return {
        "cookies": [_cookie(cookie, where, index) for index, cookie in enumerate(cookies)],
        "origins": [_origin(origin, where, index) for index, origin in enumerate(origins)],
    }


def _cookie(cookie: object, where: str, index: int) -> JsonObject:
    if not isinstance(cookie, dict):
        raise InvalidRequest(f"{where}: cookie {index} is not an object")
    for name in ("name", "value", "domain"):
        if not isinstance(cookie.get(name), str):
            raise InvalidRequest(f"{where}: cookie {index} has no string `{name}`")
    out: JsonObject = {name: cookie[name] for name in ("name", "value", "domain")}
    out["path"] = cookie["path"] if isinstance(cookie.get("path"), str) and cookie["path"] else "/"
    expires = cookie.get("expires")
    if isinstance(expires, (int, float)) and not isinstance(expires, bool) and expires > 0:
        out["expires"] = expires
    for name in ("httpOnly", "secure"):
        out[name] = cookie.get(name) is True
    if cookie.get("sameSite") in SAME_SITE:
        out["sameSite"] = cookie["sameSite"]
    return out


def _origin(origin: object, where: str, index: int) -> JsonObject:
    if not isinstance(origin, dict) or not isinstance(origin.get("origin"), str):
        raise InvalidRequest(f"{where}: origin {index} has no string `origin`")
    items = origin.get("localStorage", [])
    if not isinstance(items, list) or len(items) > _MAX_ITEMS:
        raise InvalidRequest(f"{where}: origin {index}'s `localStorage` is not a list of at most {_MAX_ITEMS} items")
    for item in items:
        if not (isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("value"), str)):
            raise InvalidRequest(f"{where}: origin {index}'s localStorage items are {{name, value}} strings")
    return {
        "origin": origin["origin"],
        "localStorage": [{"name": item["name"], "value": item["value"]} for item in items],
    }
