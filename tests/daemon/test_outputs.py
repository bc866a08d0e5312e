"""The files built-in tools write for a client (broker/outputs.py), as a client sees them.

A scripted fake extension answers the actions; a tool's ``filename`` and a file the browser
answers with (a PDF, a trace) are written by the broker into the client's output folder or its
own folders, 0600, and the answer names the file; names that lead out of those folders are
refused before the browser hears the call.
"""

from __future__ import annotations

import base64
import stat
from pathlib import Path
from typing import Any

import pytest

from broker.core.browser_tools import ACTIONS
from broker.core.errors import OutputNotAllowed
from broker.outputs import OutputPlaces, output_places, saved

from ..conftest import MakeBroker
from ..support.fakes import TINY_PNG, FakeExtension, FakeTab
from ..support.mcp_clients import MODERN, text

PDF = b"%PDF-1.7\n% a page\n%%EOF\n"


def page() -> FakeTab:
    return FakeTab(7, "https://page7.example/", "Page 7")


def answer_with(fake: FakeExtension, content: list[dict[str, Any]]) -> None:
    async def answer(action: dict[str, Any]) -> None:
        await fake.send({"type": "toolResult", "callId": action["callId"], "result": {"content": content}})

    fake.on_action = answer


def pdf_answer() -> list[dict[str, Any]]:
    resource = {
        "uri": "browser-mcp:file/page.pdf",
        "mimeType": "application/pdf",
        "blob": base64.b64encode(PDF).decode(),
    }
    return [{"type": "text", "text": "### Result\nThe page as a PDF"}, {"type": "resource", "resource": resource}]


def files_under(folder: Path, pattern: str = "*") -> list[Path]:
    return [path for path in folder.rglob(pattern) if path.is_file()]


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# The places, without a broker


@pytest.mark.parametrize(
    ("filename", "why"),
    [
        ("../../.ssh/x", "'..' part"),
        ("out/../../x.txt", "'..' part"),
        ("/etc/cron.d/x", "outside the folders"),
        ("", "must name a file"),
        ("sub/", "names a folder"),
    ],
)
def test_a_filename_out_of_the_clients_folders_is_refused(tmp_path: Path, filename: str, why: str) -> None:
    places = OutputPlaces(tmp_path / "output", (tmp_path / "project",))
    with pytest.raises(OutputNotAllowed, match=why):
        places.path_for(filename)


def test_a_symlink_out_of_the_folders_is_refused_on_the_way_and_at_the_end(tmp_path: Path) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "out").symlink_to(elsewhere)
    (project / "shot.png").symlink_to(project / "target.png")
    places = OutputPlaces(tmp_path / "output", (project,))
    with pytest.raises(OutputNotAllowed, match="outside the folders"):
        places.path_for("out/shot.png")
    with pytest.raises(OutputNotAllowed, match="is a link"):
        places.path_for("shot.png")
    assert list(elsewhere.iterdir()) == []


def test_a_relative_name_lands_in_the_clients_first_folder_else_its_output_folder(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    assert OutputPlaces(tmp_path / "output", (project,)).path_for("a/b.txt") == project / "a" / "b.txt"
    assert OutputPlaces(tmp_path / "output").path_for("b.txt") == tmp_path / "output" / "b.txt"
    assert OutputPlaces(tmp_path / "output", (project,)).path_for(str(tmp_path / "output" / "c.txt"))


def test_each_client_has_a_folder_of_its_own(tmp_path: Path) -> None:
    one = output_places(str(tmp_path), "Claude Code").output
    other = output_places(str(tmp_path), "../cursor").output
    assert one.parent == other.parent == tmp_path and one != other
    assert one.name == "Claude-Code" and ".." not in other.name


def test_without_output_dir_the_folders_are_in_the_brokers_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert output_places(None, "cursor").output == tmp_path / "data" / "browser-mcp" / "output" / "cursor"


def test_a_file_answered_is_written_0600_and_named(tmp_path: Path) -> None:
    places = OutputPlaces(tmp_path / "output")
    answer = saved({"content": pdf_answer()}, None, places)
    line = answer["content"][1]["text"]
    path = Path(line.removeprefix("Saved to ").split(" (")[0])
    assert path.parent == tmp_path / "output" and path.suffix == ".pdf"
    assert path.read_bytes() == PDF and mode_of(path) == 0o600
    assert mode_of(path.parent) == 0o700
    assert answer["content"][0]["text"].startswith("### Result")
    assert "blob" not in str(answer)


def test_a_file_answer_that_is_not_base64_is_refused(tmp_path: Path) -> None:
    bad = [{"type": "resource", "resource": {"uri": "browser-mcp:file/x.pdf", "blob": "not base64!"}}]
    with pytest.raises(OutputNotAllowed, match="not base64"):
        saved({"content": bad}, None, OutputPlaces(tmp_path))


# Through the broker


async def test_a_snapshot_with_filename_is_saved_and_the_browser_never_hears_the_name(
    make_broker: MakeBroker, tmp_path: Path
) -> None:
    broker = await make_broker(output_dir=str(tmp_path / "outputs"))
    fake = await broker.extension(page(), actions=list(ACTIONS))
    answer_with(fake, [{"type": "text", "text": '### Snapshot\n- button "Buy" [ref=e2]'}])
    async with broker.mcp("Claude Code", MODERN) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        result = await client.call("browser_snapshot", {"filename": "snap.md"})
        assert not result.is_error, text(result)
    written = tmp_path / "outputs" / "Claude-Code" / "snap.md"
    assert text(result).startswith(f"Saved to {written} (")
    assert 'button "Buy"' in written.read_text() and mode_of(written) == 0o600
    assert "filename" not in (await fake.wait_for("browserAction"))["args"]


async def test_a_screenshot_with_filename_writes_the_image(make_broker: MakeBroker, tmp_path: Path) -> None:
    broker = await make_broker(output_dir=str(tmp_path))
    await broker.extension(page(), actions=list(ACTIONS))
    await broker.post("/tabs/7/claim")
    status, body = await broker.post("/tabs/7/actions/take_screenshot", {"filename": "shot.png"})
    assert status == 200, body
    [written] = files_under(tmp_path, "shot.png")
    assert written.read_bytes() == base64.b64decode(TINY_PNG)
    assert body["result"]["content"][0]["text"].startswith(f"Saved to {written}")
    assert all(part.get("type") != "image" for part in body["result"]["content"])


async def test_a_file_the_browser_answers_with_is_written_not_relayed(make_broker: MakeBroker, tmp_path: Path) -> None:
    broker = await make_broker(output_dir=str(tmp_path))
    fake = await broker.extension(page(), actions=list(ACTIONS))
    answer_with(fake, pdf_answer())
    await broker.post("/tabs/7/claim")
    status, body = await broker.post("/tabs/7/actions/snapshot")
    assert status == 200, body
    [written] = files_under(tmp_path, "page-*.pdf")
    assert written.read_bytes() == PDF and mode_of(written) == 0o600
    assert any(f"Saved to {written}" in part.get("text", "") for part in body["result"]["content"])


@pytest.mark.parametrize("filename", ["../../.ssh/x", "/etc/x.png", "a/../../x"])
async def test_a_filename_out_of_the_folders_is_refused_before_the_browser_hears(
    make_broker: MakeBroker, tmp_path: Path, filename: str
) -> None:
    broker = await make_broker(output_dir=str(tmp_path / "out"))
    fake = await broker.extension(page(), actions=list(ACTIONS))
    async with broker.mcp("Claude Code", MODERN) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await client.call("browser_take_screenshot", {"filename": filename})
        assert refused.is_error and text(refused).startswith("output_not_allowed:")
        # The session goes on.
        assert not (await client.call("browser_snapshot", {})).is_error
    assert len(fake.received("browserAction")) == 1
    assert not files_under(tmp_path)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("browser_find", {"text": "Buy"}),
        ("browser_console_messages", {"all": True}),
        ("browser_network_requests", {}),
        ("browser_network_request", {"index": 3, "part": "response-body"}),
        ("browser_evaluate", {"function": "() => document.title"}),
    ],
)
async def test_every_tool_with_a_filename_saves_its_answer_there(
    make_broker: MakeBroker, tmp_path: Path, tool: str, arguments: dict[str, Any]
) -> None:
    broker = await make_broker(output_dir=str(tmp_path / "outputs"))
    fake = await broker.extension(page(), actions=list(ACTIONS))
    answer_with(fake, [{"type": "text", "text": "### Result\nwhat the page holds: 42"}])
    async with broker.mcp("Claude Code", MODERN) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        result = await client.call(tool, {**arguments, "filename": "answer.md"})
        assert not result.is_error, text(result)
    written = tmp_path / "outputs" / "Claude-Code" / "answer.md"
    assert text(result).startswith(f"Saved to {written} (") and "42" not in text(result)
    assert "what the page holds: 42" in written.read_text() and mode_of(written) == 0o600
    heard = await fake.wait_for("browserAction")
    assert "filename" not in heard["args"]
    if tool != "browser_find":  # which the broker answers from a snapshot it asks for
        assert heard["args"] == {**heard["args"], **arguments}


def answers_by_action(fake: FakeExtension, contents: dict[str, list[dict[str, Any]]]) -> None:
    async def answer(action: dict[str, Any]) -> None:
        result = {"content": contents[action["action"]]}
        await fake.send({"type": "toolResult", "callId": action["callId"], "result": result})

    fake.on_action = answer


WEBM = b"\x1a\x45\xdf\xa3 a video"


def video_answers() -> dict[str, list[dict[str, Any]]]:
    video = {"uri": "browser-mcp:file/demo.webm", "mimeType": "video/webm", "blob": base64.b64encode(WEBM).decode()}
    return {
        "start_video": [{"type": "text", "text": "### Result\nRecording the tab"}],
        "stop_video": [{"type": "text", "text": "### Result\nRecorded 2.5 s"}, {"type": "resource", "resource": video}],
    }


async def test_a_videos_filename_given_at_its_start_is_where_its_stop_writes_it(
    make_broker: MakeBroker, tmp_path: Path
) -> None:
    broker = await make_broker(output_dir=str(tmp_path / "outputs"))
    fake = await broker.extension(page(), actions=list(ACTIONS))
    answers_by_action(fake, video_answers())
    async with broker.mcp("Claude Code", MODERN, caps="devtools") as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await client.call("browser_start_video", {"filename": "../../.ssh/x.webm"})
        assert refused.is_error and text(refused).startswith("output_not_allowed:"), text(refused)
        started = await client.call("browser_start_video", {"filename": "clips/demo.webm"})
        assert not started.is_error and "Recording the tab" in text(started), text(started)
        assert not files_under(tmp_path)
        stopped = await client.call("browser_stop_video", {})
        assert not stopped.is_error, text(stopped)
        written = tmp_path / "outputs" / "Claude-Code" / "clips" / "demo.webm"
        assert any(f"Saved to {written}" in getattr(part, "text", "") for part in stopped.content), stopped
        assert written.read_bytes() == WEBM and mode_of(written) == 0o600
        # The name served one video: the next one lands under a name of the broker's.
        await client.call("browser_start_video", {})
        again = await client.call("browser_stop_video", {})
        assert not again.is_error, text(again)
    assert len(files_under(tmp_path, "*.webm")) == 2
    heard = [action["args"] for action in fake.received("browserAction")]
    assert heard[0] == {"videoName": "demo.webm"} and "filename" not in heard[1]
