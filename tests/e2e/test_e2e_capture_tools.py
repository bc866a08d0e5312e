"""End to end: the tools whose product is a file (browser_pdf_save, browser_start_tracing and
browser_stop_tracing) through a real broker, the real extension in headless Chromium, REST and
MCP clients.

The extension answers with the file as an MCP embedded resource; the broker (``serve
--output-dir``) writes it into the client's output folder, 0600, and answers with its path, so
these tests read what a user would open: the PDF (its text decoded from its streams, as no PDF
tool is installed here) and the trace (JSON, as Perfetto and chrome://tracing read it).
``tests/pages/capture_report.html`` is a report with a banner, a table, a frame of its own and a
box that moves every frame, and a button that leaves a user-timing mark; the person's page
``capture_person.html`` marks its own trace events all the time, which no client's trace may hold.
"""

from __future__ import annotations

import contextlib
import json
import re
import stat
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Page

from ..harness.chromium import extension_chromium, in_front, probe_only, trust_broker
from ..harness.page_server import serve_test_pages
from ..harness.waiting import WAIT, eventually
from ..support.cli_helpers import Brokers
from ..support.extension_world import World
from ..support.mcp_clients import LEGACY, McpClient, mcp_client, refused, text

pytestmark = pytest.mark.asyncio(loop_scope="module")

REPORT = "pages/capture_report.html"
PERSON = "pages/capture_person.html"
SAVED = re.compile(r"Saved to (/\S+) \(([\d,]+) bytes\)")


class CaptureWorld(World):
    """The browser and broker of this module, and the broker's output folder."""

    output: Path

    def client(self, name: str, caps: str = "pdf,devtools") -> contextlib.AbstractAsyncContextManager[McpClient]:
        """An MCP client over Streamable HTTP that asks for the groups ``caps``."""
        return mcp_client(f"http://127.0.0.1:{self.broker.port}/mcp?caps={caps}", self.token, name, LEGACY)

    async def rest_tab(self, page: str, tag: str) -> str:
        """A tab the REST client opens at ``page`` (behind the person's): its ref."""
        status, body = await self.post("/tabs", {"url": self.url(page, tag), "focus": False})
        assert status == 200, body
        ref: str = body["tab"]["ref"]
        return ref

    async def action(self, ref: str, action: str, **args: Any) -> tuple[int, Any]:
        return await self.post(f"/tabs/{ref}/actions/{action}", args)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[CaptureWorld]:
    home = tmp_path_factory.mktemp("e2e-capture")
    output = home / "output"
    async with serve_test_pages() as site, Brokers(home / "discovery") as brokers:
        broker = await brokers.start("--output-dir", str(output))
        async with extension_chromium(home, wait=WAIT, no_viewport=True) as (context, worker):
            await trust_broker(worker, broker.token)
            await probe_only(worker, broker.port)
            world = CaptureWorld(context, worker, broker, broker.token, site, "polyfill")
            world.output = output
            try:
                await world.joined()
                yield world
            finally:
                await world.http.close()


def saved_file(answer: str, output: Path) -> Path:
    """The file the broker's answer names, checked to be the client's own: in its output folder, 0600."""
    found = SAVED.search(answer)
    assert found, answer
    path = Path(found.group(1))
    assert path.is_relative_to(output), (path, output)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600, oct(path.stat().st_mode)
    assert path.stat().st_size == int(found.group(2).replace(",", ""))
    return path


def pdf_texts(data: bytes) -> list[str]:
    """The text a PDF of Chromium's (Skia's) shows, decoded as little as that takes: its streams
    inflated, each font's ToUnicode map read, and the glyphs of each content stream's Tj and TJ
    mapped through each of those maps in turn (one of the results is the page's text)."""
    streams = []
    for start in re.finditer(rb"stream\r?\n", data):
        raw = data[start.end() : data.find(b"endstream", start.end())]
        try:
            streams.append(zlib.decompressobj().decompress(raw))
        except zlib.error:
            streams.append(raw)
    maps = []
    for stream in streams:
        if b"begincmap" not in stream:
            continue
        table: dict[int, str] = {}
        for block in re.findall(rb"beginbfchar(.*?)endbfchar", stream, re.S):
            for source, target in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
                table[int(source, 16)] = bytes.fromhex(target.decode()).decode("utf-16-be")
        for block in re.findall(rb"beginbfrange(.*?)endbfrange", stream, re.S):
            for low, high, target in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
                for offset, code in enumerate(range(int(low, 16), int(high, 16) + 1)):
                    table[code] = chr(int(target, 16) + offset)
        maps.append(table)
    texts = []
    for stream in streams:
        if b"BT" not in stream:
            continue
        shows = re.findall(rb"\[(.*?)\]\s*TJ|<([0-9A-Fa-f]*)>\s*Tj", stream, re.S)
        for table in maps:
            glyphs = [
                table.get(int(run[i : i + 4], 16), "\ufffd")
                for array, single in shows
                for run in (re.findall(rb"<([0-9A-Fa-f]*)>", array) if array else [single])
                for i in range(0, len(run), 4)
            ]
            texts.append("".join(glyphs))
    return texts


def all_text(result: Any) -> str:
    """Every text item of an MCP result: the tool's line, then the broker's line naming the file."""
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def shows(texts: list[str], words: str) -> bool:
    return any(words in shown for shown in texts)


def trace_of(path: Path) -> list[dict[str, Any]]:
    """The trace's events, as Perfetto reads the file: JSON with traceEvents."""
    trace = json.loads(path.read_text())
    events: list[dict[str, Any]] = trace["traceEvents"]
    return events


def user_marks(events: list[dict[str, Any]]) -> set[str]:
    """The page's performance.mark names and console.timeStamp messages the trace holds."""
    marks = {event["name"] for event in events if "user_timing" in event.get("cat", "")}
    stamps = {
        event.get("args", {}).get("data", {}).get("message", "") for event in events if event.get("name") == "TimeStamp"
    }
    return marks | stamps


async def click_mark(client: McpClient) -> None:
    """Click the report's Mark button in the client's current tab, which leaves a mark in its trace."""
    page = text(await client.call("browser_snapshot", {}))
    mark = re.search(r'button "Mark" \[ref=(e\d+)\]', page)
    assert mark, page
    clicked = await client.call("browser_click", {"element": "Mark", "target": mark.group(1)})
    assert not clicked.is_error and "Marked" in text(clicked), text(clicked)


@contextlib.asynccontextmanager
async def persons_tab_in_front(world: World, tag: str) -> AsyncIterator[Page]:
    """The person's own tab, in front and never claimed, marking trace events all the time."""
    page = await world.context.new_page()
    await page.goto(world.url(PERSON, tag))
    await page.bring_to_front()
    await in_front(world.worker, url=page.url)
    try:
        yield page
    finally:
        await page.close()


async def test_a_pdf_of_the_page_and_its_frame_is_written_to_the_clients_folder(world: CaptureWorld) -> None:
    ref = await world.rest_tab(REPORT, "pdf")
    status, body = await world.action(ref, "pdf_save")
    assert status == 200, body
    answer = "\n".join(item["text"] for item in body["result"]["content"])
    assert "Printed " + world.url(REPORT, "pdf") + " to a PDF of " in answer, answer
    # The bytes went to the file, not to the client.
    assert "JVBER" not in json.dumps(body), body
    path = saved_file(answer, world.output)
    assert path.suffix == ".pdf" and path.name.startswith("page-"), path
    data = path.read_bytes()
    assert data.startswith(b"%PDF-"), data[:20]
    texts = pdf_texts(data)
    assert shows(texts, "Quarterly report"), texts
    assert shows(texts, "Sales rose by twelve percent"), texts
    assert shows(texts, "Regional figures follow"), texts  # the page's frame is printed with it
    assert not shows(texts, "Only the person reads this"), texts


async def test_a_pdf_goes_where_filename_says_inside_the_clients_folder(world: CaptureWorld) -> None:
    ref = await world.rest_tab(REPORT, "named")
    status, body = await world.action(ref, "pdf_save", filename="reports/q3.pdf")
    assert status == 200, body
    path = saved_file(body["result"]["content"][-1]["text"], world.output)
    assert path.parts[-2:] == ("reports", "q3.pdf"), path
    assert shows(pdf_texts(path.read_bytes()), "Quarterly report")
    # A name that leads out of the client's folders is refused before the browser prints anything.
    status, body = await world.action(ref, "pdf_save", filename="../../escaped.pdf")
    assert status != 200 and "escaped" in json.dumps(body), body
    assert not any(world.output.parent.rglob("escaped.pdf"))


async def test_a_tab_behind_the_persons_is_printed_and_the_person_keeps_their_tab(world: CaptureWorld) -> None:
    async with persons_tab_in_front(world, "front") as person:
        ref = await world.rest_tab(REPORT, "behind")
        status, body = await world.action(ref, "pdf_save")
        assert status == 200, body
        path = saved_file(body["result"]["content"][-1]["text"], world.output)
        assert shows(pdf_texts(path.read_bytes()), "Quarterly report")
        await in_front(world.worker, url=person.url)


async def test_a_client_that_asks_for_the_groups_is_offered_the_tools(world: CaptureWorld) -> None:
    async with world.client("groups-client") as client:
        names = await client.tool_names()
        assert {"browser_pdf_save", "browser_start_tracing", "browser_stop_tracing"} <= set(names), names
        schema = (await client.tools())["browser_pdf_save"].input_schema
        assert set(schema["properties"]) == {"tab", "filename"}, schema


async def test_a_trace_holds_what_the_clients_tab_did_and_nothing_of_the_persons(world: CaptureWorld) -> None:
    async with world.client("tracing-client") as client, persons_tab_in_front(world, "watched"):
        await client.call_json("tabs", {"action": "open", "url": world.url(REPORT, "trace"), "focus": False})
        started = await client.call("browser_start_tracing", {})
        assert not started.is_error, text(started)
        assert "browser_stop_tracing" in text(started)
        again = await refused(client, "browser_start_tracing", {}, "tool_failed")
        assert "already running" in again, again
        await click_mark(client)
        stopped = await client.call("browser_stop_tracing", {})
        assert not stopped.is_error, text(stopped)
        answer = all_text(stopped)
        assert re.search(r"Traced [\d.]+ s: [\d,]+ events", answer), answer
        path = saved_file(answer, world.output)
        assert path.suffix == ".json" and path.name.startswith("trace-"), path
        events = trace_of(path)
        marks = user_marks(events)
        assert {"agent-clicked-mark", "agent-clicked-stamp"} <= marks, sorted(marks)[:50]
        # The page painted its moving box all along: its frames are in the trace too.
        assert sum(1 for event in events if event.get("name") == "Paint") > 1
        assert "person-private" not in path.read_text()
        # Saved once: the trace is over.
        after = await refused(client, "browser_stop_tracing", {}, "tool_failed")
        assert "no trace is running in the tab" in after, after


async def test_a_stop_without_a_start_is_a_clear_error(world: CaptureWorld) -> None:
    async with world.client("stopping-client") as client:
        await client.call_json("tabs", {"action": "open", "url": world.url(REPORT, "nostart"), "focus": False})
        said = await refused(client, "browser_stop_tracing", {}, "tool_failed")
        assert "no trace is running in the tab: browser_start_tracing starts one" in said, said


async def test_a_trace_ends_with_its_clients_session_and_no_other_client_can_take_it(world: CaptureWorld) -> None:
    async with world.client("second-client") as second:
        async with world.client("first-client") as first:
            opened = await first.call_json(
                "tabs", {"action": "open", "url": world.url(REPORT, "first"), "focus": False}
            )
            first_tab = opened["opened"]["id"]
            started = await first.call("browser_start_tracing", {})
            assert not started.is_error, text(started)
            await second.call_json("tabs", {"action": "open", "url": world.url(REPORT, "second"), "focus": False})
            # Chromium records one trace at a time: the second client is told so, naming no tab,
            # and cannot end or read the first client's trace from its own tab.
            busy = await refused(second, "browser_start_tracing", {}, "tool_failed")
            assert "another tab's trace is running" in busy and str(first_tab) not in busy, busy
            assert "no trace is running" in await refused(second, "browser_stop_tracing", {}, "tool_failed")
            # Nor from the first client's tab, which is not its own.
            taken = await second.call("browser_stop_tracing", {"tab": first_tab})
            assert taken.is_error and "no trace is running" not in text(taken), text(taken)

        # The first client left without stopping its trace: its tab is let go, and the trace with it
        # (the extension lets go of the tab once the broker has told it the session ended).
        async def released() -> bool:
            tabs = await world.tabs()
            return any(tab["id"] == first_tab and tab["owner"] is None for tab in tabs)

        await eventually(released, "the first client's tab to be let go")

        async def second_starts() -> bool:
            started = await second.call("browser_start_tracing", {})
            assert not started.is_error or "another tab's trace is running" in text(started), text(started)
            return not started.is_error

        await eventually(second_starts, "the first client's trace to end, so that another may start")
        await click_mark(second)
        stopped = await second.call("browser_stop_tracing", {})
        assert not stopped.is_error, text(stopped)
        assert "agent-clicked-mark" in user_marks(trace_of(saved_file(all_text(stopped), world.output)))
