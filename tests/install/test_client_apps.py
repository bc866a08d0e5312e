"""``browser-mcp mcp-config --client-app APP [--write]``: each application's entry, merged without loss.

The command runs for real with HOME, XDG_CONFIG_HOME and CODEX_HOME in a temporary folder.
"""

from __future__ import annotations

import json
import stat
import tomllib
from pathlib import Path

import pytest

from ..support.cli_helpers import CLI, CliResult, run_cli


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


async def _config(home: Path, *args: str) -> CliResult:
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"), "CODEX_HOME": str(home / "codex")}
    return await run_cli("mcp-config", *args, discovery_dir=home / "discovery", as_flag=False, env=env)


OURS = {"command": CLI[0], "args": [*CLI[1:], "mcp"]}
# Where each application keeps its servers, and how our entry looks there (from its documentation).
EXPECTED = {
    "claude-code": (".claude.json", "mcpServers", {"type": "stdio", **OURS}),
    "claude-desktop": ("config/Claude/claude_desktop_config.json", "mcpServers", OURS),
    "cursor": (".cursor/mcp.json", "mcpServers", OURS),
    "vscode": ("config/Code/User/mcp.json", "servers", {"type": "stdio", **OURS}),
}


@pytest.mark.parametrize("app", list(EXPECTED))
async def test_each_json_application_gets_its_own_format_and_file(home: Path, app: str) -> None:
    file, key, entry = EXPECTED[app]
    printed = await _config(home, "--client-app", app)
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout) == {key: {"browser": entry}}
    assert f"add this to {home / file} (--write does it for you)" in printed.stderr
    written = await _config(home, "--client-app", app, "--write", "--name", "web")
    assert written.returncode == 0, written.stderr
    assert json.loads((home / file).read_text()) == {key: {"web": entry}}
    assert stat.S_IMODE((home / file).stat().st_mode) == 0o600


async def test_codex_gets_toml_merged_keeping_the_files_comments_and_other_servers(home: Path) -> None:
    printed = await _config(home, "--client-app", "codex")
    assert printed.returncode == 0, printed.stderr
    assert tomllib.loads(printed.stdout) == {"mcp_servers": {"browser": OURS}}
    assert f"add this to {home / 'codex' / 'config.toml'} (--write does it for you)" in printed.stderr
    config = home / "codex" / "config.toml"
    config.parent.mkdir()
    before = '# chosen with care\nmodel = "o3"  # the default\n\n[mcp_servers.github]\ncommand = "gh-mcp"\nargs = []\n'
    config.write_text(before)
    written = await _config(home, "--client-app", "codex", "--write")
    assert written.returncode == 0, written.stderr
    assert f"added server 'browser' in {config}" in written.stdout
    after = config.read_text()
    assert after.startswith(before), "what was there stays as it was, comments and layout too"
    assert tomllib.loads(after) == {
        "model": "o3",
        "mcp_servers": {"github": {"command": "gh-mcp", "args": []}, "browser": OURS},
    }
    assert (home / "codex" / "config.toml.bak").read_text() == before
    again = await _config(home, "--client-app", "codex", "--write")
    assert "nothing changed" in again.stdout
    assert config.read_text() == after


async def test_codex_write_replaces_another_installs_entry_and_creates_a_missing_file(home: Path) -> None:
    created = await _config(home, "--client-app", "codex", "--write", "--name", "web")
    assert created.returncode == 0, created.stderr
    config = home / "codex" / "config.toml"
    assert tomllib.loads(config.read_text()) == {"mcp_servers": {"web": OURS}}
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    config.write_text('[mcp_servers.web]\ncommand = "/old/venv/bin/browser-mcp"\nargs = ["mcp"]\n')
    replaced = await _config(home, "--client-app", "codex", "--write", "--name", "web")
    assert replaced.returncode == 0, replaced.stderr
    assert "replaced server 'web'" in replaced.stdout and "/old/venv/bin/browser-mcp" in replaced.stdout
    assert tomllib.loads(config.read_text()) == {"mcp_servers": {"web": OURS}}


@pytest.mark.parametrize(
    ("content", "said"),
    [("model = \n", "is not valid TOML"), ('mcp_servers = "none"\n', '"mcp_servers" is not a table')],
)
async def test_a_codex_config_that_is_not_toml_with_a_servers_table_is_refused_and_left_alone(
    home: Path, content: str, said: str
) -> None:
    config = home / "codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(content)
    refused = await _config(home, "--client-app", "codex", "--write")
    refused.assert_failed_saying(str(config), said)
    assert config.read_text() == content
    assert sorted(p.name for p in config.parent.iterdir()) == ["config.toml"]


async def test_write_merges_into_a_config_keeping_its_other_servers_and_keys(home: Path) -> None:
    config = home / ".claude.json"
    before = {
        "numStartups": 12,
        "mcpServers": {"github": {"type": "http", "url": "https://api.example/mcp"}},
        "projects": {"/src/app": {"mcpServers": {"db": {"command": "db-mcp"}}}},
    }
    config.write_text(json.dumps(before))
    config.chmod(0o640)
    written = await _config(home, "--client-app", "claude-code", "--write")
    assert written.returncode == 0, written.stderr
    assert f"added server 'browser' in {config}" in written.stdout
    after = json.loads(config.read_text())
    assert after == {**before, "mcpServers": {**before["mcpServers"], "browser": {"type": "stdio", **OURS}}}
    assert stat.S_IMODE(config.stat().st_mode) == 0o640
    assert json.loads((home / ".claude.json.bak").read_text()) == before
    again = await _config(home, "--client-app", "claude-code", "--write")
    assert "nothing changed" in again.stdout
    assert json.loads(config.read_text()) == after


async def test_write_replaces_an_entry_of_another_install_and_says_what_it_was(home: Path) -> None:
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir()
    old = {"command": "/old/venv/bin/browser-mcp", "args": ["mcp"]}
    config.write_text(json.dumps({"mcpServers": {"browser": old, "other": {"command": "x"}}}))
    written = await _config(home, "--client-app", "cursor", "--write")
    assert written.returncode == 0, written.stderr
    assert "replaced server 'browser'" in written.stdout and "/old/venv/bin/browser-mcp" in written.stdout
    assert json.loads(config.read_text()) == {"mcpServers": {"browser": OURS, "other": {"command": "x"}}}


@pytest.mark.parametrize("content", ['{"mcpServers": {"a": 1},}', "[1, 2]", '{"mcpServers": []}'])
async def test_a_config_that_is_not_a_json_object_of_servers_is_refused_and_left_alone(
    home: Path, content: str
) -> None:
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir()
    config.write_text(content)
    before = config.stat()
    refused = await _config(home, "--client-app", "cursor", "--write")
    assert refused.returncode == 1 and str(config) in refused.stderr and "Traceback" not in refused.stderr
    assert config.read_text() == content
    assert config.stat().st_mtime_ns == before.st_mtime_ns
    assert sorted(p.name for p in config.parent.iterdir()) == ["mcp.json"]


async def test_not_valid_json_is_named_as_such(home: Path) -> None:
    config = home / ".claude.json"
    config.write_text("{not json")
    refused = await _config(home, "--client-app", "claude-code", "--write")
    refused.assert_failed_saying(f"{config} is not valid JSON")


async def test_a_linked_config_is_written_through_the_link(home: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "claude.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"theme": "dark"}')
    (home / ".claude.json").symlink_to(dotfiles)
    written = await _config(home, "--client-app", "claude-code", "--write")
    assert written.returncode == 0, written.stderr
    assert (home / ".claude.json").is_symlink()
    assert json.loads(dotfiles.read_text())["theme"] == "dark"
    assert "browser" in json.loads(dotfiles.read_text())["mcpServers"]


async def test_write_without_an_application_is_refused(home: Path) -> None:
    (await _config(home, "--write")).assert_failed_saying("--write needs --client-app")
