"""Page tool results of a reasonable size, through REST and MCP (both eras): cut past the broker's
limit with a note, binary-looking parts withheld, bad shapes answered clearly (broker.core.results)."""

from __future__ import annotations

import contextlib
import json
import random
import re
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest

from broker import codec
from broker.core.results import (
    BASE64_RUN,
    MAX_ITEMS,
    MAX_MEDIA_CHARS,
    base64_runs,
    control_count,
    json_control_count,
)
from broker.mcp.answers import LIMITED

from ..conftest import BrokerUnderTest, MakeBroker
from ..support.fakes import FakeTab
from ..support.mcp_clients import LEGACY, MODERN

LIMIT = 100_000
DOORS = ["rest", LEGACY, MODERN]


@attrs.frozen
class Answer:
    """What a client got: the page's result as its door gives it, and the broker's notes."""

    value: Any
    limited: list[str]


class Door:
    """Calls the page tool ``give`` of tab 1, which answers with the ``value`` it is given."""

    def __init__(self, broker: BrokerUnderTest, door: str) -> None:
        self.broker = broker
        self.door = door
        self.client: Any = None

    async def call(self, value: Any) -> Answer:
        if self.door == "rest":
            status, body = await self.broker.post("/tabs/1/tools/give", {"value": value})
            assert status == 200, body
            return Answer(body["result"], body.get("limited", []))
        result = await self.client.call("t1_give", {"value": value})
        assert not result.is_error
        meta = result.meta or {}
        assert meta["browser-mcp/untrusted"] is True
        content = [item.model_dump(mode="json", by_alias=True, exclude_none=True) for item in result.content]
        shaped = isinstance(value, dict) and isinstance(value.get("content"), list)
        got = {"content": content} if shaped else _only_text(content)
        return Answer(got, meta.get(LIMITED, []))


def _only_text(content: list[dict[str, Any]]) -> str:
    [item] = content
    assert item["type"] == "text"
    text: str = item["text"]
    return text


@contextlib.asynccontextmanager
async def door_of(broker: BrokerUnderTest, door: str) -> AsyncIterator[Door]:
    await broker.extension(FakeTab(1, "https://page.example/", "Page", {"give": lambda args: args["value"]}))
    opened = Door(broker, door)
    if door == "rest":
        assert (await broker.post("/tabs/1/claim"))[0] == 200
        yield opened
        return
    async with broker.mcp("Claude Code", door) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 1})
        opened.client = client
        yield opened


@pytest.mark.parametrize("door", DOORS)
async def test_a_result_just_under_the_limit_comes_whole_and_one_just_over_is_cut_with_a_note(
    broker: BrokerUnderTest, door: str
) -> None:
    async with door_of(broker, door) as give:
        under = "word " * (LIMIT // 5)
        assert len(under) == LIMIT
        assert await give.call(under) == Answer(under, [])
        over = under + "!"
        answer = await give.call(over)
        assert answer.value.startswith(under) and "!" not in answer.value
        assert "[browser-mcp: the result cut at 100,000 of its 100,001 characters" in answer.value
        assert answer.limited and "--max-result-chars" in answer.limited[0]
        # A JSON value that is not text is counted by its JSON, and cut as text.
        data = {"rows": ["x" * 90] * 1200}
        cut = await give.call(data)
        assert isinstance(cut.value, str) and cut.value.startswith('{"rows":["xxx')
        assert "the result's JSON cut at 100,000" in cut.value and len(cut.limited) == 1
        small = {"rows": ["x" * 90] * 10}
        written = json.dumps(small, separators=(",", ":"))
        assert await give.call(small) == Answer(small if door == "rest" else written, [])


@pytest.mark.parametrize("door", DOORS)
async def test_many_text_items_are_kept_up_to_the_limit_and_the_rest_said_dropped(
    broker: BrokerUnderTest, door: str
) -> None:
    async with door_of(broker, door) as give:
        items = [{"type": "text", "text": (f"item {i:04d} " + "lorem ipsum " * 90)[:1_000]} for i in range(300)]
        answer = await give.call({"content": items})
        content = answer.value["content"]
        # 100 items of 1,000 characters fill the 100,000; the other 200 are dropped, and said so.
        assert content[:100] == items[:100]
        assert content[100:] == [
            {"type": "text", "text": "[browser-mcp: 200 more content item(s) dropped: past the result's size]"}
        ]
        assert answer.limited == ["200 more content item(s) dropped: past the result's size"]
        # The item that crosses the limit is cut, with its note where it was cut.
        crossing = [{"type": "text", "text": "a " * 30_000}, {"type": "text", "text": "b " * 30_000}]
        second = (await give.call({"content": crossing})).value["content"][1]["text"]
        assert second.startswith("b " * 20_000 + "\n[browser-mcp:")
        assert second.endswith(
            "content item 1 cut at 40,000 of its 60,000 characters: a result may carry 100,000"
            " (serve --max-result-chars)]"
        )
        # Past MAX_ITEMS items, the rest are dropped whatever their size.
        tiny = [{"type": "text", "text": "z"}] * (MAX_ITEMS + 5)
        many = (await give.call({"content": tiny})).value["content"]
        assert len(many) == MAX_ITEMS + 1 and "5 content items past the first 1,000 dropped" in many[-1]["text"]


@pytest.mark.parametrize("door", DOORS)
async def test_an_image_too_large_is_withheld_with_a_note_and_one_within_the_size_comes_whole(
    broker: BrokerUnderTest, door: str
) -> None:
    async with door_of(broker, door) as give:
        fits = {"type": "image", "data": "iVBORw0KGgo" + "A" * 500_000, "mimeType": "image/png"}
        caption = {"type": "text", "text": "the chart"}
        answer = await give.call({"content": [fits, caption]})
        assert answer == Answer({"content": [fits, caption]}, [])
        too_large = {**fits, "data": "A" * (MAX_MEDIA_CHARS + 1)}
        answer = await give.call({"content": [too_large, caption]})
        note = (
            "content item 0 (image) withheld: 1,000,001 base64 characters, past the 1,000,000 a result's"
            " images, audio and blobs may carry together"
        )
        assert answer == Answer({"content": [{"type": "text", "text": f"[browser-mcp: {note}]"}, caption]}, [note])
        # Together: the second image that would pass the media budget is the one withheld.
        half = {**fits, "data": "A" * (MAX_MEDIA_CHARS // 2 + 1)}
        content = (await give.call({"content": [half, half]})).value["content"]
        assert content[0] == half and "content item 1 (image) withheld" in content[1]["text"]


@pytest.mark.parametrize("door", DOORS)
async def test_binary_looking_text_is_withheld_with_a_note(broker: BrokerUnderTest, door: str) -> None:
    async with door_of(broker, door) as give:
        blob = "data:image/png;base64," + "QUJD" * 2_000
        answer = await give.call(f"before {blob} after")
        assert answer.value == "before data:image/png;base64,[browser-mcp: 8,000 base64-like characters withheld] after"
        assert answer.limited == ["the result: 1 run(s) of base64-like characters withheld (8,000 characters)"]
        # One character short of a run, it stays: long words and tokens are not binary.
        token = "Z" * (BASE64_RUN - 1)
        assert await give.call(f"{token} {token}") == Answer(f"{token} {token}", [])
        controls = "".join(chr(i % 32) for i in range(5_000))
        answer = await give.call({"content": [{"type": "text", "text": controls}]})
        [item] = answer.value["content"]
        assert item["text"].startswith("[browser-mcp: content item 0 withheld: 5,000 characters that look like binary")


async def test_a_changed_limit_cuts_there(make_broker: MakeBroker) -> None:
    broker = await make_broker(max_result_chars=1_000)
    async with door_of(broker, "rest") as give:
        assert await give.call("q " * 500) == Answer("q " * 500, [])
        answer = await give.call("q " * 750)
        assert answer.value.startswith("q " * 500 + "\n[browser-mcp: the result cut at 1,000 of its 1,500 characters")
        assert "a result may carry 1,000" in answer.limited[0]


@pytest.mark.parametrize("door", DOORS)
async def test_bad_results_get_a_clear_answer_and_cost_nothing_else(broker: BrokerUnderTest, door: str) -> None:
    async with door_of(broker, door) as give:
        # A result that is not an object is the page's JSON, whole.
        numbers = await give.call([1, 2, 3])
        assert numbers == Answer([1, 2, 3] if door == "rest" else "[1,2,3]", [])
        assert await give.call(None) == Answer(None if door == "rest" else "null", [])
        bad = {
            "content": [
                {"type": "video", "url": "https://page.example/v.mp4"},
                "just a string",
                {"type": "text", "text": 7},
                {"type": "image", "data": "AAAA"},
                {"type": "text", "text": "kept", "_meta": {"x": "y"}},
            ],
            "isError": "no",
            "extra": "x" * 1_000_000,
        }
        answer = await give.call(bad)
        notes = [
            "content item 0 dropped: unknown type 'video'",
            "content item 1 dropped: str, not an object",
            "content item 2 dropped: a 'text' item needs its text as a string",
            "content item 3 dropped: an 'image' item needs its data and mimeType as strings",
        ]
        expected = [{"type": "text", "text": f"[browser-mcp: {note}]"} for note in notes]
        assert answer.value == {"content": [*expected, {"type": "text", "text": "kept", "_meta": {"x": "y"}}]}
        assert answer.limited == [
            *notes,
            "isError dropped: str, not true or false",
            "fields that MCP results do not have dropped: extra",
        ]
        # An item's other fields are counted too: annotations past the size drop the item, said so.
        padded = {"type": "text", "text": "hi", "annotations": {"audience": ["user"], "note": "n " * 60_000}}
        dropped = await give.call({"content": [padded]})
        assert dropped.limited == ["content item 0 dropped: past the result's size"]
        # The session and its tab go on as before.
        assert await give.call("fine") == Answer("fine", [])


def test_base64_runs_are_found_wherever_they_lie_as_a_search_of_every_place_finds_them() -> None:
    # The search looks only at every 500th place: runs just long enough, just too short, and
    # across those places, at the start and end of the text, all must be found as a full search does.
    every_place = re.compile(f"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/=_-]{{{BASE64_RUN},}}")
    lengths = [1, 10, 499, 500, 501, 998, 999, 1000, 1001, 1499, 1500, 2000, 2501]
    chosen = random.Random(20)
    for _ in range(400):
        parts = [chosen.choice("aZ9+/=_-") * chosen.choice(lengths) + chosen.choice([" ", "\n", ".", "é", '"'])]
        parts += [
            chosen.choice("aZ9") * chosen.choice(lengths) + chosen.choice(" .,") for _ in range(chosen.randint(0, 20))
        ]
        text = "".join(parts)[chosen.randint(0, 3) :]
        assert base64_runs(text) == [(m.start(), m.end()) for m in every_place.finditer(text)]


def test_control_characters_are_counted_but_tabs_line_breaks_and_escapes() -> None:
    assert control_count("a\tb\nc\r\x1b[31mred") == 0
    assert control_count("\x00\x01é\x7f\x1f") == 4


def test_every_control_character_is_counted_alone_and_among_text() -> None:
    # A text without any is not counted at all: each kind must still be found on its own.
    for code in [*range(32), 127]:
        counted = 0 if code in (9, 10, 13, 27) else 1
        assert control_count(chr(code)) == counted, code
        assert control_count("é words " * 200 + chr(code) * 3 + " more") == 3 * counted, code


def test_a_json_texts_controls_are_counted_as_a_full_count_counts_them() -> None:
    values: list[object] = [
        "".join(chr(code) for code in range(128)),
        {"a\x01b": ["\x7f" * 5, "\t\n", {"é\x1f": "\x00" * 3}], "plain": "words " * 300},
        ["\x7f"] * 2000,
        {"data": "x" * 5000},
    ]
    for value in values:
        written = codec.dumps_text(value)
        assert json_control_count(written) == control_count(written), value
    assert json_control_count(codec.dumps_text("\x7f\x7f\x01")) == 2
