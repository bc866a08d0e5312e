"""The storage group's arguments (cookies, localStorage, sessionStorage, storage states): their
schemas and the checks a call passes before any browser hears of it.

These tools reach the person's own profile, where their logins live. What keeps them to the sites
of the client's own tabs, off until the person turns them on, and behind the person's approval is
the extension's (``extension/actions/storage_sites.js``): the broker's part is that a call is
well formed, and that ``browser_set_storage_state``'s file is read by the broker under the upload
rules (``broker/state_files.py``) rather than by the browser.
"""

from __future__ import annotations

from collections.abc import Callable

from .errors import InvalidRequest
from .messages import JsonObject

__all__ = [
    "COOKIE_FIELDS",
    "SAME_SITE",
    "STATE_FILE",
    "needs_cookie",
    "needs_key",
    "needs_name",
    "needs_state_file",
    "storage_key",
]

SAME_SITE = ("Strict", "Lax", "None")
Check = Callable[[str, JsonObject], None]

COOKIE_FIELDS: JsonObject = {
    "name": {"type": "string", "description": "cookie name"},
    "value": {"type": "string", "description": "cookie value"},
    "domain": {"type": "string", "description": "default: the tab's host"},
    "path": {"type": "string", "description": "default /"},
    "expires": {"type": "number", "description": "Unix time in seconds; none: a session cookie"},
    "httpOnly": {"type": "boolean"},
    "secure": {"type": "boolean"},
    "sameSite": {"type": "string", "enum": list(SAME_SITE)},
}
STATE_FILE: JsonObject = {
    "type": "string",
    "description": "a storage state JSON file under your roots (relative: to your first root)",
}


def storage_key(description: str) -> JsonObject:
    return {"type": "string", "description": description}


def needs_name(tool: str, own: JsonObject) -> None:
    if not isinstance(own.get("name"), str) or not own["name"]:
        raise InvalidRequest(f"{tool} needs `name`: the cookie's name")


def needs_cookie(tool: str, own: JsonObject) -> None:
    needs_name(tool, own)
    if not isinstance(own.get("value"), str):
        raise InvalidRequest(f"{tool} needs `value`: the cookie's value, a string")
    for name in ("domain", "path"):
        if name in own and not isinstance(own[name], str):
            raise InvalidRequest(f"{tool}'s `{name}` must be a string")
    expires = own.get("expires")
    if expires is not None and (isinstance(expires, bool) or not isinstance(expires, (int, float)) or expires < 0):
        raise InvalidRequest(f"{tool}'s `expires` must be a Unix time in seconds")
    for name in ("httpOnly", "secure"):
        if name in own and not isinstance(own[name], bool):
            raise InvalidRequest(f"{tool}'s `{name}` must be true or false")
    if "sameSite" in own and own["sameSite"] not in SAME_SITE:
        raise InvalidRequest(f"{tool}'s `sameSite` must be {', '.join(SAME_SITE)}")


def needs_key(with_value: bool = False) -> Check:
    def check(tool: str, own: JsonObject) -> None:
        if not isinstance(own.get("key"), str):
            raise InvalidRequest(f"{tool} needs `key`: the item's key")
        if with_value and not isinstance(own.get("value"), str):
            raise InvalidRequest(f"{tool} needs `value`: the item's value, a string")

    return check


def needs_state_file(tool: str, own: JsonObject) -> None:
    if not isinstance(own.get("filename"), str) or not own["filename"].strip():
        raise InvalidRequest(f"{tool} needs `filename`: the storage state JSON file to restore")
