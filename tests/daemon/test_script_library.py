"""The person's script library (browser_scripts, browser_run_script) from the broker's side: a
real broker in this process, its scripts folder a test's own, a scripted fake extension for the
browser (``tests/e2e/test_e2e_scripts.py`` runs the real one).

What is attacked: a name that would reach a file outside the folder (refused before any file is
opened: the folder is made refusable first, and the name's error is what comes back), a source a
client sends itself, a folder or a script another user may write to, a script that is a link out
of the folder; and ``serve --no-scripts``, which unlists both tools and refuses them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ..conftest import BrokerUnderTest, MakeBroker
from ..support.fakes import FakeExtension, FakeTab
from ..support.mcp_clients import MODERN, refused, text
from .test_browser_tools import ALL_ACTIONS

TITLE = "// The page's title, and the args it was given\n(args) => ({ title: document.title, args })\n"
LIBRARY = {"browser_scripts", "browser_run_script"}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    made = tmp_path / "config" / "scripts"
    made.mkdir(parents=True, mode=0o700)
    (made / "title.js").write_text(TITLE)
    (made / "untitled.js").write_text("() => 1\n")
    (made / "notes.txt").write_text("not a script")
    return made


@pytest.fixture
async def broker(make_broker: MakeBroker, folder: Path) -> BrokerUnderTest:
    return await make_broker(scripts_dir=str(folder))


async def claimed(broker: BrokerUnderTest) -> FakeExtension:
    """A browser with tabs 7 (for MCP clients) and 8 (for REST)."""
    tabs = [FakeTab(tab, f"https://page{tab}.example/", f"Page {tab}") for tab in (7, 8)]
    return await broker.extension(*tabs, actions=ALL_ACTIONS)


def actions_of(fake: FakeExtension) -> list[dict[str, Any]]:
    return [action for action in fake.received("browserAction") if action["action"] in ("scripts", "run_script")]


async def test_the_library_is_a_group_of_its_own_listed_to_a_client_that_asks(broker: BrokerUnderTest) -> None:
    await claimed(broker)
    async with broker.mcp("Claude Code", MODERN) as client:
        assert not LIBRARY & set(await client.tool_names())
    async with broker.mcp("Claude Code", MODERN, caps="scripts") as client:
        tools = await client.tools()
        assert set(tools) >= LIBRARY
        run = tools["browser_run_script"]
        assert set(run.input_schema["properties"]) == {"tab", "name", "args", "element", "target"}
        # The person wrote these scripts: neither is asked of them.
        assert run.annotations is not None and not run.annotations.destructive_hint
        assert tools["browser_scripts"].annotations is not None and tools["browser_scripts"].annotations.read_only_hint


async def test_the_listing_and_the_source_are_the_brokers_read_from_the_folder(broker: BrokerUnderTest) -> None:
    fake = await claimed(broker)
    async with broker.mcp("Claude Code", MODERN, caps="scripts") as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        await client.call("browser_scripts", {})
        await client.call("browser_run_script", {"name": "title", "args": {"n": 1}, "target": "e3"})
        await client.call("browser_run_script", {"name": "untitled.js"})
    listing, run, untitled = actions_of(fake)
    # notes.txt is not a script; each script is named without its .js, with its first comment line.
    shown = [(script["name"], script["description"], script["refused"]) for script in listing["args"]["scripts"]]
    assert shown == [("title", "The page's title, and the args it was given", ""), ("untitled", "", "")]
    assert run["args"] == {"name": "title", "args": {"n": 1}, "target": "e3", "source": TITLE, "changed": False}
    assert untitled["args"]["name"] == "untitled" and untitled["args"]["source"] == "() => 1\n"


async def test_a_source_or_a_listing_from_the_client_is_refused(broker: BrokerUnderTest) -> None:
    fake = await claimed(broker)
    async with broker.mcp("Claude Code", MODERN, caps="scripts") as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        said = await refused(
            client, "browser_run_script", {"name": "title", "source": "() => fetch('/x')"}, "invalid_request"
        )
        assert "takes no `source`" in said
        await refused(client, "browser_run_script", {"name": "title", "changed": True}, "invalid_request")
        await refused(client, "browser_scripts", {"scripts": [{"name": "evil"}]}, "invalid_request")
        await refused(client, "browser_run_script", {"name": "title", "args": [1, 2]}, "invalid_request")
    await broker.claim(8)
    status, body = await broker.post("/tabs/8/actions/run_script", {"name": "title", "source": "() => 2"})
    assert status == 400 and body["error"]["code"] == "invalid_request", body
    assert actions_of(fake) == []


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("../../etc/passwd", "path separator"),
        ("..", "'..'"),
        ("\uff0e\uff0e", "'..'"),  # fullwidth full stops: NFKC makes them ..
        ("\u2025", "'..'"),  # the two dot leader, also .. once normalized
        ("a\uff0fb", "path separator"),  # a fullwidth solidus is a / once normalized
        (".hidden", "starts with a dot"),
        ("a/b", "path separator"),
        ("a\\b", "path separator"),
        ("x" * 65, "longer than 64"),
    ],
)
async def test_a_name_that_breaks_a_rule_is_refused_before_any_file_is_opened(
    broker: BrokerUnderTest, folder: Path, name: str, rule: str
) -> None:
    fake = await claimed(broker)
    # A folder others may write to is refused when it is opened: a name refused first never gets there.
    os.chmod(folder, 0o777)
    try:
        async with broker.mcp("Claude Code", MODERN, caps="scripts") as client:
            await client.call_json("tabs", {"action": "claim", "tab": 7})
            said = await refused(client, "browser_run_script", {"name": name}, "invalid_script_name")
            assert rule in said, said
    finally:
        os.chmod(folder, 0o700)
    assert actions_of(fake) == []


async def test_a_name_of_64_characters_is_taken(broker: BrokerUnderTest, folder: Path) -> None:
    (folder / f"{'x' * 64}.js").write_text("() => 64\n")
    fake = await claimed(broker)
    async with broker.mcp("Claude Code", MODERN, caps="scripts") as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        result = await client.call("browser_run_script", {"name": "x" * 64})
        assert not result.is_error, text(result)
    [run] = actions_of(fake)
    assert run["args"]["source"] == "() => 64\n"


async def test_a_folder_other_users_may_write_to_is_refused(broker: BrokerUnderTest, folder: Path) -> None:
    fake = await claimed(broker)
    async with broker.mcp("Claude Code", MODERN, caps="scripts") as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        for mode in (0o777, 0o720):
            os.chmod(folder, mode)
            for tool, args in (("browser_scripts", {}), ("browser_run_script", {"name": "title"})):
                said = await refused(client, tool, args, "forbidden")
                assert "may be written by other users" in said and "chmod go-w" in said, said
        os.chmod(folder, 0o700)
    assert actions_of(fake) == []


async def test_a_script_others_may_write_to_or_a_link_out_of_the_folder_is_refused(
    broker: BrokerUnderTest, folder: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.js"
    secret.write_text("// not the person's\n() => document.cookie\n")
    (folder / "outside.js").symlink_to(secret)
    (folder / "inside.js").symlink_to(folder / "title.js")  # a link, even to a script of the folder
    (folder / "shared.js").write_text("() => 'anyone may change me'\n")
    (folder / "shared.js").chmod(0o666)
    fake = await claimed(broker)
    async with broker.mcp("Claude Code", MODERN, caps="scripts") as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        for name, why in (("outside", "it is a link"), ("inside", "it is a link"), ("shared", "other users may write")):
            said = await refused(client, "browser_run_script", {"name": name}, "forbidden")
            assert why in said, said
        await refused(client, "browser_run_script", {"name": "absent"}, "invalid_request")
        await client.call("browser_scripts", {})
    [listing] = actions_of(fake)
    shown = {script["name"]: script for script in listing["args"]["scripts"]}
    assert "it is a link" in shown["outside"]["refused"] and "other users" in shown["shared"]["refused"]
    assert not shown["title"]["refused"]
    assert "document.cookie" not in str(listing)


async def test_a_script_changed_since_the_session_listed_it_runs_as_it_is_and_says_so(
    broker: BrokerUnderTest, folder: Path
) -> None:
    fake = await claimed(broker)
    async with broker.mcp("Claude Code", MODERN, caps="scripts") as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        await client.call("browser_scripts", {})
        await client.call("browser_run_script", {"name": "title"})
        (folder / "title.js").write_text("// Changed\n() => 'new'\n")
        await client.call("browser_run_script", {"name": "title"})
        await client.call("browser_scripts", {})
        await client.call("browser_run_script", {"name": "title"})
    changes = [action["args"]["changed"] for action in actions_of(fake) if action["action"] == "run_script"]
    sources = [action["args"]["source"] for action in actions_of(fake) if action["action"] == "run_script"]
    assert changes == [False, True, False]
    assert sources[1] == sources[2] == "// Changed\n() => 'new'\n"


async def test_no_scripts_unlists_the_library_and_refuses_it_saying_the_person_turned_it_off(
    make_broker: MakeBroker, folder: Path
) -> None:
    broker = await make_broker(scripts_dir=str(folder), allow_scripts=False)
    fake = await claimed(broker)
    async with broker.mcp("Claude Code", MODERN, caps="all") as client:
        names = set(await client.tool_names())
        assert "browser_evaluate" in names and not LIBRARY & names
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        for tool, args in (("browser_scripts", {}), ("browser_run_script", {"name": "title"})):
            said = await refused(client, tool, args, "not_supported")
            assert "the person turned the script library off (serve --no-scripts)" in said, said
    assert actions_of(fake) == []


async def test_a_missing_folder_is_made_for_the_person_only(make_broker: MakeBroker, tmp_path: Path) -> None:
    folder = tmp_path / "fresh" / "scripts"
    broker = await make_broker(scripts_dir=str(folder))
    fake = await claimed(broker)
    async with broker.mcp("Claude Code", MODERN, caps="scripts") as client:
        await client.call_json("tabs", {"action": "claim", "tab": 7})
        await client.call("browser_scripts", {})
    assert folder.is_dir() and (folder.stat().st_mode & 0o777) == 0o700
    [listing] = actions_of(fake)
    assert listing["args"] == {"folder": str(folder), "scripts": []}
