"""The built-in browser tools, each declared once (:class:`BuiltinTool`), and how a call's
arguments become an action's.

Every page gets these tools, whether or not it declares tools of its own. Names and arguments
follow Playwright MCP's (``browser_snapshot``, ``browser_click`` ...), so prompts and habits
written for it carry over; ``browser_navigate_forward`` and ``browser_reload`` are ours. The
extension carries each one out as a ``browserAction`` named without the ``browser_`` prefix
(:attr:`BuiltinTool.action`); ``extension/actions/tools.js`` declares the same tools for the
extension, and ``tests/extension/test_tool_declarations.py`` holds the two to each other.

A declaration is everything the broker knows of a tool: its MCP listing (title, description,
parameters, and the hints clients and the person's approvals read: read-only, destructive), its
capability group as Playwright MCP groups its tools (``core``, listed by default; ``vision``, the
mouse at a point), the page drivers that carry it out, and the checks its arguments pass before
any browser hears of the call. Which browsers can, and whose tab it may act on, is
:mod:`broker.core.state`'s to decide.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import PurePosixPath
from typing import Any, Protocol

import attrs

from .arguments import page_url
from .dom_rules import MAX_CHARS, MAX_RESULTS, OUTER, PROPERTIES, WHAT, needs_parts, needs_selector
from .errors import InvalidRequest
from .messages import JsonObject
from .script_rules import SCRIPT_ARGS, SCRIPT_NAME, needs_no_arguments, needs_script
from .snapshot_find import finder
from .snapshots import DIFF_LEGEND
from .storage_rules import COOKIE_FIELDS, STATE_FILE, needs_cookie, needs_key, needs_name, needs_state_file, storage_key
from .testing_rules import ITEMS, VALUE, VALUE_TYPE, needs_items, needs_strings, needs_value

__all__ = [
    "ACTIONS",
    "DEFAULT_CAPS",
    "DRIVERS",
    "GROUPS",
    "NAMED",
    "PREFIX",
    "TOOLS",
    "BuiltinTool",
    "capabilities",
    "tool_definitions",
]

PREFIX = "browser_"
# The page drivers (extension/actions/): DevTools for Chromium, WebExtension for Firefox.
DRIVERS = ("devtools", "webextension")
# The capability groups, as Playwright MCP names them (its --caps): core is listed to every client,
# the others to a client that asks for them (browser-mcp mcp --caps vision,pdf).
GROUPS = ("core", "vision", "pdf", "devtools", "storage", "network", "testing", "dom", "scripts")
DEFAULT_CAPS = frozenset({"core"})
# Playwright MCP's other name for its devtools group.
_CAP_ALIASES = {"tracing": "devtools"}

# A check of a call's own arguments (those beside `tab`), given the tool's MCP name for its message.
# It may rename an older spelling in place.
ArgumentCheck = Callable[[str, JsonObject], None]

# Every tool has it, so it is kept short: the server's instructions say which tab is the current one.
_TAB = {"type": ["integer", "string"], "description": "12 or b2:12; default: your current tab"}
_ELEMENT = {"type": "string", "description": "the element, in words"}
_TARGET = {"type": "string", "description": "its ref from a snapshot (e7)"}
# Where a tool has it, the broker writes the answer to this file (under the client's output folder)
# and answers with its path: the extension never hears of it.
_FILENAME = {"type": "string", "description": "save the answer to this file instead, and name it"}
_MODIFIERS = {
    "type": "array",
    "items": {"type": "string", "enum": ["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]},
    "description": "keys held down during the click",
}


_DRAG_TARGETS = ("startTarget", "endTarget")
_DRAG_POINTS = ("startX", "startY", "endX", "endY")
_WHEEL = ("deltaX", "deltaY")
_X = {"type": "number", "description": "CSS pixels from the viewport's left edge"}
_Y = {"type": "number", "description": "CSS pixels from the viewport's top edge"}
_BUTTON = {"type": "string", "enum": ["left", "right", "middle"], "description": "default left"}


def _schema(**properties: Any) -> JsonObject:
    return {"type": "object", "properties": {"tab": _TAB, **properties}}


def _needing(required: tuple[str, ...], **properties: Any) -> JsonObject:
    return {**_schema(**properties), "required": list(required)}


class Listed(Protocol):
    """What an MCP listing of a tool is made of: a built-in tool's, or a browser-wide one's."""

    @property
    def name(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def parameters(self) -> JsonObject: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def destructive(self) -> bool: ...


def listing(tool: Listed, *, open_world: bool) -> JsonObject:
    """The MCP tool, in wire form: ``openWorldHint`` says whether it acts on pages of the web (left out
    when it does: MCP's default, and one line fewer of every tool a client reads)."""
    annotations: JsonObject = {"readOnlyHint": tool.read_only}
    if not open_world:
        annotations["openWorldHint"] = False
    if tool.destructive:
        annotations["destructiveHint"] = True
    return {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.parameters,
        "annotations": annotations,
    }


@attrs.frozen(eq=False)
class BuiltinTool:
    """One built-in browser tool: all the broker says of it, and the checks of its arguments."""

    name: str
    title: str
    description: str
    parameters: JsonObject
    read_only: bool = False
    # Asked of the person before it runs (their JavaScript, the person's files): destructiveHint.
    destructive: bool = False
    group: str = attrs.field(default="core", validator=attrs.validators.in_(GROUPS))
    drivers: tuple[str, ...] = DRIVERS
    checks: tuple[ArgumentCheck, ...] = ()
    # Its `paths` are files from disk, checked and read (broker/uploads.py) before it is sent.
    uploads: bool = False
    # Its `filename` is a file the broker reads (as an upload's, broker/state_files.py), not one it writes.
    reads_file: bool = False

    @property
    def action(self) -> str:
        """The wire's name of it: a ``browserAction``'s ``action``."""
        return self.name[len(PREFIX) :]

    def definition(self) -> JsonObject:
        """The MCP tool, in wire form."""
        return listing(self, open_world=True)

    def arguments(self, args: JsonObject) -> tuple[Any, JsonObject]:
        """Split a call's arguments into its ``tab`` (None: the current tab) and the action's own.

        Older Playwright MCP spells ``target`` as ``ref``; both are taken.

        Raises:
            InvalidRequest: an element the action needs is not named, a dialog's answer is not
                given, a point is not numbers, or browser_navigate names no page a client may open
                (:func:`broker.core.arguments.page_url`).
        """
        own = {name: value for name, value in args.items() if name not in ("tab", "ref")}
        if "target" not in own and "ref" in args:
            own["target"] = args["ref"]
        for check in self.checks:
            check(self.name, own)
        return args.get("tab"), own


def _needs_target(tool: str, own: JsonObject) -> None:
    if not isinstance(own.get("target"), str):
        raise InvalidRequest(f"{tool} needs `target`: the element's ref from a browser_snapshot of the tab, such as e7")


def _needs_text_or_regex(tool: str, own: JsonObject) -> None:
    finder(own)


def _needs_answer(tool: str, own: JsonObject) -> None:
    if not isinstance(own.get("accept"), bool):
        raise InvalidRequest(f"{tool} needs `accept`: true to accept the dialog, false to dismiss it")


def _needs_url(tool: str, own: JsonObject) -> None:
    if not isinstance(own.get("url"), str) or not own["url"]:
        raise InvalidRequest(f"{tool} needs `url`: the http: or https: address to load")
    page_url(own["url"])


# Older Playwright MCP names browser_drag's refs startRef and endRef.
_OLD_DRAG_NAMES = {"startRef": "startTarget", "endRef": "endTarget"}


def _needs_two_elements(tool: str, own: JsonObject) -> None:
    for old, new in _OLD_DRAG_NAMES.items():
        if old in own:
            own.setdefault(new, own.pop(old))
    missing = [name for name in _DRAG_TARGETS if not isinstance(own.get(name), str)]
    if missing:
        raise InvalidRequest(
            f"{tool} needs {' and '.join(f'`{name}`' for name in missing)}: the refs of the element to drag"
            " and of the one to drop it on, from a browser_snapshot of the tab"
        )
    if own["startTarget"] == own["endTarget"]:
        raise InvalidRequest(
            f"{tool} needs two different elements: startTarget and endTarget are both {own['endTarget']}"
        )


def _needs_numbers(*names: str) -> ArgumentCheck:
    """The pointer's points and the wheel's turn: finite numbers."""

    def check(tool: str, own: JsonObject) -> None:
        wrong = [
            name
            for name in names
            if isinstance(own.get(name), bool)
            or not isinstance(own.get(name), (int, float))
            # An int is finite however large (and too large for math.isfinite).
            or (isinstance(own[name], float) and not math.isfinite(own[name]))
        ]
        if wrong:
            raise InvalidRequest(
                f"{tool} needs numbers for {' and '.join(f'`{name}`' for name in wrong)}:"
                " CSS pixels of the tab's viewport, as in its screenshot"
            )

    return check


# browser_emulate_media's features: each the values Playwright MCP takes, or null to clear it.
_MEDIA = {
    "colorScheme": ("light", "dark"),
    "reducedMotion": ("reduce", "no-preference"),
    "forcedColors": ("active", "none"),
    "contrast": ("more", "no-preference"),
    "media": ("screen", "print"),
}


def _media_feature(*values: str) -> JsonObject:
    return {"type": ["string", "null"], "enum": [*values, None], "description": "null clears it"}


def _needs_media_values(tool: str, own: JsonObject) -> None:
    for name, values in _MEDIA.items():
        if name in own and own[name] is not None and own[name] not in values:
            raise InvalidRequest(f"{tool}'s `{name}` must be {', '.join(values)} or null (clears it)")


def _needs_something_to_drop(tool: str, own: JsonObject) -> None:
    paths, data = own.get("paths"), own.get("data")
    if paths is not None and not isinstance(paths, list):
        raise InvalidRequest(f"{tool}'s `paths` must be a list of absolute file paths")
    if data is not None and not (
        isinstance(data, dict) and all(isinstance(value, str) and key for key, value in data.items())
    ):
        raise InvalidRequest(f'{tool}\'s `data` must map MIME types to strings, such as {{"text/plain": "hi"}}')
    if not paths and not data:
        raise InvalidRequest(f"{tool} needs `paths` (files to drop) or `data` (MIME type to text), or both")


# The network tools: a request by its listed number, a route's URL glob, the network's state.
_PARTS = ("request-headers", "request-body", "response-headers", "response-body")
_GLOB = "a URL glob: * any characters but /, ** any characters, {a,b} either (**/api/*)"


def _needs_index(tool: str, own: JsonObject) -> None:
    index = own.get("index")
    if isinstance(index, bool) or not isinstance(index, int) or index < 1:
        raise InvalidRequest(f"{tool} needs `index`: the request's number in browser_network_requests (1, 2 ...)")
    if "part" in own and own["part"] not in _PARTS:
        raise InvalidRequest(f"{tool}'s `part` must be one of {', '.join(_PARTS)}")


def _needs_pattern(tool: str, own: JsonObject) -> None:
    if not isinstance(own.get("pattern"), str) or not own["pattern"]:
        raise InvalidRequest(f"{tool} needs `pattern`: {_GLOB}")


def _needs_state(tool: str, own: JsonObject) -> None:
    if own.get("state") not in ("online", "offline"):
        raise InvalidRequest(f'{tool} needs `state`: "online" or "offline"')


# The video tools: most frames a second and size, a card's or caption's longest show, caption places.
_VIDEO_FPS = 30
_VIDEO_SIZE = 4096
_SHOW_MS = 60_000
_CAPTION_PLACES = ("top-left", "top", "top-right", "bottom-left", "bottom", "bottom-right")


def _is_number(value: object, low: float, high: float) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and low <= value <= high


def _needs_video_options(tool: str, own: JsonObject) -> None:
    # The video is the stop's answer: the broker keeps the start's `filename` for the stop's file.
    if "filename" in own and (
        not isinstance(own["filename"], str) or not PurePosixPath(own["filename"]).name.strip(". ")
    ):
        raise InvalidRequest(f"{tool}'s `filename` must name a file, such as demo.webm")
    size = own.get("size")
    if size is not None and not (
        isinstance(size, dict)
        and set(size) == {"width", "height"}
        and all(_is_number(size[side], 16, _VIDEO_SIZE) for side in ("width", "height"))
    ):
        raise InvalidRequest(f"{tool}'s `size` must be {{width, height}}, each 16 to {_VIDEO_SIZE} pixels")
    if "fps" in own and not _is_number(own["fps"], 1, _VIDEO_FPS):
        raise InvalidRequest(f"{tool}'s `fps` must be a number from 1 to {_VIDEO_FPS}")


def _needs_chapter(tool: str, own: JsonObject) -> None:
    if not isinstance(own.get("title"), str) or not own["title"].strip():
        raise InvalidRequest(f"{tool} needs `title`: the chapter card's title")
    if "description" in own and not isinstance(own["description"], str):
        raise InvalidRequest(f"{tool}'s `description` must be text")
    if "duration" in own and not _is_number(own["duration"], 1, _SHOW_MS):
        raise InvalidRequest(f"{tool}'s `duration` must be 1 to {_SHOW_MS} ms")


def _needs_caption_options(tool: str, own: JsonObject) -> None:
    if "duration" in own and not _is_number(own["duration"], 1, _SHOW_MS):
        raise InvalidRequest(f"{tool}'s `duration` must be 1 to {_SHOW_MS} ms")
    if "position" in own and own["position"] not in _CAPTION_PLACES:
        raise InvalidRequest(f"{tool}'s `position` must be one of {', '.join(_CAPTION_PLACES)}")


TOOLS: tuple[BuiltinTool, ...] = (
    BuiltinTool(
        "browser_snapshot",
        "Page snapshot",
        "The tab's page as an accessibility snapshot: roles, names, text, states, and a [ref=eN] on each"
        " element to act on (f2eN inside frames), kept while it is on the page. Actions answer with what"
        " they changed, so a snapshot after them is rarely needed. A yaml block is the whole page (after"
        f" an action: a first look, or a new page); {DIFF_LEGEND}.",
        _schema(
            target=_TARGET,
            depth={"type": "integer", "minimum": 0, "description": "levels of the tree to show (default all)"},
            changes={
                "type": "boolean",
                "description": "only what changed since your last snapshot of this tab",
            },
            maxChars={
                "type": "integer",
                "minimum": 1,
                "description": "fold a larger page to about this many characters (default 100000); each fold"
                " names the ref that shows it whole",
            },
            filename=_FILENAME,
            boxes={"type": "boolean", "description": "add each element's [box=x,y,width,height], viewport CSS pixels"},
        ),
        read_only=True,
    ),
    BuiltinTool(
        "browser_find",
        "Find on page",
        "The snapshot's lines matching a text or a regex, each under its path with a few lines around:"
        " a ref to act on for a fraction of a whole snapshot.",
        _schema(
            text={"type": "string", "description": "words to find, any case"},
            regex={"type": "string", "description": "a pattern; /pattern/i for any case"},
            filename=_FILENAME,
        ),
        read_only=True,
        checks=(_needs_text_or_regex,),
    ),
    BuiltinTool(
        "browser_click",
        "Click",
        "Click an element of the tab's page, as the person would with the mouse.",
        _schema(
            element=_ELEMENT,
            target=_TARGET,
            doubleClick={"type": "boolean", "description": "click twice"},
            button={"type": "string", "enum": ["left", "right", "middle"], "description": "default left"},
            modifiers=_MODIFIERS,
        ),
        checks=(_needs_target,),
    ),
    BuiltinTool(
        "browser_hover",
        "Hover",
        "Move the mouse over an element of the tab's page.",
        _schema(element=_ELEMENT, target=_TARGET),
        checks=(_needs_target,),
    ),
    BuiltinTool(
        "browser_type",
        "Type text",
        "Type text into an editable element, replacing what it holds.",
        _schema(
            element=_ELEMENT,
            target=_TARGET,
            text={"type": "string"},
            submit={"type": "boolean", "description": "press Enter afterwards"},
            slowly={"type": "boolean", "description": "one key at a time, for pages that react to each key"},
        ),
        checks=(_needs_target,),
    ),
    BuiltinTool(
        "browser_fill_form",
        "Fill form",
        "Fill several form fields at once.",
        _schema(
            fields={
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "the field, in words"},
                        "type": {"type": "string", "enum": ["textbox", "checkbox", "radio", "combobox", "slider"]},
                        "target": _TARGET,
                        "value": {"type": "string", "description": "text; true/false for a checkbox or radio"},
                    },
                    "required": ["name", "type", "value"],
                },
            }
        ),
    ),
    BuiltinTool(
        "browser_select_option",
        "Select option",
        "Choose one or more options of a select element.",
        _schema(element=_ELEMENT, target=_TARGET, values={"type": "array", "items": {"type": "string"}}),
        checks=(_needs_target,),
    ),
    BuiltinTool(
        "browser_press_key",
        "Press key",
        "Press a key (Enter, ArrowDown, a, ...) on the tab's focused element.",
        _schema(key={"type": "string"}),
    ),
    BuiltinTool(
        "browser_wait_for",
        "Wait for",
        "Wait for a number of seconds, or until a text appears or goes away on the tab's page.",
        _schema(
            time={"type": "number", "description": "seconds"},
            text={"type": "string"},
            textGone={"type": "string"},
        ),
        read_only=True,
    ),
    BuiltinTool(
        "browser_navigate",
        "Navigate",
        "Load a URL in the tab.",
        _schema(url={"type": "string"}),
        checks=(_needs_url,),
    ),
    BuiltinTool("browser_navigate_back", "Go back", "Go back in the tab's history.", _schema()),
    BuiltinTool("browser_navigate_forward", "Go forward", "Go forward in the tab's history.", _schema()),
    BuiltinTool("browser_reload", "Reload", "Reload the tab's page.", _schema()),
    BuiltinTool(
        "browser_take_screenshot",
        "Screenshot",
        "A picture of the tab's page (in view, whole, or one element), at most 1568 pixels a side,"
        " 1.15 megapixels and 700 KB: a larger one is scaled down, saying by what factor. To act,"
        " browser_snapshot is better.",
        _schema(
            type={"type": "string", "enum": ["png", "jpeg", "webp"], "description": "default png"},
            fullPage={"type": "boolean"},
            element=_ELEMENT,
            target=_TARGET,
            scale={"type": "string", "enum": ["css", "device"], "description": "pixels per CSS pixel; default css"},
            filename=_FILENAME,
        ),
        read_only=True,
    ),
    BuiltinTool(
        "browser_console_messages",
        "Console messages",
        "What the tab's page logged to its console since it loaded, uncaught errors included.",
        _schema(
            level={"type": "string", "enum": ["error", "warning", "info", "debug"], "description": "at least"},
            all={"type": "boolean", "description": "also what earlier pages of the tab logged"},
            filename=_FILENAME,
        ),
        read_only=True,
    ),
    BuiltinTool(
        "browser_network_requests",
        "Network requests",
        "The requests the tab's page made since it loaded, WebSockets too.",
        _schema(
            filter={"type": "string", "description": "only URLs matching this regular expression"},
            static={"type": "boolean", "description": "include images, fonts, scripts and styles"},
            filename=_FILENAME,
        ),
        read_only=True,
    ),
    BuiltinTool(
        "browser_evaluate",
        "Evaluate JavaScript",
        "Run a JavaScript function in the tab's page and return its result: `() => document.title`,"
        " or `(element) => element.textContent` with `target`. It acts as the person's logged-in page.",
        _schema(function={"type": "string"}, element=_ELEMENT, target=_TARGET, filename=_FILENAME),
        destructive=True,
    ),
    BuiltinTool(
        "browser_handle_dialog",
        "Handle a dialog",
        "Answer the dialog (alert, confirm, prompt, leave-page) the tab's page opened. A call during"
        " which a dialog opens ends by naming it, and the tab takes nothing else until it is answered.",
        {
            **_schema(
                accept={"type": "boolean", "description": "accept (OK) or dismiss (Cancel) the dialog"},
                promptText={"type": "string", "description": "the text to answer a prompt dialog with"},
            ),
            "required": ["accept"],
        },
        checks=(_needs_answer,),
    ),
    # The pointer: drag and drop between elements, and the mouse at a point of the viewport.
    BuiltinTool(
        "browser_drag",
        "Drag mouse",
        "Drag one element of the tab's page onto another with the mouse, as the person would: HTML5"
        " drag and drop (draggable) and lists sorted by pointer events alike.",
        _needing(
            _DRAG_TARGETS,
            startElement=_ELEMENT,
            startTarget={**_TARGET, "description": "the dragged element's ref from a browser_snapshot"},
            endElement=_ELEMENT,
            endTarget={**_TARGET, "description": "the ref of the element to drop it on"},
        ),
        checks=(_needs_two_elements,),
    ),
    BuiltinTool(
        "browser_mouse_click_xy",
        "Click",
        "Click the mouse at a point of the tab's viewport, in CSS pixels from its top left corner:"
        " the pixels of a browser_take_screenshot image of the viewport (one of a large viewport is"
        " smaller, and its result gives the factor to multiply by). For what has no ref, such as a"
        " canvas, a map or a chart.",
        _needing(
            ("x", "y"),
            x=_X,
            y=_Y,
            button=_BUTTON,
            clickCount={"type": "integer", "minimum": 1, "maximum": 3, "description": "default 1"},
            delay={"type": "number", "minimum": 0, "maximum": 5000, "description": "ms between press and release"},
        ),
        group="vision",
        checks=(_needs_numbers("x", "y"),),
    ),
    BuiltinTool(
        "browser_mouse_move_xy",
        "Move mouse",
        "Move the mouse to a point of the tab's viewport, in CSS pixels (a screenshot's pixels),"
        " holding the buttons browser_mouse_down pressed.",
        _needing(("x", "y"), x=_X, y=_Y),
        group="vision",
        checks=(_needs_numbers("x", "y"),),
    ),
    BuiltinTool(
        "browser_mouse_drag_xy",
        "Drag mouse",
        "Press the left button at one point of the tab's viewport, move to another and release it,"
        " in CSS pixels (a screenshot's pixels).",
        _needing(_DRAG_POINTS, startX=_X, startY=_Y, endX=_X, endY=_Y),
        group="vision",
        checks=(_needs_numbers(*_DRAG_POINTS),),
    ),
    BuiltinTool(
        "browser_mouse_down",
        "Press mouse down",
        "Press a mouse button where the mouse is (browser_mouse_move_xy put it).",
        _schema(button=_BUTTON),
        group="vision",
        drivers=("devtools",),
    ),
    BuiltinTool(
        "browser_mouse_up",
        "Press mouse up",
        "Release a mouse button where the mouse is.",
        _schema(button=_BUTTON),
        group="vision",
        drivers=("devtools",),
    ),
    BuiltinTool(
        "browser_mouse_wheel",
        "Scroll mouse wheel",
        "Turn the mouse wheel where the mouse is, by CSS pixels (positive: down and right).",
        _needing(_WHEEL, deltaX={"type": "number"}, deltaY={"type": "number"}),
        group="vision",
        drivers=("devtools",),
        checks=(_needs_numbers(*_WHEEL),),
    ),
    # Files from disk into the file chooser a click opened.
    BuiltinTool(
        "browser_file_upload",
        "Upload files",
        "Answer the file chooser the last action opened (an <input type=file> clicked) with files from"
        " disk, sent to the page as the person's own: regular files under your MCP roots (for"
        " `browser-mcp mcp` without roots, the folder it was started in) or under a folder the broker"
        " was started with (serve --upload-dir). Without paths, or with an empty list, the chooser is"
        " cancelled.",
        _schema(
            paths={
                "type": "array",
                "items": {"type": "string"},
                "description": "the absolute paths of the files to upload, one or several; none cancels the chooser",
            }
        ),
        destructive=True,
        uploads=True,
    ),
    # Page effects: media emulation, drops from outside the page, highlights.
    BuiltinTool(
        "browser_emulate_media",
        "Emulate media",
        "Override CSS media features in this tab alone; omitted ones stay as they are.",
        _schema(
            colorScheme=_media_feature(*_MEDIA["colorScheme"]),
            reducedMotion=_media_feature(*_MEDIA["reducedMotion"]),
            forcedColors=_media_feature(*_MEDIA["forcedColors"]),
            contrast=_media_feature(*_MEDIA["contrast"]),
            media=_media_feature(*_MEDIA["media"]),
        ),
        drivers=("devtools",),
        checks=(_needs_media_values,),
    ),
    BuiltinTool(
        "browser_drop",
        "Drop files or data",
        "Drop files from disk (as browser_file_upload takes them) and/or typed data onto an element,"
        " as if dragged in from outside the page.",
        _needing(
            ("target",),
            element=_ELEMENT,
            target=_TARGET,
            paths={"type": "array", "items": {"type": "string"}, "description": "absolute paths of files"},
            data={
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "MIME type to text, e.g. text/plain",
            },
        ),
        destructive=True,
        uploads=True,
        checks=(_needs_target, _needs_something_to_drop),
    ),
    BuiltinTool(
        "browser_highlight",
        "Highlight element",
        "Draw a box over an element, following it, until hidden.",
        _needing(
            ("target",),
            element=_ELEMENT,
            target=_TARGET,
            style={"type": "string", "description": "extra CSS for the box"},
        ),
        read_only=True,
        group="devtools",
        checks=(_needs_target,),
    ),
    BuiltinTool(
        "browser_hide_highlight",
        "Hide highlight",
        "Remove an element's highlight, or all of them.",
        _schema(element=_ELEMENT, target={**_TARGET, "description": "the highlighted element's ref; none: all"}),
        read_only=True,
        group="devtools",
    ),
    # Captured to files: the page as a PDF, a performance trace.
    BuiltinTool(
        "browser_pdf_save",
        "Save as PDF",
        "Print the tab's page to a PDF file.",
        _schema(filename=_FILENAME),
        read_only=True,
        group="pdf",
        drivers=("devtools",),
    ),
    BuiltinTool(
        "browser_start_tracing",
        "Start tracing",
        "Start recording a performance trace of the tab.",
        _schema(),
        read_only=True,
        group="devtools",
        drivers=("devtools",),
    ),
    BuiltinTool(
        "browser_stop_tracing",
        "Stop tracing",
        "Stop the tab's trace and save it as JSON for Perfetto.",
        _schema(),
        read_only=True,
        group="devtools",
        drivers=("devtools",),
    ),
    # The network: one request's details (core), and the network group: routes, offline.
    BuiltinTool(
        "browser_network_request",
        "Network request",
        "One request's headers and bodies (a WebSocket's frames), by its number in browser_network_requests.",
        _needing(
            ("index",),
            index={"type": "integer", "minimum": 1, "description": "its number in browser_network_requests"},
            part={"type": "string", "enum": list(_PARTS), "description": "only this part"},
            filename=_FILENAME,
        ),
        read_only=True,
        checks=(_needs_index,),
    ),
    BuiltinTool(
        "browser_route",
        "Mock requests",
        "Answer or alter the tab's requests whose URL matches a glob (* within a path segment, ** across).",
        _needing(
            ("pattern",),
            pattern={"type": "string", "description": "URL glob, such as **/api/*"},
            status={"type": "number", "description": "answer with this status (default 200)"},
            body={"type": "string", "description": "answer with this body"},
            contentType={"type": "string", "description": "the answer's Content-Type"},
            headers={"type": "array", "items": {"type": "string"}, "description": '"Name: Value" headers to add'},
            removeHeaders={"type": "string", "description": "request headers to drop, comma-separated"},
        ),
        destructive=True,
        group="network",
        checks=(_needs_pattern,),
    ),
    BuiltinTool(
        "browser_route_list",
        "List routes",
        "The routes set on the tab.",
        _schema(),
        read_only=True,
        group="network",
    ),
    BuiltinTool(
        "browser_unroute",
        "Remove routes",
        "Remove the tab's routes of a pattern, or all of them.",
        _schema(pattern={"type": "string", "description": "default: all"}),
        group="network",
    ),
    BuiltinTool(
        "browser_network_state_set",
        "Set network state",
        "Take the tab offline, or back online.",
        _needing(("state",), state={"type": "string", "enum": ["online", "offline"]}),
        group="network",
        checks=(_needs_state,),
    ),
    # The storage group: the person's cookies and site storage, on the sites of the client's own
    # tabs, once the person turns them on (extension/actions/storage_sites.js).
    BuiltinTool(
        "browser_cookie_list",
        "List cookies",
        "Cookies of your tabs' sites; HttpOnly values only if the person allows.",
        _schema(domain=storage_key("only this domain"), path=storage_key("only this path")),
        read_only=True,
        group="storage",
    ),
    BuiltinTool(
        "browser_cookie_get",
        "Get cookie",
        "One cookie of your tabs' sites, by name.",
        _needing(("name",), name=COOKIE_FIELDS["name"]),
        read_only=True,
        group="storage",
        checks=(needs_name,),
    ),
    BuiltinTool(
        "browser_cookie_set",
        "Set cookie",
        "Set a cookie on a site of your tabs (default: the tab's).",
        _needing(("name", "value"), **COOKIE_FIELDS),
        destructive=True,
        group="storage",
        checks=(needs_cookie,),
    ),
    BuiltinTool(
        "browser_cookie_delete",
        "Delete cookie",
        "Delete the cookies of a name on your tabs' sites.",
        _needing(("name",), name=COOKIE_FIELDS["name"]),
        destructive=True,
        group="storage",
        checks=(needs_name,),
    ),
    BuiltinTool(
        "browser_cookie_clear",
        "Clear cookies",
        "Delete the cookies of your tabs' sites (no others).",
        _schema(),
        destructive=True,
        group="storage",
    ),
    *(
        tool
        for area, store in (("localstorage", "localStorage"), ("sessionstorage", "sessionStorage"))
        for tool in (
            BuiltinTool(
                f"browser_{area}_list",
                f"List {store}",
                f"The tab page's {store} items.",
                _schema(),
                read_only=True,
                group="storage",
            ),
            BuiltinTool(
                f"browser_{area}_get",
                f"Get {store} item",
                f"One {store} item of the tab's page.",
                _needing(("key",), key=storage_key("item key")),
                read_only=True,
                group="storage",
                checks=(needs_key(),),
            ),
            BuiltinTool(
                f"browser_{area}_set",
                f"Set {store} item",
                f"Set a {store} item of the tab's page.",
                _needing(("key", "value"), key=storage_key("item key"), value=storage_key("item value")),
                destructive=True,
                group="storage",
                checks=(needs_key(with_value=True),),
            ),
            BuiltinTool(
                f"browser_{area}_delete",
                f"Delete {store} item",
                f"Delete a {store} item of the tab's page.",
                _needing(("key",), key=storage_key("item key")),
                destructive=True,
                group="storage",
                checks=(needs_key(),),
            ),
            BuiltinTool(
                f"browser_{area}_clear",
                f"Clear {store}",
                f"Delete the tab page's {store} items.",
                _schema(),
                destructive=True,
                group="storage",
            ),
        )
    ),
    BuiltinTool(
        "browser_storage_state",
        "Save storage state",
        "Your tabs' sites' cookies and localStorage, saved as a storage state JSON file.",
        _schema(filename=_FILENAME),
        read_only=True,
        group="storage",
    ),
    BuiltinTool(
        "browser_set_storage_state",
        "Restore storage state",
        "Replace your tabs' sites' cookies and localStorage with a storage state file's.",
        _needing(("filename",), filename=STATE_FILE),
        destructive=True,
        group="storage",
        checks=(needs_state_file,),
        reads_file=True,
    ),
    # The testing group: checks of what the page shows, and Playwright locators for tests.
    BuiltinTool(
        "browser_verify_element_visible",
        "Verify element visible",
        "Check that an element of this role and name shows.",
        _needing(
            ("role", "accessibleName"),
            role={"type": "string", "description": "as the snapshot shows it (button)"},
            accessibleName={"type": "string", "description": "its name in the snapshot"},
        ),
        read_only=True,
        group="testing",
        checks=(needs_strings("role", "accessibleName"),),
    ),
    BuiltinTool(
        "browser_verify_text_visible",
        "Verify text visible",
        "Check that the page shows this text.",
        _needing(("text",), text={"type": "string", "description": "as the snapshot shows it"}),
        read_only=True,
        group="testing",
        checks=(needs_strings("text"),),
    ),
    BuiltinTool(
        "browser_verify_list_visible",
        "Verify list visible",
        "Check that a list shows these items.",
        _needing(("element", "target", "items"), element=_ELEMENT, target=_TARGET, items=ITEMS),
        read_only=True,
        group="testing",
        checks=(_needs_target, needs_items),
    ),
    BuiltinTool(
        "browser_verify_value",
        "Verify value",
        "Check a form field's value.",
        _needing(
            ("type", "element", "target", "value"), type=VALUE_TYPE, element=_ELEMENT, target=_TARGET, value=VALUE
        ),
        read_only=True,
        group="testing",
        checks=(_needs_target, needs_value),
    ),
    BuiltinTool(
        "browser_generate_locator",
        "Generate locator",
        "A Playwright locator that finds this element alone.",
        _needing(("target",), element=_ELEMENT, target=_TARGET),
        read_only=True,
        group="testing",
        checks=(_needs_target,),
    ),
    # The person's annotations (issue 42): boxes and notes drawn on the client's tab.
    BuiltinTool(
        "browser_annotate",
        "Annotate the page",
        "The person draws boxes with notes on the page; answers the marked screenshot, the snapshot, the notes.",
        _schema(),
        read_only=True,
        group="devtools",
    ),
    # Recording the person's own actions as Playwright code (issue 42), with their consent.
    BuiltinTool(
        "browser_start_recording",
        "Start recording the person's actions",
        "Ask the person to show a flow in the tab; records their actions as Playwright code.",
        _schema(),
        read_only=True,
        group="devtools",
    ),
    BuiltinTool(
        "browser_stop_recording",
        "Stop recording the person's actions",
        "End the tab's recording; answers the Playwright code of what the person did.",
        _schema(),
        read_only=True,
        group="devtools",
    ),
    # The video of a tab (issue 42): a WebM of its frames, with chapter cards and action captions.
    BuiltinTool(
        "browser_start_video",
        "Start video",
        "Start recording a WebM video of the tab, background or not.",
        _schema(
            filename={"type": "string", "description": "name the video's file after this"},
            size={
                "type": "object",
                "properties": {"width": {"type": "number"}, "height": {"type": "number"}},
                "required": ["width", "height"],
                "description": "scale frames to this, in pixels",
            },
            fps={"type": "number", "description": f"most frames a second, 1 to {_VIDEO_FPS} (default 25)"},
        ),
        read_only=True,
        group="devtools",
        checks=(_needs_video_options,),
    ),
    BuiltinTool(
        "browser_stop_video",
        "Stop video",
        "Stop the tab's video and save it as WebM.",
        _schema(),
        read_only=True,
        group="devtools",
    ),
    BuiltinTool(
        "browser_video_chapter",
        "Video chapter",
        "Show a title card over the video for a moment.",
        _needing(
            ("title",),
            title={"type": "string", "description": "the card's title"},
            description={"type": "string", "description": "a line under it"},
            duration={"type": "number", "description": "ms it shows (default 2000)"},
        ),
        read_only=True,
        group="devtools",
        checks=(_needs_chapter,),
    ),
    BuiltinTool(
        "browser_video_show_actions",
        "Show actions in video",
        "Caption each later action of yours in the tab's video.",
        _schema(
            duration={"type": "number", "description": "ms each caption shows (default 1000)"},
            position={"type": "string", "enum": list(_CAPTION_PLACES), "description": "default top-right"},
        ),
        read_only=True,
        group="devtools",
        checks=(_needs_caption_options,),
    ),
    BuiltinTool(
        "browser_video_hide_actions",
        "Hide actions in video",
        "Stop captioning actions in the tab's video.",
        _schema(),
        read_only=True,
        group="devtools",
    ),
    # The dom group (issue 43): the page as text and HTML, and the DOM looked into, read-only.
    BuiltinTool(
        "browser_get_text",
        "Page text",
        "The readable text of the page or an element, as Markdown (headings, lists, links, tables).",
        _schema(
            element=_ELEMENT, target={**_TARGET, "description": "its ref (e7); default: the page"}, maxChars=MAX_CHARS
        ),
        read_only=True,
        group="dom",
    ),
    BuiltinTool(
        "browser_get_html",
        "Element HTML",
        "The HTML of an element, or of the page; password values blanked.",
        _schema(
            element=_ELEMENT,
            target={**_TARGET, "description": "its ref (e7); default: the page"},
            maxChars=MAX_CHARS,
            outer=OUTER,
        ),
        read_only=True,
        group="dom",
    ),
    BuiltinTool(
        "browser_inspect",
        "Inspect element",
        "An element's attributes, computed styles, box (in view, covered), state or form fields.",
        _needing(("target", "what"), element=_ELEMENT, target=_TARGET, what=WHAT, properties=PROPERTIES),
        read_only=True,
        group="dom",
        checks=(_needs_target, needs_parts),
    ),
    BuiltinTool(
        "browser_query",
        "Query selector",
        "The elements a CSS selector matches (open shadow roots too), each with its ref, role, name and text.",
        _needing(("selector",), selector={"type": "string", "description": "CSS selector"}, maxResults=MAX_RESULTS),
        read_only=True,
        group="dom",
        checks=(needs_selector,),
    ),
    # What a web app did (issue 43): its web vitals and an accessibility audit (axe-core).
    BuiltinTool(
        "browser_performance",
        "Web vitals",
        "The page's Core Web Vitals and load timings, with the elements behind them.",
        _schema(),
        read_only=True,
        group="devtools",
    ),
    BuiltinTool(
        "browser_a11y_audit",
        "Accessibility audit",
        "An axe-core audit of the page or an element: each broken rule, its impact and its elements' refs.",
        _schema(element=_ELEMENT, target=_TARGET),
        read_only=True,
        group="devtools",
    ),
    # The person's script library and page info (issue 43): scripts the person keeps, run unasked.
    BuiltinTool(
        "browser_scripts",
        "List the person's scripts",
        "The scripts the person keeps for you to run, each with its description.",
        _schema(),
        read_only=True,
        group="scripts",
        checks=(needs_no_arguments,),
    ),
    BuiltinTool(
        "browser_run_script",
        "Run a script of the person's",
        "Run one of the person's scripts in the tab, as `(args, element)`; answers its JSON result.",
        _needing(("name",), name=SCRIPT_NAME, args=SCRIPT_ARGS, element=_ELEMENT, target=_TARGET),
        group="scripts",
        checks=(needs_script,),
    ),
    BuiltinTool(
        "browser_page_info",
        "Page info",
        "The page's title, language, canonical URL, meta description and robots, social cards, icon and feeds.",
        _schema(),
        read_only=True,
        group="dom",
    ),
)

# By the wire's name (click) and by the MCP name (browser_click).
ACTIONS: Mapping[str, BuiltinTool] = {tool.action: tool for tool in TOOLS}
NAMED: Mapping[str, BuiltinTool] = {tool.name: tool for tool in TOOLS}


def capabilities(asked: str | None) -> frozenset[str]:
    """The groups a client's ``caps`` names (``vision,pdf``; ``all``), ``core`` always among them.

    Raises:
        InvalidRequest: a name that is not a group.
    """
    caps = set(DEFAULT_CAPS)
    for given in (asked or "").replace(" ", ",").split(","):
        name = _CAP_ALIASES.get(given.strip().lower(), given.strip().lower())
        if name == "all":
            caps.update(GROUPS)
        elif name in GROUPS:
            caps.add(name)
        elif name:
            raise InvalidRequest(f"no capability {name!r}: caps takes {', '.join(GROUPS[1:])} or all, comma-separated")
    return frozenset(caps)


def tool_definitions(actions: frozenset[str], caps: frozenset[str] = DEFAULT_CAPS) -> list[JsonObject]:
    """The MCP tools, in wire form, for the actions a connected browser supports, of the groups ``caps``."""
    return [tool.definition() for tool in TOOLS if tool.action in actions and tool.group in caps]
