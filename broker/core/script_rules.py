"""The person's script library (browser_scripts, browser_run_script): the rules of a script's name
and description, and the checks a call passes before any file is read.

A script is a ``.js`` file of the person's scripts folder (``browser-mcp scripts path``) holding one
function expression, ``(args, element) => ...``, run in the client's tab as browser_evaluate runs
a function; the first line, when it is a ``//`` comment, is its description. The person wrote
these, so a call runs without asking them; the client names a script and never sends code: the
broker reads the file (:mod:`broker.scripts_library`) and sends its source with the call.

A name is NFKC-normalized and then checked, so that a name in other Unicode letters that reads as
``..`` or a separator once normalized is refused like those: :func:`script_name`.
"""

from __future__ import annotations

import unicodedata

from .errors import InvalidRequest, InvalidScriptName
from .messages import JsonObject

__all__ = [
    "ACTIONS",
    "MAX_NAME",
    "MAX_SCRIPT_BYTES",
    "MAX_SCRIPTS",
    "SCRIPT_ARGS",
    "SCRIPT_NAME",
    "SUFFIX",
    "description_of",
    "needs_no_arguments",
    "needs_script",
    "script_name",
]

# The wire's names of the library's tools, which serve --no-scripts turns off.
ACTIONS = frozenset({"scripts", "run_script"})
SUFFIX = ".js"
MAX_NAME = 64
# The largest script sent to a page, and the most scripts a listing names.
MAX_SCRIPT_BYTES = 256 * 1024
MAX_SCRIPTS = 500
# The arguments only the broker gives the browser: a client's are refused.
BROKER_ONLY = ("source", "changed", "scripts", "folder")
_SEPARATORS = ("/", "\\", "\0")

SCRIPT_NAME: JsonObject = {"type": "string", "description": "as browser_scripts lists it"}
SCRIPT_ARGS: JsonObject = {"type": "object", "description": "the script's first argument"}


def script_name(given: object) -> str:
    """The script's name, NFKC-normalized, once it passes every rule of a file name in the folder.

    Raises:
        InvalidScriptName: naming the rule it breaks.
    """
    if not isinstance(given, str) or not given:
        raise InvalidScriptName("a script's name must be a non-empty string, as browser_scripts lists it")
    name = unicodedata.normalize("NFKC", given)
    if name.endswith(SUFFIX):
        name = name[: -len(SUFFIX)]
    if any(separator in name for separator in _SEPARATORS):
        raise InvalidScriptName(
            f"script name {given!r} holds a path separator: a script is a file of the folder itself"
        )
    if ".." in name:
        raise InvalidScriptName(f"script name {given!r} holds '..': a script is a file of the folder")
    if name.startswith("."):
        raise InvalidScriptName(f"script name {given!r} starts with a dot: hidden files are not scripts")
    if len(name) > MAX_NAME:
        raise InvalidScriptName(f"script name {given!r} is longer than {MAX_NAME} characters")
    if not name.strip() or not name.isprintable():
        raise InvalidScriptName(f"script name {given!r} holds control characters or only spaces")
    return name


def description_of(source: str) -> str:
    """A script's description: its first line's ``//`` comment (or ``/* ... */`` one), else ``""``."""
    first = source.lstrip("\ufeff").lstrip().split("\n", 1)[0].strip()
    if first.startswith("//"):
        return first[2:].strip()
    if first.startswith("/*"):
        return first[2:].split("*/", 1)[0].strip(" *")
    return ""


def _refuse_broker_only(tool: str, own: JsonObject) -> None:
    given = [name for name in BROKER_ONLY if name in own]
    if given:
        raise InvalidRequest(
            f"{tool} takes no {', '.join(f'`{name}`' for name in given)}: the broker reads the person's"
            " scripts from their folder itself; name one with `name`"
        )


def needs_no_arguments(tool: str, own: JsonObject) -> None:
    """browser_scripts: nothing of the broker's own given by the client."""
    _refuse_broker_only(tool, own)


def needs_script(tool: str, own: JsonObject) -> None:
    """browser_run_script: a name that passes :func:`script_name` (normalized in place), an object
    of arguments, and no source of the client's.

    Raises:
        InvalidScriptName: the name breaks a rule.
        InvalidRequest: a ``source`` (or another argument only the broker gives), or ``args`` not an object.
    """
    _refuse_broker_only(tool, own)
    if "name" not in own:
        raise InvalidRequest(f"{tool} needs `name`: a script of the person's, as browser_scripts lists it")
    own["name"] = script_name(own["name"])
    if "args" in own and not isinstance(own["args"], dict):
        raise InvalidRequest(f"{tool}'s `args` must be an object: the script's first argument")
