"""browser_set_storage_state's file, read by the broker under the upload rules (broker/state_files.py):
a real broker and the scripted fake extension, which hears the parsed state and never the path's
bytes nor a file outside the client's roots; and the storage group's argument checks, refused
before any browser hears of the call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from broker.core.browser_tools import ACTIONS, NAMED

from ..conftest import MakeBroker
from ..support.fakes import FakeTab
from ..support.mcp_clients import LEGACY, text

TAB = FakeTab(7, "https://mail.example/inbox", "Inbox")
STATE = {
    "cookies": [{"name": "sid", "value": "s", "domain": ".mail.example", "httpOnly": True, "sameSite": "Lax"}],
    "origins": [{"origin": "https://mail.example", "localStorage": [{"name": "k", "value": "v"}]}],
}


def test_the_storage_tools_are_the_storage_groups_and_name_playwrights_parameters() -> None:
    wanted = {
        "browser_cookie_list": {"domain", "path"},
        "browser_cookie_get": {"name"},
        "browser_cookie_set": {"name", "value", "domain", "path", "expires", "httpOnly", "secure", "sameSite"},
        "browser_cookie_delete": {"name"},
        "browser_cookie_clear": set(),
        "browser_storage_state": {"filename"},
        "browser_set_storage_state": {"filename"},
        **{
            f"browser_{area}_{op}": keys
            for area in ("localstorage", "sessionstorage")
            for op, keys in (
                ("list", set()),
                ("get", {"key"}),
                ("set", {"key", "value"}),
                ("delete", {"key"}),
                ("clear", set()),
            )
        },
    }
    for name, parameters in wanted.items():
        tool = NAMED[name]
        assert tool.group == "storage", name
        assert set(tool.parameters["properties"]) - {"tab"} == parameters, name
    assert NAMED["browser_set_storage_state"].reads_file and NAMED["browser_set_storage_state"].destructive


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "state.json").write_text(json.dumps(STATE))
    (tmp_path / "outside.json").write_text(json.dumps(STATE))
    (folder / "list.json").write_text("[1, 2]")
    return folder


async def test_the_file_is_read_by_the_broker_and_the_extension_hears_its_parsed_state(
    make_broker: MakeBroker, root: Path
) -> None:
    broker = await make_broker()
    fake = await broker.extension(TAB, actions=list(ACTIONS))
    async with broker.mcp("Saver", LEGACY, roots=[root.as_uri()], caps="storage") as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        result = await client.call("browser_set_storage_state", {"filename": "state.json"})
        assert not result.is_error, text(result)
        sent = await fake.wait_for("browserAction")
        assert sent["action"] == "set_storage_state" and "filename" not in sent["args"]
        assert sent["args"]["file"]["path"] == str((root / "state.json").resolve())
        assert "data" not in sent["args"]["file"]
        cookie = {
            "name": "sid",
            "value": "s",
            "domain": ".mail.example",
            "path": "/",
            "httpOnly": True,
            "secure": False,
            "sameSite": "Lax",
        }
        assert sent["args"]["state"] == {"cookies": [cookie], "origins": STATE["origins"]}


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        ({"filename": "../outside.json"}, "upload_not_allowed", "outside the folders"),
        ({"filename": "../../.ssh/x"}, "upload_not_allowed", "outside the folders"),
        ({"filename": "list.json"}, "invalid_request", "must be a JSON object"),
        ({"filename": "missing.json"}, "upload_not_allowed", "does not exist"),
        ({}, "invalid_request", "needs `filename`"),
    ],
)
async def test_a_file_the_upload_rules_refuse_never_reaches_the_browser(
    make_broker: MakeBroker, root: Path, args: dict[str, str], code: str, words: str
) -> None:
    broker = await make_broker()
    fake = await broker.extension(TAB, actions=list(ACTIONS))
    async with broker.mcp("Sneaky", LEGACY, roots=[root.as_uri()], caps="storage") as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        result = await client.call("browser_set_storage_state", args)
        assert result.is_error and text(result).startswith(f"{code}:") and words in text(result), text(result)
    assert fake.received("browserAction") == []


@pytest.mark.parametrize(
    ("tool", "args", "words"),
    [
        ("browser_cookie_set", {"name": "a"}, "needs `value`"),
        ("browser_cookie_set", {"name": "a", "value": "1", "sameSite": "Loose"}, "sameSite"),
        ("browser_cookie_set", {"name": "a", "value": "1", "expires": "soon"}, "expires"),
        ("browser_cookie_get", {}, "needs `name`"),
        ("browser_localstorage_set", {"key": "k"}, "needs `value`"),
        ("browser_sessionstorage_delete", {}, "needs `key`"),
    ],
)
async def test_the_storage_tools_arguments_are_checked_before_the_browser_hears(
    make_broker: MakeBroker, tool: str, args: dict[str, str], words: str
) -> None:
    broker = await make_broker()
    fake = await broker.extension(TAB, actions=list(ACTIONS))
    async with broker.mcp("Checker", LEGACY, caps="storage") as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        result = await client.call(tool, args)
        assert result.is_error and text(result).startswith("invalid_request:") and words in text(result), text(result)
    assert fake.received("browserAction") == []
