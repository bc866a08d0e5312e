"""The broker's lasting token and ``browser-mcp mcp-config``: configurations that work when pasted."""

from __future__ import annotations

import json
import shlex
import stat
from pathlib import Path

import aiohttp
import pytest

from broker.discovery import load_or_create_token

from ..support.cli_helpers import CLI, Brokers, run_cli, token_file_for


def test_token_is_created_private_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "config" / "token"
    token = load_or_create_token(path)
    assert len(token) >= 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert load_or_create_token(path) == token


@pytest.mark.parametrize("mode", [0o644, 0o660])
def test_token_file_others_can_read_is_replaced(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "token"
    path.write_text("x" * 40)
    path.chmod(mode)
    token = load_or_create_token(path)
    assert token != "x" * 40
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_symlinked_token_file_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("y" * 40)
    target.chmod(0o600)
    link = tmp_path / "token"
    link.symlink_to(target)
    token = load_or_create_token(link)
    assert token != "y" * 40 and target.read_text() == "y" * 40
    assert not link.is_symlink()


async def test_token_survives_a_broker_restart(tmp_path: Path) -> None:
    discovery = tmp_path / "discovery"
    async with Brokers(discovery) as brokers:
        first = await brokers.start()
        first_token = first.token
        second = await brokers.start()
        assert second.token == first_token
    assert token_file_for(discovery).read_text().strip() == first_token


async def test_mcp_config_prints_commands_that_work(tmp_path: Path) -> None:
    discovery = tmp_path / "discovery"
    async with Brokers(discovery) as brokers, aiohttp.ClientSession() as session:
        broker = await brokers.start()
        printed = await run_cli("mcp-config", "--client", "cursor", discovery_dir=discovery)
        assert printed.returncode == 0, printed.stderr
        lines = printed.stdout.splitlines()
        stdio = next(line for line in lines if line.startswith("claude mcp add browser -- "))
        assert shlex.split(stdio)[5:] == [*CLI, "mcp", "--discovery-dir", str(discovery.resolve())]
        http = shlex.split(next(line for line in lines if line.startswith("claude mcp add --transport http")))
        url, header = http[6], http[8]
        assert url == f"http://127.0.0.1:{broker.port}/mcp"
        assert header.startswith("Authorization: Bearer bmcp_cursor_")
        name, _, value = header.partition(": ")
        async with session.get(f"http://127.0.0.1:{broker.port}/tabs", headers={name: value}) as response:
            assert response.status == 200
        start = printed.stdout.index('{\n  "mcpServers"')
        stdio_json = json.JSONDecoder().raw_decode(printed.stdout[start:])[0]
        assert stdio_json["mcpServers"]["browser"]["args"][-3:] == ["mcp", "--discovery-dir", str(discovery.resolve())]


async def test_mcp_config_refuses_a_bad_client_name(tmp_path: Path) -> None:
    printed = await run_cli("mcp-config", "--client", "no spaces", discovery_dir=tmp_path)
    assert printed.returncode == 1 and "letters, digits or dashes" in printed.stderr
    assert printed.stdout == ""
