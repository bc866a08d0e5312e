"""browser_file_upload from the broker's side: which files a caller may send to a page.

A scripted fake extension that carries out browser actions stands in for the browser
(``tests/test_e2e_upload.py`` runs the real one). What is tested is what an MCP or REST client
sees: a file under its MCP roots or a ``--upload-dir`` folder reaches the extension as an
absolute resolved path with its name and size; anything else is a clear error and no frame
reaches the extension. ``tests/test_mcp_stdio.py`` has the folder ``browser-mcp mcp`` starts in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from mcp.client.streamable_http import streamable_http_client

from broker.core.browser_tools import ACTIONS
from broker.uploads import WORKDIR_HEADER

from .conftest import TOKEN, MakeBroker
from .fakes import FakeTab
from .mcp_clients import ERAS, LEGACY, MODERN, loopback_http, sdk_client, text

ALL_ACTIONS = list(ACTIONS)
TAB = FakeTab(7, "https://upload.example/form", "Upload form")


def uploaded(path: Path) -> dict[str, Any]:
    """browser_file_upload's arguments as the extension gets them for one file."""
    resolved = path.resolve()
    return {
        "paths": [str(resolved)],
        "files": [{"path": str(resolved), "name": resolved.name, "size": resolved.stat().st_size}],
    }


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, Path]:
    """A root the client declares, an --upload-dir folder, and a folder outside both, each with a file."""
    made = {}
    for name in ("root", "uploads", "outside"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / f"{name}.txt").write_text(f"a file in {name}\n")
        made[name] = folder
    return made


@pytest.mark.parametrize("era", ERAS)
async def test_a_file_under_the_clients_roots_reaches_the_extension_resolved(
    make_broker: MakeBroker, folders: dict[str, Path], era: str
) -> None:
    broker = await make_broker(upload_dirs=(str(folders["uploads"]),))
    fake = await broker.extension(TAB, actions=ALL_ACTIONS)
    # 2025: the broker asks the client for its roots; 2026: the call asks for them as input.
    async with broker.mcp("Claude Code", era, roots=[folders["root"].as_uri()]) as client:
        tools = await client.tools()
        annotations = tools["browser_file_upload"].annotations
        assert annotations is not None and annotations.destructive_hint is True
        assert tools["browser_file_upload"].input_schema["properties"]["paths"]["type"] == "array"
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        # Named through a detour (..), the file goes as the path it resolves to.
        detour = folders["root"] / ".." / "root" / "root.txt"
        # What a client says of the files is not taken: the broker describes them itself.
        claimed = [{"path": "/elsewhere/cat.jpg", "name": "cat.jpg", "size": 1}]
        result = await client.call("browser_file_upload", {"paths": [str(detour)], "files": claimed})
        assert not result.is_error, text(result)
        sent = await fake.wait_for("browserAction")
        assert (sent["action"], sent["args"]) == ("file_upload", uploaded(folders["root"] / "root.txt"))
        # --upload-dir holds for every caller, beside its roots.
        result = await client.call("browser_file_upload", {"paths": [str(folders["uploads"] / "uploads.txt")]})
        assert not result.is_error, text(result)
        # A symlink inside the roots to a file inside them is that file.
        (folders["root"] / "link.txt").symlink_to(folders["root"] / "root.txt")
        result = await client.call("browser_file_upload", {"paths": [str(folders["root"] / "link.txt")]})
        assert not result.is_error, text(result)
        assert fake.received("browserAction")[-1]["args"] == uploaded(folders["root"] / "root.txt")
        # No paths cancels the chooser: nothing to check.
        result = await client.call("browser_file_upload", {})
        assert not result.is_error, text(result)
        assert fake.received("browserAction")[-1]["args"] == {"paths": [], "files": []}


@pytest.mark.parametrize(
    ("case", "code", "words"),
    [
        ("outside", "upload_not_allowed", "outside the folders files may be uploaded from"),
        ("symlink outside", "upload_not_allowed", "which leads to"),
        ("folder", "upload_not_allowed", "is a folder"),
        ("missing", "upload_not_allowed", "does not exist"),
        ("too large", "upload_too_large", "over the upload limit of 1,000 bytes"),
        ("relative", "invalid_request", "not an absolute path"),
        ("home-relative", "invalid_request", "not an absolute path"),
        ("symlink loop", "upload_not_allowed", "cannot be resolved"),
        ("nul", "upload_not_allowed", "cannot be resolved"),
        ("name too long", "upload_not_allowed", "name too long"),
        ("one bad of two", "upload_not_allowed", "outside the folders"),
    ],
)
@pytest.mark.parametrize("era", ERAS)
async def test_a_file_it_may_not_send_is_a_clear_error_and_nothing_is_sent(
    make_broker: MakeBroker, folders: dict[str, Path], case: str, code: str, words: str, era: str
) -> None:
    root = folders["root"]
    (root / "big.bin").write_bytes(b"x" * 1001)
    (root / "escape.txt").symlink_to(folders["outside"] / "outside.txt")
    (root / "sub").mkdir()
    (root / "loop").symlink_to(root / "loop")
    paths = {
        "outside": [str(folders["outside"] / "outside.txt")],
        "symlink outside": [str(root / "escape.txt")],
        "folder": [str(root / "sub")],
        "missing": [str(root / "gone.txt")],
        "too large": [str(root / "big.bin")],
        "relative": ["root.txt"],
        "home-relative": ["~/root.txt"],
        "symlink loop": [str(root / "loop")],
        "nul": [str(root / "root.txt\x00.png")],
        "name too long": [str(root / ("x" * 5000))],
        "one bad of two": [str(root / "root.txt"), str(folders["outside"] / "outside.txt")],
    }[case]
    broker = await make_broker(upload_max_bytes=1000)
    fake = await broker.extension(TAB, actions=ALL_ACTIONS)
    async with broker.mcp("Claude Code", era, roots=[root.as_uri()]) as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await client.call("browser_file_upload", {"paths": paths})
        assert refused.is_error and text(refused).startswith(f"{code}:") and words in text(refused), text(refused)
        assert fake.received("browserAction") == []
        # Nothing else is disturbed: the next good call goes through.
        result = await client.call("browser_file_upload", {"paths": [str(root / "root.txt")]})
        assert not result.is_error, text(result)


async def test_a_client_without_roots_over_http_uploads_from_upload_dirs_alone(
    make_broker: MakeBroker, folders: dict[str, Path]
) -> None:
    broker = await make_broker(upload_dirs=(str(folders["uploads"]),))
    fake = await broker.extension(TAB, actions=ALL_ACTIONS)
    for era in (LEGACY, MODERN):
        async with broker.mcp(f"client {era}", era) as client:
            await client.call_json("tabs", {"action": "claim", "tab": 7})
            refused = await client.call("browser_file_upload", {"paths": [str(folders["root"] / "root.txt")]})
            assert refused.is_error and text(refused).startswith("upload_not_allowed:"), text(refused)
            assert str(folders["uploads"].resolve()) in text(refused)
            result = await client.call("browser_file_upload", {"paths": [str(folders["uploads"] / "uploads.txt")]})
            assert not result.is_error, text(result)
            await client.call_json("tabs", {"action": "release", "tab": 7})
    expected = uploaded(folders["uploads"] / "uploads.txt")
    assert [sent["args"] for sent in fake.received("browserAction")] == [expected, expected]


async def test_a_working_folder_is_taken_from_browser_mcp_mcp_alone(
    make_broker: MakeBroker, folders: dict[str, Path]
) -> None:
    # The header browser-mcp mcp sends on its WebSocket, sent by an HTTP client instead.
    broker = await make_broker()
    fake = await broker.extension(TAB, actions=ALL_ACTIONS)
    headers = {"Authorization": f"Bearer {TOKEN}", WORKDIR_HEADER: quote(str(folders["root"]))}
    async with (
        loopback_http(headers) as http,
        sdk_client(streamable_http_client(broker.mcp_url, http_client=http), "posing", MODERN) as client,
    ):
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        refused = await client.call("browser_file_upload", {"paths": [str(folders["root"] / "root.txt")]})
        assert refused.is_error and text(refused).startswith("upload_not_allowed:"), text(refused)
    assert fake.received("browserAction") == []


async def test_rest_uploads_only_from_upload_dirs(make_broker: MakeBroker, folders: dict[str, Path]) -> None:
    without = await make_broker()
    fake = await without.extension(TAB, actions=ALL_ACTIONS)
    await without.claim(7)
    status, body = await without.post(
        "/tabs/7/actions/file_upload", {"paths": [str(folders["uploads"] / "uploads.txt")]}
    )
    assert (status, body["error"]["code"]) == (403, "upload_not_allowed"), body
    assert "none here" in body["error"]["message"] and "--upload-dir" in body["error"]["message"]
    assert fake.received("browserAction") == []

    broker = await make_broker(upload_dirs=(str(folders["uploads"]),))
    fake = await broker.extension(TAB, actions=ALL_ACTIONS)
    await broker.claim(7)
    status, body = await broker.post("/tabs/7/actions/file_upload", {"paths": [str(folders["root"] / "root.txt")]})
    assert (status, body["error"]["code"]) == (403, "upload_not_allowed"), body
    status, body = await broker.post("/tabs/7/actions/file_upload", {"paths": "not a list"})
    assert (status, body["error"]["code"]) == (400, "invalid_request"), body
    assert fake.received("browserAction") == []
    status, body = await broker.post(
        "/tabs/7/actions/file_upload", {"paths": [str(folders["uploads"] / "uploads.txt")]}
    )
    assert status == 200, body
    sent = await fake.wait_for("browserAction")
    assert sent["args"] == uploaded(folders["uploads"] / "uploads.txt")
