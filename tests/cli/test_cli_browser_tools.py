"""The built-in browser tools from a shell, run as a user runs them against a real broker subprocess
with a fake extension: claim, snapshot, screenshot, act and uploads; windows, history and bookmarks.

The tests share the module's broker (``shared_broker``), each with a fake browser of its own,
closed after it; the upload test starts a broker with its own options in a folder of its own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ..conftest import ConnectFake
from ..support.cli_helpers import Brokers, SharedBroker, run_cli, table_rows
from ..support.fakes import FakeExtension, FakeTab
from .shop_cli import SHOP_URL, cli, shop_tabs


@pytest.fixture
def discovery_dir(shared_broker: SharedBroker) -> Path:
    """Where the commands find the module's broker."""
    return shared_broker.discovery_dir


@pytest.fixture
async def browser(shared_broker: SharedBroker, connect_fake: ConnectFake) -> FakeExtension:
    """A fake browser whose extension carries out the built-in browser actions."""
    return await connect_fake(shared_broker, *shop_tabs(), actions=["snapshot", "click", "take_screenshot", "navigate"])


async def test_snapshot_needs_a_claim_and_then_prints_the_page(discovery_dir: Path, browser: FakeExtension) -> None:
    refused = await cli(discovery_dir, "snapshot", "7")
    # The module's broker has met other tests' browsers: which key this one has varies.
    key = re.search(r"browser-mcp claim (b\d+):7", refused.stderr)
    assert key is not None, refused.stderr
    refused.assert_failed_saying("tab_not_claimed")

    claimed = await cli(discovery_dir, "claim", "7")
    assert claimed.returncode == 0, claimed.stderr
    assert claimed.stdout == f"tab {key.group(1)}:7 (Shoe shop) is yours (the command line's)\n"
    result = await cli(discovery_dir, "snapshot", "7")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "snapshot in tab 7 with {}\n"

    released = await cli(discovery_dir, "release", "7")
    assert released.returncode == 0 and "the person's again" in released.stdout
    assert (await cli(discovery_dir, "snapshot", "7")).returncode == 1


async def test_screenshot_writes_the_picture(discovery_dir: Path, tmp_path: Path, browser: FakeExtension) -> None:
    await cli(discovery_dir, "claim", "7")
    result = await cli(discovery_dir, "screenshot", "7", "-o", str(tmp_path / "shot.png"), "--full-page")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "shot.png").read_bytes().startswith(b"\x89PNG")
    assert result.stdout.startswith(f"saved {tmp_path / 'shot.png'} (")
    [sent] = browser.received("browserAction")
    assert sent["args"] == {"type": "png", "fullPage": True}


async def test_act_runs_a_tool_by_its_name(discovery_dir: Path, browser: FakeExtension) -> None:
    await cli(discovery_dir, "claim", "7")
    result = await cli(discovery_dir, "act", "7", "browser_click", '{"element": "Buy", "ref": "e4"}')
    assert result.returncode == 0, result.stderr
    assert result.stdout == 'click in tab 7 with {"element": "Buy", "target": "e4"}\n'
    bad = await cli(discovery_dir, "act", "7", "click", "[1]")
    bad.assert_failed_saying("must be a JSON object")
    unknown = await cli(discovery_dir, "act", "7", "fly")
    unknown.assert_failed_saying("no built-in action 'fly'")


async def test_act_uploads_files_only_from_the_brokers_upload_dirs(tmp_path: Path, connect_fake: ConnectFake) -> None:
    discovery_dir = tmp_path / "discovery"
    async with Brokers(discovery_dir) as brokers:
        await _uploads_only_from_the_upload_dirs(tmp_path, discovery_dir, brokers, connect_fake)


async def _uploads_only_from_the_upload_dirs(
    tmp_path: Path, discovery_dir: Path, brokers: Brokers, connect_fake: ConnectFake
) -> None:
    refused = await cli(discovery_dir, "serve", "--port", "0", "--upload-dir", str(tmp_path / "nowhere"))
    refused.assert_failed_saying("--upload-dir must name folders", "nowhere")
    uploads, elsewhere = tmp_path / "uploads", tmp_path / "elsewhere"
    for folder in (uploads, elsewhere):
        folder.mkdir()
        (folder / "report.txt").write_text("report\n")
    broker = await brokers.start("--upload-dir", str(uploads), "--upload-max-mb", "1")
    fake = await connect_fake(broker, *shop_tabs(), actions=["file_upload"])
    await cli(discovery_dir, "claim", "7")
    outside = await cli(
        discovery_dir, "act", "7", "file_upload", json.dumps({"paths": [str(elsewhere / "report.txt")]})
    )
    outside.assert_failed_saying("outside the folders files may be uploaded from", str(uploads))
    assert fake.received("browserAction") == []
    # A path relative to where the command runs.
    result = await run_cli(
        "act", "7", "browser_file_upload", '{"paths": ["report.txt"]}', discovery_dir=discovery_dir, cwd=uploads
    )
    assert result.returncode == 0, result.stderr
    sent = await fake.wait_for("browserAction")
    described = [{key: file[key] for key in ("path", "name", "size", "data")} for file in sent["args"]["files"]]
    report = {"path": str((uploads / "report.txt").resolve()), "name": "report.txt", "size": 7, "data": "cmVwb3J0Cg=="}
    assert described == [report]  # its bytes go with it, as read when checked


@pytest.fixture
async def windowed(shared_broker: SharedBroker, connect_fake: ConnectFake) -> FakeExtension:
    """A fake browser that knows windows, history and bookmarks: the person's shop tab in window 1."""
    tab = FakeTab(7, SHOP_URL, "Shoe shop", window_id=1)
    return await connect_fake(shared_broker, tab, features=["windows", "history", "bookmarks"])


async def test_windows_lists_opens_and_refuses_the_persons(discovery_dir: Path, windowed: FakeExtension) -> None:
    opened = await cli(discovery_dir, "windows", "open", "https://mine.example/")
    assert opened.returncode == 0, opened.stderr
    window = json.loads(opened.stdout)["window"]
    # The module's broker has met other tests' browsers: this one's key is the one it names.
    key = window["browser"]
    listed = await cli(discovery_dir, "windows")
    rows = {row["WINDOW"]: row for row in table_rows(listed.stdout)}
    assert (rows[f"{key}:1"]["YOURS"], rows[f"{key}:1"]["TABS"]) == ("-", "7")
    assert rows[f"{key}:{window['id']}"]["YOURS"] == "yes"
    refused = await cli(discovery_dir, "windows", "close", "1")
    refused.assert_failed_saying(f"the person's tab {key}:7", "window_not_owned")
    closed = await cli(discovery_dir, "windows", "close", str(window["id"]))
    assert closed.returncode == 0 and json.loads(closed.stdout)["closed"]["id"] == window["id"]
    tabs = await cli(discovery_dir, "tabs")
    assert [row["WINDOW"] for row in table_rows(tabs.stdout)] == ["1#0"]


async def test_history_and_bookmarks_say_where_to_share_them(discovery_dir: Path, windowed: FakeExtension) -> None:
    refused = await cli(discovery_dir, "history", "shoes")
    refused.assert_failed_saying("consent_required", "options")
    windowed.shared = True
    windowed.history = [{"title": "Red shoes", "url": SHOP_URL, "time": "2026-05-01T09:00:00.000Z"}]
    found = await cli(discovery_dir, "history", "shoes", "--max", "5", "--since", "2026-04-01")
    assert found.returncode == 0, found.stderr
    assert table_rows(found.stdout) == [{"TIME": "2026-05-01T09:00:00.000Z", "TITLE": "Red shoes", "URL": SHOP_URL}]
    added = await cli(discovery_dir, "bookmarks", "--add", SHOP_URL, "--title", "Shoes to buy")
    assert added.returncode == 0 and json.loads(added.stdout)["bookmark"]["title"] == "Shoes to buy"
    searched = await cli(discovery_dir, "bookmarks", "Shoes")
    assert [row["TITLE"] for row in table_rows(searched.stdout)] == ["Shoes to buy"]


async def test_history_and_bookmarks_are_deleted_and_the_tree_listed(
    discovery_dir: Path, shared_broker: SharedBroker, connect_fake: ConnectFake
) -> None:
    features = ["windows", "history", "bookmarks", "deleteHistory", "bookmarkTree", "deleteBookmark"]
    fake = await connect_fake(shared_broker, FakeTab(7, SHOP_URL, "Shoe shop", window_id=1), features=features)
    fake.shared = True
    fake.history = [{"title": "Red shoes", "url": SHOP_URL, "time": "2026-05-01T09:00:00.000Z", "ms": 1777626000000}]
    fake.bookmark_nodes = [
        {"id": "1", "parentId": "0", "title": "Bookmarks bar", "folder": True, "depth": 0},
        {"id": "10", "parentId": "1", "title": "Shoes", "folder": True, "depth": 1},
        {"id": "11", "parentId": "10", "title": "Red shoes", "url": SHOP_URL, "depth": 2},
    ]
    tree = await cli(discovery_dir, "bookmarks", "--tree", "--max", "2")
    assert tree.returncode == 0, tree.stderr
    assert [row["ID"] for row in table_rows(tree.stdout.rsplit("\n(", 1)[0])] == ["1", "10"]
    assert "the first 2 of 3" in tree.stdout
    refused = await cli(discovery_dir, "bookmarks", "--delete", "10")
    refused.assert_failed_saying("folder_not_empty")
    fake.approval = "deny"
    denied = await cli(discovery_dir, "history", "--delete", SHOP_URL)
    denied.assert_failed_saying("not_approved")
    fake.approval = "allow"
    deleted = await cli(discovery_dir, "history", "--delete", SHOP_URL)
    assert deleted.returncode == 0 and json.loads(deleted.stdout)["deleted"] == {"url": SHOP_URL, "visits": 1}
    open_ended = await cli(discovery_dir, "history", "--delete", "--since", "2026-05-01")
    open_ended.assert_failed_saying("`endTime` is missing")
    ranged = await cli(discovery_dir, "history", "--delete", "--since", "2026-05-01", "--until", "2026-05-02")
    assert ranged.returncode == 0, ranged.stderr
    removed = await cli(discovery_dir, "bookmarks", "--delete", "10", "--recursive")
    assert removed.returncode == 0 and json.loads(removed.stdout)["deleted"]["id"] == "10"
    assert [n["id"] for n in fake.bookmark_nodes] == ["1"]
    asked = [(m["request"], m["args"]) for m in fake.received("browserRequest")]
    assert asked[-2:] == [
        ("deleteHistory", {"startTime": 1777593600000.0, "endTime": 1777680000000.0}),
        ("deleteBookmark", {"id": "10", "recursive": True}),
    ]


async def test_a_window_of_another_scheme_than_the_webs_is_refused(
    discovery_dir: Path, windowed: FakeExtension
) -> None:
    refused = await cli(discovery_dir, "windows", "open", "file:///etc/passwd")
    refused.assert_failed_saying("invalid_request", "cannot open 'file:///etc/passwd'")
    assert windowed.received("openTab") == []
