"""The one cattrs converter and the only JSON calls of the broker.

Everything that crosses a socket or a file goes through here: extension frames are decoded into
:mod:`broker.core.messages` classes (or :class:`~broker.core.errors.InvalidMessage` with readable details),
broker messages are encoded with the ``type`` tag and camelCase keys, and REST bodies and the
discovery file use :func:`loads` / :func:`dumps`.

Decisions:

- Extra keys are allowed (``forbid_extra_keys`` stays off): extensions of other versions add
  fields, and Chromium's native ``getTools()`` returns ``origin`` and ``window`` beside the MCP
  shape. An unknown ``type`` and a field of the wrong type are still errors.
- Primitive fields are checked, not coerced: cattrs would turn ``"12"`` into the tab id 12 and
  ``true`` into 1, hiding a broken peer.
- Optional fields left at their default are omitted from what the broker sends, so an
  extension that never heard of ``sessionId`` sees none.
- orjson does the JSON: it reads the bytes of a frame without decoding them first, and writes
  bytes that go out as a text frame unchanged.
- What orjson writes is copied to bytes of its exact size (:func:`_exact`): orjson hands back its
  working buffer, rounded up and never shrunk (about 1 MB for a 100 KB answer), and an answer or
  frame waiting for a slow reader would hold all of it.
- The ``type`` tag is read and written here rather than by cattrs' ``configure_tagged_union``,
  which builds the functions of all 26 classes when the module loads, a good part of a broker's
  start-up; the converter builds each class's on the first message of its kind.
- Tool arguments a caller sent as JSON (:class:`~broker.core.messages.RawJson`) go into the
  ``callTool`` frame as they came, and parsed ones without a walk through every nested value.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, get_args, get_origin

import attrs
import cattrs
import orjson
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from .core.errors import InvalidMessage
from .core.json_values import Arguments, JsonObject, RawJson, WireError

if TYPE_CHECKING:
    from .core.broker_messages import BrokerMessage, HandshakeMessage, HandshakeReply
    from .core.messages import ExtensionMessage

__all__ = [
    "JSONDecodeError",
    "JSONEncodeError",
    "decode_extension_message",
    "decode_handshake",
    "dumps",
    "dumps_pretty",
    "canonical",
    "dumps_text",
    "encode_broker_message",
    "loads",
    "loads_object",
    "peek_call_id",
    "structure",
    "unstructure",
]

JSONDecodeError = orjson.JSONDecodeError
# Raised when a value cannot be written as JSON: nested deeper than orjson writes (254 levels,
# while it reads 1024), or holding what JSON has no form for.
JSONEncodeError = orjson.JSONEncodeError
T = TypeVar("T")


@attrs.frozen
class _Frames:
    """The ``type`` tag of every frame class, and the classes each side may send by tag."""

    tags: dict[type, str]
    # The class each ``type`` an extension may send names.
    extension: dict[str, type[ExtensionMessage]]
    # The link handshake's, which the adapter answers before the hub hears anything.
    handshake: dict[str, type[HandshakeMessage]]


# Built on the first frame, not on import: a command that only reads or writes JSON need not load
# every message class.
@functools.cache
def _frames() -> _Frames:
    from .core import broker_messages as frames  # noqa: PLC0415
    from .core import messages as wire  # noqa: PLC0415

    tags: dict[type, str] = {
        wire.Connected: "connected",
        wire.TabCreated: "tabCreated",
        wire.TabUpdated: "tabUpdated",
        wire.TabClosed: "tabClosed",
        wire.TabFocused: "tabFocused",
        wire.ToolsChanged: "toolsChanged",
        wire.ToolsDiscovered: "toolsDiscovered",
        wire.ToolResult: "toolResult",
        wire.Ping: "ping",
        wire.Pong: "pong",
        wire.Disconnected: "disconnected",
        wire.PersonEndedSession: "personEndedSession",
        wire.PersonReleasedTab: "personReleasedTab",
        wire.PauseChanged: "pauseChanged",
        wire.ApprovalPending: "approvalPending",
        wire.RequestRefused: "error",
        frames.Connect: "connect",
        frames.OpenTab: "openTab",
        frames.CloseTab: "closeTab",
        frames.FocusTab: "focusTab",
        frames.TabClaimed: "tabClaimed",
        frames.TabReleased: "tabReleased",
        frames.CallTool: "callTool",
        frames.BrowserAction: "browserAction",
        frames.BrowserRequest: "browserRequest",
        frames.DiscoverTools: "discoverTools",
        frames.CancelCall: "cancelCall",
        frames.Disconnect: "disconnect",
        frames.ErrorReply: "error",
        frames.AuthChallenge: "authChallenge",
        frames.AuthProof: "authProof",
        frames.AuthResponse: "authResponse",
        frames.PairChallenge: "pairChallenge",
        frames.PairNonce: "pairNonce",
        frames.PairProof: "pairProof",
        frames.PairKey: "pairKey",
    }
    return _Frames(
        tags,
        {tags[cls]: cls for cls in get_args(wire.ExtensionMessage)},
        {tags[cls]: cls for cls in get_args(frames.HandshakeMessage)},
    )


def __getattr__(name: str) -> Any:
    # TAGS, EXTENSION_CLASSES and HANDSHAKE_CLASSES, for readers of the protocol's tables.
    tables = {"TAGS": "tags", "EXTENSION_CLASSES": "extension", "HANDSHAKE_CLASSES": "handshake"}
    if name in tables:
        return getattr(_frames(), tables[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


class _WrongValue(TypeError):
    """A value this converter's own checks refused; its message says what was wrong."""


def _strict(kind: type | tuple[type, ...], label: str) -> Callable[[Any, type], Any]:
    def check(value: Any, _: type) -> Any:
        # bool is an int subclass; a tab id of `true` is a broken peer, not tab 1.
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise _WrongValue(f"expected {label}, got {type(value).__name__}")
        return value

    return check


def _number(value: Any, _: type) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise _WrongValue(f"expected a number, got {type(value).__name__}")
    return float(value)


def _json_object(value: Any, _: type) -> JsonObject:
    if not isinstance(value, dict):
        raise _WrongValue(f"expected an object, got {type(value).__name__}")
    return value


def _tool_error(value: Any, _: type) -> WireError | str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):
        return converter.structure(value, WireError)
    raise _WrongValue(f"expected null, a string or {{code, message}}, got {type(value).__name__}")


# JavaScript's safe integers: every id the extension sends fits, and larger ones are a broken peer.
MAX_SAFE_INTEGER = 2**53 - 1


def _safe_int(value: Any, kind: type) -> int:
    number: int = _strict(int, "an integer")(value, kind)
    if not -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER:
        raise _WrongValue(f"{number} is outside JavaScript's safe integers")
    return number


converter = cattrs.Converter()
converter.register_structure_hook(int, _safe_int)
converter.register_structure_hook(str, _strict(str, "a string"))
converter.register_structure_hook(bool, _strict(bool, "a boolean"))
converter.register_structure_hook(float, lambda value, _: float(_strict((int, float), "a number")(value, float)))
converter.register_structure_hook(float, _number)
converter.register_structure_hook_func(lambda t: t == JsonObject, _json_object)
# Arguments read back from a frame (the tests read the broker's frames) are parsed ones.
converter.register_structure_hook_func(lambda t: t == Arguments, _json_object)
converter.register_structure_hook_func(lambda t: t == WireError | str | None, _tool_error)


def _camel_overrides(cls: type) -> dict[str, Any]:
    return {a.name: override(rename=_camel(a.name)) for a in attrs.fields(cls)}


def _object_of(cls: type) -> Callable[[Any, type], Any]:
    structure_fields: Callable[[Any, type], Any] = make_dict_structure_fn(cls, converter, **_camel_overrides(cls))

    def structure_object(value: Any, kind: type) -> Any:
        # Without this, any value `name in value` works on (a string, a list) would be taken.
        if not isinstance(value, dict):
            raise _WrongValue(f"expected an object, got {type(value).__name__}")
        return structure_fields(value, kind)

    return structure_object


def _is_list_type(kind: Any) -> bool:
    return get_origin(kind) is tuple


def _list_of(kind: Any) -> Callable[[Any, type], Any]:
    structure_items = base_converter.get_structure_hook(kind)

    def structure_list(value: Any, kind: type) -> Any:
        # cattrs would take any iterable: a string as its letters, an object as its keys.
        if not isinstance(value, list):
            raise _WrongValue(f"expected an array, got {type(value).__name__}")
        return structure_items(value, kind)

    return structure_list


converter.register_structure_hook_factory(attrs.has, _object_of)
# Tuples go through a converter of their own, whose item hooks are this one's.
base_converter = converter.copy()
converter.register_structure_hook_factory(_is_list_type, _list_of)
converter.register_unstructure_hook_factory(
    attrs.has,
    lambda cls: make_dict_unstructure_fn(cls, converter, _cattrs_omit_if_default=True, **_camel_overrides(cls)),
)


def _arguments_out(value: Arguments) -> Any:
    return orjson.Fragment(value.text) if isinstance(value, RawJson) else value


# Tool arguments and page results go out as they came: no walk through every nested value.
converter.register_unstructure_hook_func(lambda t: t == JsonObject, lambda value: value)
converter.register_unstructure_hook_func(lambda t: t == Arguments, _arguments_out)


def loads(data: str | bytes) -> Any:
    """Parse JSON. Raises: JSONDecodeError (a ValueError)."""
    return orjson.loads(data)


def loads_object(data: str | bytes, what: str) -> dict[str, Any]:
    """Parse a JSON object. Raises: ValueError naming ``what``, when it is not JSON or not an object."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"{what} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


# Smaller outputs are left in orjson's buffer (4 KB at least): they are written out at once.
_EXACT_FROM = 4096


def _exact(data: bytes) -> bytes:
    """``data`` in an allocation of its own size, when it is large enough for the waste to matter."""
    return bytes(memoryview(data)) if len(data) >= _EXACT_FROM else data


def dumps(value: Any) -> bytes:
    return _exact(orjson.dumps(value))


def written(text: str) -> Any:
    """JSON already written, to go into a value :func:`dumps` writes as it is."""
    return orjson.Fragment(text)


def canonical(value: Arguments) -> bytes:
    """Tool arguments in one form whatever the spacing and key order they came in, for comparing
    calls by meaning: keys sorted at every level, no spaces, escapes in strings undone. Sent
    arguments nested deeper than orjson writes (254 levels) stay as they came, so that a call
    with them is still told apart; parsed ones that deep cannot be sent at all.
    """
    parsed = orjson.loads(value.text) if isinstance(value, RawJson) else value
    try:
        return b"c" + orjson.dumps(parsed, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        return b"r" + value.text if isinstance(value, RawJson) else b"x"


def dumps_text(value: Any) -> str:
    return orjson.dumps(value).decode()


def dumps_pretty(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


def structure(value: Any, cls: type[T]) -> T:
    """Build ``cls`` from plain data. Raises: InvalidMessage, naming every bad field."""
    try:
        return converter.structure(value, cls)
    except (cattrs.BaseValidationError, KeyError, TypeError, ValueError) as exc:
        raise InvalidMessage(_describe(exc)) from None


def unstructure(value: Any) -> Any:
    return converter.unstructure(value)


def decode_extension_message(frame: str | bytes) -> ExtensionMessage:
    """Decode one text frame from the extension.

    Raises:
        InvalidMessage: the frame is not JSON, not an object, has an unknown ``type``, or a
            field is missing or of the wrong type.
    """
    try:
        data = loads_object(frame, "frame")
    except ValueError as exc:
        raise InvalidMessage(str(exc)) from None
    kind = data.get("type")
    cls = _frames().extension.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise InvalidMessage(f"unknown message type {kind!r}")
    try:
        message: ExtensionMessage = converter.structure(data, cls)
    except (cattrs.BaseValidationError, KeyError, TypeError, ValueError) as exc:
        raise InvalidMessage(f"bad {kind} message: {_describe(exc)}") from None
    return message


def decode_handshake(frame: str | bytes) -> HandshakeMessage | str | None:
    """A handshake frame, else the ``type`` of any other frame (None when it has none).

    Raises:
        InvalidMessage: a handshake frame with a field missing or of the wrong type.
    """
    try:
        data = loads_object(frame, "frame")
    except ValueError:
        return None
    kind = data.get("type")
    cls = _frames().handshake.get(kind) if isinstance(kind, str) else None
    if cls is None:
        return kind if isinstance(kind, str) else None
    try:
        message: HandshakeMessage = converter.structure(data, cls)
    except (cattrs.BaseValidationError, KeyError, TypeError, ValueError) as exc:
        raise InvalidMessage(f"bad {kind} message: {_describe(exc)}") from None
    return message


def encode_broker_message(message: BrokerMessage | HandshakeReply) -> bytes:
    fields = converter.unstructure(message)
    fields["type"] = _frames().tags[type(message)]
    return _exact(orjson.dumps(fields))


_CALL_ID = re.compile(rb'"callId"\s*:\s*"([^"\\]{1,64})"')


def peek_call_id(frame: bytes, window: int = 4096) -> str | None:
    """Find a ``callId`` near the start or end of a frame too large to decode.

    Lets the broker fail the one call an oversized reply was meant for at once, instead of
    leaving it to time out, without parsing megabytes it has already refused.
    """
    for part in (frame[:window], frame[-window:]):
        found = _CALL_ID.search(part)
        if found:
            return found.group(1).decode("utf-8", "replace")
    return None


_SNAKE = re.compile(r"_([a-z])")


def _explain(exc: BaseException, kind: type | None) -> str:
    # The converter's own checks say what was wrong better than cattrs' generic wording.
    if isinstance(exc, _WrongValue):
        return str(exc)
    return cattrs.v.format_exception(exc, kind)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, cattrs.BaseValidationError):
        described = "; ".join(cattrs.transform_error(exc, path="message", format_exception=_explain))
        # The peer wrote camelCase; name its fields the way it spelled them.
        return _SNAKE.sub(lambda m: m.group(1).upper(), described)
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}"
    return str(exc)
