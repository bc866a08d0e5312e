"""Fuzzing the extension link, over a real loopback WebSocket (see ``fuzzing.py``).

Any frame (bytes, JSON of any shape, messages of every type with fields right or wrong, ids past
JavaScript's safe integers, deep nesting) gets one ``error`` frame when the broker cannot use it
and none when it can; the link stays up; the tabs the broker lists are exactly those the frames
it took describe; calls to a real tab on that link and on another still work, and the other link
hears nothing of it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import aiohttp
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from broker import codec

from ..conftest import BrokerUnderTest, MakeBroker
from ..support.fakes import FakeExtension
from .fuzzing import (
    BARRIER,
    SAFE,
    Deep,
    Json,
    deep_values,
    dump,
    echo_tab,
    empties,
    fuzz,
    huge_numbers,
    json_values,
    parse,
    texts,
    unlimited,
)

# The extension link protocol, from the README ("The extension link"), as checks on decoded
# JSON. Each check answers True (the broker takes it), False (it must refuse it) or None (a
# string or object where the protocol has an array, or a string or array where it has an
# object: the broker takes some of those, a known bug, see
# test_a_field_of_the_wrong_container_type_is_refused).
# Fields the README lists that the broker documents defaults for (tools: "null when the
# extension has not said"; a browser's name, a tab's title and url) may be missing.

Check = Callable[[Any], bool | None]


def all_of(results: list[bool | None]) -> bool | None:
    if False in results:
        return False
    return None if None in results else True


def integer(value: Any) -> bool:
    # JavaScript's safe integers; 7.0 is a float on the wire and refused like "7".
    return type(value) is int and -SAFE <= value <= SAFE


def string(value: Any) -> bool:
    return type(value) is str


def boolean(value: Any) -> bool:
    return type(value) is bool


def number(value: Any) -> bool:
    return type(value) in (int, float)


def kind_of(value: Any) -> type:
    """The JSON type of ``value``, :class:`Deep` ones included."""
    if isinstance(value, Deep):
        return dict if value.objects else list
    return type(value)


def items(value: Any) -> list[Any]:
    if isinstance(value, Deep):
        return [Deep(value.depth - 1, value.objects) if value.depth > 1 else 0]
    return list(value)


def json_object(value: Any) -> bool:
    return kind_of(value) is dict


def anything(value: Any) -> bool:
    return True


def nullable(check: Check) -> Check:
    return lambda value: True if value is None else check(value)


def array(check: Check) -> Check:
    def checked(value: Any) -> bool | None:
        if kind_of(value) is list:
            return all_of([check(item) for item in items(value)])
        if kind_of(value) in (str, dict):
            return None
        return False

    return checked


def record(required: dict[str, Check], optional: dict[str, Check]) -> Check:
    """An object with these fields; other keys are allowed (the codec's documented choice)."""

    def checked(value: Any) -> bool | None:
        if type(value) is not dict:
            # A string or array where an object of optional fields belongs (browser) is taken as
            # an empty one unless it happens to contain a field's name: the same known bug. A
            # Deep object is {"d": ...}: it has none of the fields the protocol names.
            if kind_of(value) is dict:
                return not required
            return None if not required and kind_of(value) in (list, str) else False
        results: list[bool | None] = [name in value and check(value[name]) for name, check in required.items()]
        results += [check(value[name]) for name, check in optional.items() if name in value]
        return all_of(results)

    return checked


def tool_error(value: Any) -> bool | None:
    if value is None or type(value) is str:
        return True
    return WIRE_ERROR(value) if type(value) is dict else False


SESSION: dict[str, Check] = {"sessionId": nullable(string)}
TOOL = record(
    {"name": string},
    {
        "description": string,
        "inputSchema": nullable(json_object),
        "title": nullable(string),
        "annotations": nullable(json_object),
    },
)
TAB = record(
    {"id": integer},
    {
        "title": string,
        "url": string,
        "tools": nullable(array(TOOL)),
        "windowId": nullable(integer),
        "active": nullable(boolean),
        "index": nullable(integer),
        "pinned": nullable(boolean),
    },
)
BROWSER = record({}, {"name": string, "version": string, "instanceId": nullable(string)})
WIRE_ERROR = record({"message": string}, {"code": nullable(string)})
EXTENSION_MESSAGES: dict[str, Check] = {
    "connected": record(
        {},
        {
            "browser": BROWSER,
            "tabs": array(TAB),
            "actions": array(string),
            "features": array(string),
            "paused": boolean,
            **SESSION,
        },
    ),
    "tabCreated": record({"tab": TAB}, {"requestId": nullable(string), **SESSION}),
    "tabUpdated": record({"tab": TAB}, SESSION),
    "tabClosed": record({"tabId": integer}, {"requestId": nullable(string), **SESSION}),
    "tabFocused": record(
        {"tabId": integer}, {"tools": nullable(array(TOOL)), "requestId": nullable(string), **SESSION}
    ),
    "toolsChanged": record({"tabId": integer, "tools": array(TOOL)}, SESSION),
    "toolsDiscovered": record({"callId": string, "tabId": integer, "tools": array(TOOL)}, SESSION),
    "toolResult": record({"callId": string}, {"result": anything, "error": tool_error, **SESSION}),
    "ping": record({}, SESSION),
    "pong": record({}, SESSION),
    "disconnected": record({}, SESSION),
    # What the person did in the browser (the README's "The person in charge" messages).
    "personEndedSession": record({"sessionId": string}, {}),
    "personReleasedTab": record({"tabId": integer}, SESSION),
    "pauseChanged": record({"paused": boolean}, SESSION),
    "approvalPending": record({"callId": string, "timeout": number}, SESSION),
    # A refusal of a request (closeTab); one naming no request of the link is dropped unanswered.
    "error": record({"code": string, "message": string}, {"requestId": nullable(string), **SESSION}),
}
# The README's extension -> broker types are the protocol's; everything else in codec.TAGS is the
# broker's own and refused when an extension sends it.
PROTOCOL_TYPES = sorted(set(codec.TAGS.values()))
assert set(EXTENSION_MESSAGES) < set(PROTOCOL_TYPES)
NAMES_A_KNOWN_TAB = {"tabFocused", "toolsChanged", "toolsDiscovered", "personReleasedTab"}
FIELDS = sorted(
    {"browser", "tabs", "actions", "sessionId", "tab", "requestId", "tabId", "tools", "callId", "result", "error"}
    | {"paused", "timeout"}
)


class Frame:
    """One frame a fuzzing extension sends: a JSON value, or raw bytes; as text or binary."""

    def __init__(self, value: Any = None, raw: bytes | None = None, binary: bool = False) -> None:
        self.value = value
        self.raw = raw
        self.binary = binary

    def data(self) -> bytes:
        return self.raw if self.raw is not None else dump(self.value).encode()

    def __repr__(self) -> str:
        kind = "binary" if self.binary else "text"
        return f"Frame({self.raw!r}, {kind})" if self.raw is not None else f"Frame({dump(self.value)[:300]}, {kind})"


def judge(frame: Frame, tabs: set[int]) -> tuple[str | None, set[int], bool]:
    """The error code the broker must answer ``frame`` with (None: it takes the frame), the
    browser's tab ids afterwards, and whether the verdict is certain (see :func:`array`)."""
    if frame.raw is not None:
        try:
            value = parse(frame.raw)
        except ValueError:
            return "invalid_message", tabs, True
    else:
        value = frame.value
    kind = value.get("type") if type(value) is dict else None
    if type(kind) is not str or kind not in EXTENSION_MESSAGES:
        return "invalid_message", tabs, True
    verdict = EXTENSION_MESSAGES[kind](value)
    if verdict is False:
        return "invalid_message", tabs, True
    if verdict is None:
        return None, tabs, False
    refusal = refused_for_what_it_names(kind, value, tabs)
    if refusal is not None:
        return refusal, tabs, True
    if kind == "connected":
        listed = {tab["id"] for tab in value.get("tabs", [])}
        tabs = {tab_id for tab_id in listed if tab_id >= 0}
        return ("invalid_message" if tabs != listed else None), tabs, True
    if kind == "tabCreated":
        tabs = tabs | {value["tab"]["id"]}
    elif kind == "tabClosed":
        tabs = tabs - {value["tabId"]}
    return None, tabs, True


def refused_for_what_it_names(kind: str, value: Json, tabs: set[int]) -> str | None:
    """The error a well-formed frame gets for naming what is not its browser's to name."""
    if kind in NAMES_A_KNOWN_TAB and value["tabId"] not in tabs:
        return "unknown_tab"
    if kind == "tabUpdated" and value["tab"]["id"] not in tabs:
        return "unknown_tab"
    if kind == "tabCreated" and value["tab"]["id"] < 0:
        return "invalid_message"
    if kind == "personEndedSession":
        # Only the checks' session was announced to this browser, and ending it is left out.
        return "unknown_session"
    return None


def ends_the_checks_session(frame: Frame) -> bool:
    """The person ending the REST session the checks call in: its next call is told so, once."""
    value = frame.value
    return frame.raw is None and type(value) is dict and value.get("type") == "personEndedSession"


def hits_known_bug_link(frame: Frame) -> bool:
    """A ``type`` that is an array or object (it closed the link once; test_fuzz_known_bugs.py keeps it fixed)."""
    return frame.raw is None and type(frame.value) is dict and isinstance(frame.value.get("type"), (list, dict, Deep))


# Strategies for frames: right by construction, wrong by construction, and anything in between.

tab_ids = st.sampled_from([7, 8, 0, -1, 1, SAFE, -SAFE]) | st.integers(min_value=-3, max_value=40)
maybe_null_text = st.none() | texts
tools = st.fixed_dictionaries(
    {"name": texts},
    optional={
        "description": texts,
        "inputSchema": st.none() | st.dictionaries(texts, json_values, max_size=3),
        "title": maybe_null_text,
        "annotations": st.none() | st.fixed_dictionaries({"readOnlyHint": st.booleans()}),
    },
)
tab_infos = st.fixed_dictionaries(
    {"id": tab_ids},
    optional={
        "title": texts,
        "url": texts,
        "tools": st.none() | st.lists(tools, max_size=3),
        "windowId": st.none() | tab_ids,
        "active": st.none() | st.booleans(),
        "index": st.none() | tab_ids,
        "pinned": st.none() | st.booleans(),
    },
)
VALID_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "browser": st.fixed_dictionaries({}, optional={"name": texts, "version": texts, "instanceId": maybe_null_text}),
    "tabs": st.lists(tab_infos, max_size=4),
    "actions": st.lists(texts, max_size=3),
    "features": st.lists(texts, max_size=3),
    "sessionId": maybe_null_text,
    "tab": tab_infos,
    "requestId": maybe_null_text,
    "tabId": tab_ids,
    "tools": st.lists(tools, max_size=3),
    "callId": texts,
    "result": json_values | deep_values,
    "error": st.none() | texts | st.fixed_dictionaries({"message": texts}, optional={"code": maybe_null_text}),
}


def valid_message(kind: str, required: list[str], optional: list[str]) -> st.SearchStrategy[Json]:
    return st.fixed_dictionaries(
        {"type": st.just(kind), **{name: VALID_FIELDS[name] for name in required}},
        optional={name: VALID_FIELDS[name] for name in [*optional, "sessionId"]},
    )


valid_messages = st.one_of(
    valid_message("connected", [], ["browser", "tabs", "actions"]),
    valid_message("tabCreated", ["tab"], ["requestId"]),
    valid_message("tabUpdated", ["tab"], []),
    valid_message("tabClosed", ["tabId"], []),
    valid_message("tabFocused", ["tabId"], ["tools", "requestId"]),
    valid_message("toolsChanged", ["tabId", "tools"], []),
    valid_message("toolsDiscovered", ["callId", "tabId", "tools"], []),
    valid_message("toolResult", ["callId"], ["result", "error"]),
    valid_message("ping", [], []),
    valid_message("pong", [], []),
    valid_message("disconnected", [], []),
)


@st.composite
def typed_objects(draw: st.DrawFn) -> Json:
    """An object with a type among the protocol's (or not), and fields right, wrong or unknown."""
    kind = draw(st.sampled_from(PROTOCOL_TYPES) | json_values)
    names = draw(st.lists(st.sampled_from(FIELDS) | texts, max_size=5, unique=True))
    message: Json = {
        name: draw(VALID_FIELDS.get(name, json_values) | json_values | huge_numbers | empties) for name in names
    }
    message["type"] = kind
    return message


@st.composite
def mutated_messages(draw: st.DrawFn) -> Json:
    """A message of the protocol with one or two fields, known or not, set to anything."""
    message = draw(valid_messages)
    for _ in range(draw(st.integers(min_value=1, max_value=2))):
        name = draw(st.sampled_from(sorted(message)) | st.sampled_from(FIELDS) | texts)
        message[name] = draw(json_values | huge_numbers | empties | deep_values)
    return message


@st.composite
def with_huge_numbers(draw: st.DrawFn) -> Json:
    """A message of the protocol with one of its ids past what JavaScript counts exactly."""
    message = draw(valid_messages)
    number = draw(huge_numbers)
    if "tabId" in message:
        message["tabId"] = number
    elif "tab" in message:
        message["tab"] = {**message["tab"], "id": number}
    else:
        message["tabs"] = [{"id": number}]
    return message


frames = st.one_of(
    st.builds(Frame, raw=st.binary(max_size=40), binary=st.booleans()),
    st.builds(Frame, value=json_values | deep_values, binary=st.booleans()),
    st.builds(Frame, value=valid_messages, binary=st.booleans()),
    st.builds(Frame, value=typed_objects()),
    st.builds(Frame, value=mutated_messages()),
    st.builds(Frame, value=with_huge_numbers()),
    st.builds(
        Frame,
        value=st.fixed_dictionaries(
            {"type": st.just("toolResult"), "callId": texts, "result": deep_values, "deep": deep_values}
        ),
    ),
)


# The extension link


class LinkUnderFuzz:
    def __init__(self, broker: BrokerUnderTest, fuzzer: FakeExtension, bystander: FakeExtension) -> None:
        self.broker = broker
        self.fuzzer = fuzzer
        self.bystander = bystander
        self.nonces = iter(range(10**9))

    async def send(self, frame: Frame) -> None:
        assert self.fuzzer.ws is not None
        data = frame.data()
        if frame.binary:
            await self.fuzzer.ws.send_bytes(data)
        else:
            # Text frames as bytes: invalid UTF-8 is part of what may arrive.
            await self.fuzzer.ws.send_frame(data, aiohttp.WSMsgType.TEXT)

    async def errors_for_what_was_sent(self, start: int) -> list[Json]:
        """The error frames the broker sent after ``start``, once it has handled every frame."""
        await self.fuzzer.send({"type": "tabFocused", "tabId": BARRIER})
        barrier = await self.fuzzer.wait_for("error", lambda m: f"tab {BARRIER}," in m["message"], start=start)
        end = self.fuzzer.inbox.index(barrier, start)
        return [m for m in self.fuzzer.inbox[start:end] if m["type"] == "error"]

    async def echo(self, ref: str) -> None:
        """Call the tab's echo tool in the REST session, claiming the tab first (a frame may have
        replaced it by a tab of the same id that nobody holds)."""
        nonce = next(self.nonces)
        status, body = await self.broker.post(f"/tabs/{ref}/claim")
        assert status == 200, body
        status, body = await self.broker.post(f"/tabs/{ref}/tools/echo", {"nonce": nonce})
        assert (status, body) == (200, {"result": {"tab": int(ref.split(":")[1]), "args": {"nonce": nonce}}})


@pytest.fixture
async def link_fuzz(make_broker: MakeBroker) -> LinkUnderFuzz:
    broker = await make_broker(**unlimited())
    fuzzer = await broker.extension(echo_tab(7))
    # Its browser is b2 and has no instance id, so no frame of the fuzzer can take its place.
    bystander = await broker.extension(echo_tab(9), browser_name="Bystander")
    link = LinkUnderFuzz(broker, fuzzer, bystander)
    # The REST session the checks call in is announced to every link now, and holds both tabs,
    # not during an example.
    await link.echo("b1:7")
    await link.echo("b2:9")
    return link


@fuzz(600)
@given(sent=st.lists(frames, min_size=1, max_size=4))
async def test_any_frame_is_answered_by_the_protocol_and_the_link_stays_up(
    link_fuzz: LinkUnderFuzz, sent: list[Frame]
) -> None:
    assume(not any(hits_known_bug_link(frame) or ends_the_checks_session(frame) for frame in sent))
    tabs, expected, certain = {7}, [], True
    for frame in sent:
        code, tabs, sure = judge(frame, tabs)
        certain = certain and sure
        expected += [code] if code else []
    assume(certain and BARRIER not in tabs)
    fuzzer, bystander, broker = link_fuzz.fuzzer, link_fuzz.bystander, link_fuzz.broker
    start, bystander_start = len(fuzzer.inbox), len(bystander.inbox)

    for frame in sent:
        await link_fuzz.send(frame)
    errors = await link_fuzz.errors_for_what_was_sent(start)

    assert [error["code"] for error in errors] == expected
    assert all(type(error["message"]) is str and error["message"] for error in errors)
    assert not fuzzer.closed.is_set()
    status, listing = await broker.get("/tabs")
    assert status == 200
    listed = {(tab["browser"], tab["id"]) for tab in listing["tabs"]}
    assert listed == {("b1", tab_id) for tab_id in tabs} | {("b2", 9)}
    # Back to the real browser's own snapshot; then a call on each link works.
    await fuzzer.send_snapshot()
    await broker.settled(fuzzer)
    await link_fuzz.echo("b1:7")
    await link_fuzz.echo("b2:9")
    heard = [(m["type"], m.get("tabId")) for m in bystander.inbox[bystander_start:] if m["type"] != "ping"]
    assert heard == [("callTool", 9)]
    assert not bystander.closed.is_set()
