"""``browser-mcp scripts path|list``: the person's script library from the command line, in the
user config folder platformdirs names (``XDG_CONFIG_HOME`` here a test's own), made 0700 when
missing, and listed as browser_scripts lists it."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from ..support.cli_helpers import run_cli


async def test_scripts_path_prints_the_user_config_folders_scripts_made_for_the_person_alone(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    result = await run_cli("scripts", "path", discovery_dir=tmp_path / "discovery", as_flag=False, env=env)
    assert result.returncode == 0, result.stderr
    folder = Path(result.stdout.strip())
    assert folder == tmp_path / "config" / "browser-mcp" / "scripts"
    made = os.stat(folder)
    assert stat.S_ISDIR(made.st_mode) and stat.S_IMODE(made.st_mode) == 0o700


async def test_scripts_list_shows_each_description_and_each_refusal(tmp_path: Path) -> None:
    folder = tmp_path / "scripts"
    folder.mkdir(mode=0o700)
    (folder / "links.js").write_text("// Every link of the page\n() => [...document.links].map((a) => a.href)\n")
    (folder / "shared.js").write_text("() => 1\n")
    os.chmod(folder / "shared.js", 0o666)
    env = {"BROWSER_MCP_SCRIPTS_DIR": str(folder)}
    table = await run_cli("scripts", "list", discovery_dir=tmp_path / "discovery", as_flag=False, env=env)
    assert table.returncode == 0, table.stderr
    assert "Every link of the page" in table.stdout and "refused: other users may write to it" in table.stdout
    listed = await run_cli("scripts", "list", "--json", discovery_dir=tmp_path / "discovery", as_flag=False, env=env)
    answer = json.loads(listed.stdout)
    assert answer["folder"] == str(folder)
    assert [(s["name"], s["description"]) for s in answer["scripts"]] == [
        ("links", "Every link of the page"),
        ("shared", ""),
    ]
    os.chmod(folder, 0o777)
    refused = await run_cli("scripts", "list", discovery_dir=tmp_path / "discovery", as_flag=False, env=env)
    refused.assert_failed_saying("may be written by other users", "chmod go-w")
