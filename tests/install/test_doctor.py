"""``browser-mcp doctor``: each finding made on purpose, against a real broker, in a temporary home.

A healthy setup (a broker, a browser connected, the native host and a Cursor configuration of this
install) passes with exit code 0; each test then breaks one thing and reads what doctor says.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import attrs
import pytest

from broker.core.config import DEFAULTS
from broker.core.limits import descriptors_wanted
from broker.install.doctor import PORTS

from ..support.cli_helpers import (
    Brokers,
    CliResult,
    ReachableBroker,
    SharedBroker,
    connect_extension,
    discovery_fields,
    lookalike_broker,
    plant,
    run_cli,
    token_file_for,
)
from ..support.fakes import FakeExtension, FakeTab
from ..support.probed_ports import free_probed_ports, start_probed_broker


@attrs.frozen
class Setup:
    home: Path
    discovery: Path
    broker: ReachableBroker | None

    @property
    def env(self) -> dict[str, str]:
        return {"HOME": str(self.home), "XDG_CONFIG_HOME": str(self.home / "config")}

    async def cli(self, *args: str, as_flag: bool = True) -> CliResult:
        return await run_cli(*args, discovery_dir=self.discovery, as_flag=as_flag, env=self.env)

    async def doctor(self) -> CliResult:
        return await self.cli("doctor")


def _line(result: CliResult, label: str, check: str) -> str:
    """The finding of ``check`` at ``label`` (ok, note, PROBLEM), with its fix line when it has one."""
    lines = result.stdout.splitlines()
    for index, line in enumerate(lines):
        if line.startswith(f"{label:<8} {check}: "):
            following = lines[index + 1] if index + 1 < len(lines) else ""
            return line + ("\n" + following if following.lstrip().startswith("fix: ") else "")
    raise AssertionError(f"no {label} {check} finding in:\n{result.stdout}")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


async def _healthy(home: Path, discovery: Path, broker: ReachableBroker) -> Setup:
    setup = Setup(home, discovery, broker)
    installed = await setup.cli("install-native-host", "--browser", "chromium", as_flag=False)
    assert installed.returncode == 0, installed.stderr
    written = await setup.cli("mcp-config", "--client-app", "cursor", "--write", as_flag=False)
    assert written.returncode == 0, written.stderr
    return setup


@pytest.fixture
async def connected(
    home: Path, discovery_dir: Path, brokers: Brokers, session: aiohttp.ClientSession
) -> AsyncIterator[Setup]:
    """A broker with a (fake) browser connected, the native host and Cursor pointing at this install."""
    setup = await _healthy(home, discovery_dir, await brokers.start())
    async with _browser_on(setup, session):
        yield setup


@pytest.fixture
async def connected_to_shared(
    home: Path, shared_broker: SharedBroker, session: aiohttp.ClientSession
) -> AsyncIterator[Setup]:
    """As ``connected``, on the module's broker: for the tests that change only what is in their home."""
    setup = await _healthy(home, shared_broker.discovery_dir, shared_broker)
    async with _browser_on(setup, session):
        yield setup


@contextlib.asynccontextmanager
async def _browser_on(setup: Setup, session: aiohttp.ClientSession) -> AsyncIterator[FakeExtension]:
    assert setup.broker is not None
    fake = await connect_extension(session, setup.broker, FakeTab(1, "https://shop.example/", "Shop"))
    try:
        yield fake
    finally:
        await fake.close()


async def test_a_healthy_setup_is_all_well(connected: Setup) -> None:
    result = await connected.doctor()
    assert result.returncode == 0, result.stdout
    broker = connected.broker
    assert broker is not None
    assert f"running: pid {broker.pid}, port {broker.port}, version " in _line(result, "ok", "broker")
    assert (
        _line(result, "ok", "token file")
        == f"ok       token file: {token_file_for(connected.discovery)}: yours, mode 0600"
    )
    assert _line(result, "ok", "discovery folder").endswith(f"{connected.discovery}: yours, mode 0700")
    assert re.search(rf"browser: b1 .* on port {broker.port}: 1 tabs; ", _line(result, "ok", "browser"))
    # The broker raised its limit of open files as far as its caps want, or as the hard limit lets
    # it; it never lowers it.
    wanted = descriptors_wanted(DEFAULTS)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    files = max(soft, wanted if hard == resource.RLIM_INFINITY else min(wanted, hard))
    label = "ok" if files >= wanted else "note"
    assert f"the broker on port {broker.port}: a limit of {files} open files;" in _line(result, label, "open files")
    assert _line(result, "ok", "native host") == "ok       native host: registered for chromium; it runs this install"
    cursor = connected.home / ".cursor" / "mcp.json"
    assert (
        _line(result, "ok", "MCP clients")
        == f"ok       MCP clients: Cursor ({cursor}): server 'browser' runs this install"
    )
    assert result.stdout.rstrip().endswith("all is well")
    assert "PROBLEM" not in result.stdout


async def test_no_broker_is_a_problem_with_its_fix(home: Path, discovery_dir: Path) -> None:
    result = await Setup(home, discovery_dir, None).doctor()
    assert result.returncode == 1
    assert _line(result, "PROBLEM", "broker") == (
        "PROBLEM  broker: no broker is running\n"
        "         fix: browser-mcp serve (or browser-mcp service install, to keep one running)"
    )
    assert _line(result, "note", "browser") == "note     browser: not checked: no broker answers"
    assert "open files: a broker started here: a limit of " in result.stdout
    assert result.stdout.rstrip().endswith("1 problem found")


def _few_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


async def test_a_broker_under_a_low_limit_of_open_files_is_a_note_naming_its_caps(
    home: Path, discovery_dir: Path, brokers: Brokers
) -> None:
    # A systemd user service's limit, or lower, which the broker cannot raise past its hard limit.
    broker = await brokers.start(preexec_fn=_few_files)
    result = await Setup(home, discovery_dir, broker).doctor()
    wanted = descriptors_wanted(DEFAULTS)
    assert _line(result, "note", "open files") == (
        f"note     open files: the broker on port {broker.port}: a limit of 256 open files; connections at most"
        " 44 without a token, 88 of the broker's token, 44 of client tokens (22 each), below the"
        f" {wanted} wanted\n         fix: raise the hard limit of open files to {wanted} or more:"
        f" LimitNOFILE={wanted} in the broker's systemd unit, or ulimit -Hn {wanted} (as root) where it"
        " starts; the broker raises its own soft limit"
    )


async def test_a_discovery_file_whose_server_never_answers_is_a_problem(home: Path, discovery_dir: Path) -> None:
    # A port that takes connections and says nothing, as a hung broker's: the doctor gives up on it
    # after --timeout seconds (5 unless told).
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        lookalike = lookalike_broker()
        try:
            planted = plant(discovery_dir, f"server-{lookalike.pid}.json", discovery_fields(lookalike.pid, port))
            result = await Setup(home, discovery_dir, None).cli("doctor", "--timeout", "0.5")
        finally:
            lookalike.kill()
            lookalike.wait()
    assert result.returncode == 1
    finding = _line(result, "PROBLEM", "broker")
    assert finding.startswith(f"PROBLEM  broker: pid {lookalike.pid}, port {port} ({discovery_dir}/server-")
    assert "does not answer: cannot reach the broker on port" in finding and "timed out" in finding
    assert finding.endswith(f"and start another (browser-mcp serve); if it is another program, delete {planted}")


@pytest.mark.parametrize("seconds", ["0", "soon"])
async def test_a_timeout_that_is_no_positive_number_is_refused(home: Path, discovery_dir: Path, seconds: str) -> None:
    result = await Setup(home, discovery_dir, None).cli("doctor", "--timeout", seconds)
    assert result.returncode == 2
    assert f"--timeout: a number of seconds more than 0, not '{seconds}'" in result.stderr
    assert result.stdout == ""


async def test_a_token_file_others_may_read_is_a_problem(connected: Setup) -> None:
    token = token_file_for(connected.discovery)
    token.chmod(0o644)
    result = await connected.doctor()
    assert result.returncode == 1
    finding = _line(result, "PROBLEM", "token file")
    assert finding.startswith(f"PROBLEM  token file: {token} has mode 0644: other users may read the token")
    assert finding.endswith(f"fix: chmod 600 {token}")


async def test_a_discovery_folder_others_may_write_is_a_problem(connected: Setup) -> None:
    connected.discovery.chmod(0o777)
    result = await connected.doctor()
    assert result.returncode == 1
    assert _line(result, "PROBLEM", "discovery folder") == (
        f"PROBLEM  discovery folder: {connected.discovery} has mode 0777: other users may add or delete files in it\n"
        f"         fix: chmod 700 {connected.discovery}"
    )


async def test_a_broker_without_a_browser_is_a_problem(home: Path, discovery_dir: Path, brokers: Brokers) -> None:
    setup = await _healthy(home, discovery_dir, await brokers.start())
    assert setup.broker is not None
    result = await setup.doctor()
    assert result.returncode == 1
    finding = _line(result, "PROBLEM", "browser")
    assert finding.startswith(f"PROBLEM  browser: no browser is connected to the broker on port {setup.broker.port}")
    assert "browser-mcp install-native-host" in finding and "browser-mcp pair" in finding
    assert result.stdout.rstrip().endswith("1 problem found")


async def test_the_native_host_registered_for_firefox_too_is_all_well(connected_to_shared: Setup) -> None:
    installed = await connected_to_shared.cli("install-native-host", "--browser", "firefox", as_flag=False)
    assert installed.returncode == 0, installed.stderr
    result = await connected_to_shared.doctor()
    assert (
        _line(result, "ok", "native host")
        == "ok       native host: registered for chromium, firefox; it runs this install"
    )


async def test_a_native_host_of_another_install_is_a_problem(connected_to_shared: Setup) -> None:
    launcher = connected_to_shared.home / "config" / "chromium" / "NativeMessagingHosts" / "browser_mcp.broker-host"
    launcher.write_text('#!/bin/sh\nexec /old/venv/bin/browser-mcp native-host "$@"\n')
    result = await connected_to_shared.doctor()
    assert result.returncode == 1
    assert _line(result, "PROBLEM", "native host") == (
        "PROBLEM  native host: chromium: it runs /old/venv/bin/browser-mcp native-host, not this install\n"
        "         fix: browser-mcp install-native-host (it rewrites the manifests), then restart the browser"
    )


async def test_no_native_host_with_a_broker_outside_the_probed_ports_is_a_problem(connected_to_shared: Setup) -> None:
    assert connected_to_shared.broker is not None and connected_to_shared.broker.port not in PORTS
    removed = await connected_to_shared.cli("install-native-host", "--uninstall", as_flag=False)
    assert removed.returncode == 0, removed.stderr
    result = await connected_to_shared.doctor()
    assert result.returncode == 1
    assert _line(result, "PROBLEM", "native host") == (
        "PROBLEM  native host: not registered, and the broker listens on port"
        f" {connected_to_shared.broker.port}: without the native host the extension looks for brokers on ports"
        " 8765-8785 alone\n"
        "         fix: browser-mcp install-native-host (then restart the browser), or start the broker without --port"
    )


async def test_no_native_host_is_a_note_when_the_extension_can_find_the_broker(
    home: Path, discovery_dir: Path, brokers: Brokers
) -> None:
    setup = Setup(home, discovery_dir, await start_probed_broker(brokers))
    result = await setup.doctor()
    assert _line(result, "note", "native host") == (
        "note     native host: not registered with any browser: the extension finds brokers on ports 8765-8785"
        " alone and trusts one once paired\n"
        "         fix: browser-mcp install-native-host (then restart the browser), or pair: browser-mcp pair"
    )
    assert "PROBLEM  native host" not in result.stdout


async def test_a_port_held_by_another_process_is_named(connected_to_shared: Setup) -> None:
    port = free_probed_ports()[0]
    with socket.socket() as held:
        held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        held.bind(("127.0.0.1", port))
        held.listen()
        result = await connected_to_shared.doctor()
    assert result.returncode == 0, result.stdout
    finding = _line(result, "note", "ports")
    # Its command line may hold a ";" of its own (a test runner's worker: `python -c "import sys;exec(...)"`).
    assert re.search(rf"; {port} [^;]*python.*? \(pid {os.getpid()}\)", finding), finding
    assert finding.endswith("(the extension skips servers that are not brokers)")


async def test_a_client_configuration_of_another_install_is_a_problem(connected_to_shared: Setup) -> None:
    claude = connected_to_shared.home / ".claude.json"
    claude.write_text('{"mcpServers": {"web": {"command": "/old/venv/bin/browser-mcp", "args": ["mcp"]}}}')
    result = await connected_to_shared.doctor()
    assert result.returncode == 1
    assert _line(result, "PROBLEM", "MCP clients") == (
        f"PROBLEM  MCP clients: Claude Code ({claude}): server 'web' runs /old/venv/bin/browser-mcp, not this install\n"
        "         fix: browser-mcp mcp-config --client-app claude-code --write --name web"
    )
    fixed = await connected_to_shared.cli(
        "mcp-config", "--client-app", "claude-code", "--write", "--name", "web", as_flag=False
    )
    assert fixed.returncode == 0, fixed.stderr
    assert (await connected_to_shared.doctor()).returncode == 0


async def test_doctor_json_lists_the_findings_for_scripts(home: Path, discovery_dir: Path) -> None:
    result = await Setup(home, discovery_dir, None).cli("doctor", "--json")
    assert result.returncode == 1
    answer = json.loads(result.stdout)
    assert answer["problems"] == 1
    assert [f["check"] for f in answer["findings"]][:3] == ["broker", "open files", "token file"]
    assert answer["findings"][0] == {
        "check": "broker",
        "level": "problem",
        "text": "no broker is running",
        "fix": "browser-mcp serve (or browser-mcp service install, to keep one running)",
    }


async def test_vscode_settings_and_codex_toml_are_read_too(connected_to_shared: Setup) -> None:
    user = connected_to_shared.home / "config" / "Code" / "User"
    user.mkdir(parents=True)
    old = {"command": "/old/venv/bin/python", "args": ["-m", "broker", "mcp"]}
    (user / "settings.json").write_text(json.dumps({"mcp": {"servers": {"browser": old}}}))
    codex = connected_to_shared.home / "codex"
    codex.mkdir()
    here = await connected_to_shared.cli("mcp-config", "--client-app", "codex", as_flag=False)
    (codex / "config.toml").write_text('model = "o3"\n\n' + here.stdout)
    result = await run_cli(
        "doctor", discovery_dir=connected_to_shared.discovery, env={**connected_to_shared.env, "CODEX_HOME": str(codex)}
    )
    assert result.returncode == 1
    assert (
        f"PROBLEM  MCP clients: VS Code ({user / 'settings.json'}): server 'browser' runs /old/venv/bin/python,"
        " not this install" in result.stdout
    )
    assert f"ok       MCP clients: Codex ({codex / 'config.toml'}): server 'browser' runs this install" in result.stdout


async def test_vscode_settings_with_comments_are_a_note(connected_to_shared: Setup) -> None:
    user = connected_to_shared.home / "config" / "Code" / "User"
    user.mkdir(parents=True)
    (user / "settings.json").write_text('{\n  // the editor\'s font\n  "editor.fontSize": 14\n}\n')
    result = await connected_to_shared.doctor()
    assert result.returncode == 0, result.stdout
    assert f"note     MCP clients: VS Code: {user / 'settings.json'} is not plain JSON (comments?); not read" in (
        result.stdout
    )


async def test_http_configurations_are_checked_by_their_token_and_port(connected_to_shared: Setup) -> None:
    assert connected_to_shared.broker is not None
    printed = await connected_to_shared.cli("mcp-config", "--client", "cursor")
    start = printed.stdout.index('{\n  "mcpServers"', printed.stdout.index("Streamable HTTP:"))
    http = json.JSONDecoder().raw_decode(printed.stdout[start:])[0]["mcpServers"]["browser"]
    stale = {**http, "headers": {"Authorization": "Bearer bmcp_cursor_0123456789abcdef0123456789abcdef"}}
    elsewhere = {**http, "url": f"http://127.0.0.1:{PORTS.stop + 1}/mcp"}
    claude = connected_to_shared.home / ".claude.json"
    claude.write_text(json.dumps({"mcpServers": {"live": http, "stale": stale, "moved": elsewhere}}))
    result = await connected_to_shared.doctor()
    assert result.returncode == 1
    port = connected_to_shared.broker.port
    assert (
        f"ok       MCP clients: Claude Code ({claude}): server 'live' reaches port {port} over HTTP with a token"
        in (result.stdout)
    )
    stale_finding = _line(result, "PROBLEM", "MCP clients")
    assert stale_finding.startswith(f"PROBLEM  MCP clients: Claude Code ({claude}): server 'stale' reaches port {port}")
    assert "a token that is not this install's broker's" in stale_finding
    assert (
        f"note     MCP clients: Claude Code ({claude}): server 'moved': no broker listens on port {PORTS.stop + 1} now"
        in result.stdout
    )
