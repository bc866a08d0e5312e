"""``browser-mcp service``: the unit and the agent it writes, and what it says when it cannot start them.

The command runs for real with HOME and XDG_CONFIG_HOME in a temporary folder. Where ``systemctl
--user`` reaches a user service manager, one test installs, starts, finds, stops and removes the
service for real.
"""

from __future__ import annotations

import asyncio
import json
import os
import plistlib
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from broker.install import service
from broker.paths import ENV_DISCOVERY_DIR, ENV_TOKEN_FILE

from ..support.cli_helpers import CLI, CliResult, run_cli, token_file_for


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def _env(home: Path, path: str, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"), "PATH": path, **extra}


@pytest.fixture
def no_systemctl(tmp_path: Path) -> str:
    """A PATH with no systemctl on it."""
    folder = tmp_path / "empty-bin"
    folder.mkdir()
    return str(folder)


@pytest.fixture
def broken_systemctl(tmp_path: Path) -> str:
    """A PATH whose systemctl answers as it does where no user instance runs (a container, su)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / "systemctl"
    script.write_text("#!/bin/sh\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n")
    script.chmod(0o755)
    return str(folder)


def _exec_start(unit: str) -> list[str]:
    line = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    return shlex.split(line.removeprefix("ExecStart="))


async def test_install_writes_a_unit_running_this_install_with_the_options_given(
    home: Path, tmp_path: Path, no_systemctl: str
) -> None:
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    done = await run_cli(
        "service",
        "install",
        "--port",
        "8770",
        "--upload-dir",
        "uploads",
        "--log-level=debug",
        discovery_dir=tmp_path / "d",
        as_flag=False,
        env=_env(home, no_systemctl),
        cwd=tmp_path,
    )
    unit = home / "config" / "systemd" / "user" / "browser-mcp.service"
    text = unit.read_text()
    assert _exec_start(text) == [*CLI, "serve", "--port", "8770", "--upload-dir", str(uploads), "--log-level=debug"]
    lines = text.splitlines()
    assert "Restart=on-failure" in lines and "WantedBy=default.target" in lines
    assert f"Environment={ENV_DISCOVERY_DIR}={tmp_path / 'd'}" in lines
    assert f"Environment={ENV_TOKEN_FILE}={token_file_for(tmp_path / 'd')}" in lines
    assert unit.stat().st_mode & 0o777 == 0o644
    done.assert_failed_saying(
        f"wrote {unit}, but could not start it", "systemctl is not on PATH", "run browser-mcp serve yourself"
    )


async def test_install_without_xdg_config_home_writes_under_the_homes_config(home: Path, no_systemctl: str) -> None:
    env = _env(home, no_systemctl)
    del env["XDG_CONFIG_HOME"]
    done = await run_cli("service", "install", discovery_dir=home / "d", as_flag=False, env=env)
    unit = home / ".config" / "systemd" / "user" / "browser-mcp.service"
    assert _exec_start(unit.read_text()) == [*CLI, "serve"]
    assert done.returncode == 1


async def test_a_failing_systemctl_is_named_with_its_words(home: Path, broken_systemctl: str) -> None:
    done = await run_cli(
        "service", "install", discovery_dir=home / "d", as_flag=False, env=_env(home, broken_systemctl)
    )
    done.assert_failed_saying(
        "systemctl --user daemon-reload failed: Failed to connect to bus: No medium found",
        "a systemd user instance is needed",
    )
    shown = await run_cli("service", "status", discovery_dir=home / "d", env=_env(home, broken_systemctl))
    assert shown.returncode == 1
    assert "installed: yes" in shown.stdout and "enabled:   unknown" in shown.stdout
    assert "Failed to connect to bus" in shown.stderr


async def test_status_and_uninstall_without_systemctl_say_so(home: Path, no_systemctl: str) -> None:
    env = _env(home, no_systemctl)
    shown = await run_cli("service", "status", discovery_dir=home / "d", env=env)
    assert shown.returncode == 1
    assert shown.stdout.startswith("installed: no (")
    assert "systemctl is not on PATH" in shown.stderr
    removed = await run_cli("service", "uninstall", discovery_dir=home / "d", as_flag=False, env=env)
    assert (removed.returncode, removed.stdout.strip()) == (0, "no service is installed")
    await run_cli("service", "install", discovery_dir=home / "d", as_flag=False, env=env)
    unit = home / "config" / "systemd" / "user" / "browser-mcp.service"
    assert unit.exists()
    removed = await run_cli("service", "uninstall", discovery_dir=home / "d", as_flag=False, env=env)
    removed.assert_failed_saying(f"removed {unit}, but could not stop the service", "systemctl is not on PATH")
    assert not unit.exists()


async def test_options_serve_would_refuse_are_refused_before_anything_is_written(home: Path, no_systemctl: str) -> None:
    done = await run_cli(
        "service", "install", "--prot", "8770", discovery_dir=home / "d", as_flag=False, env=_env(home, no_systemctl)
    )
    assert done.returncode == 2
    assert "unrecognized arguments: --prot" in done.stderr and "the options after install are serve's" in done.stderr
    assert not (home / "config").exists()


def test_words_systemd_would_read_otherwise_are_quoted(home: Path) -> None:
    odd = "/srv/my uploads/100%/$HOME\\x"
    written = service.definition(["--upload-dir", odd], "linux", {"HOME": str(home), ENV_TOKEN_FILE: odd})
    lines = written.text.decode().splitlines()
    exec_start = next(x for x in lines if x.startswith("ExecStart="))
    assert exec_start.endswith(' --upload-dir "/srv/my uploads/100%%/$$HOME\\\\x"')
    # Environment= expands specifiers (%) but takes $ as it is.
    assert f'Environment="{ENV_TOKEN_FILE}=/srv/my uploads/100%%/$HOME\\\\x"' in lines
    if shutil.which("systemd-analyze"):  # systemd's own parser, where it is installed: no complaint
        unit = home / "browser-mcp.service"
        unit.write_bytes(written.text)
        checked = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, check=False)
        assert (checked.returncode, checked.stderr) == (0, "")


def test_the_launchd_agent_runs_this_install_and_restarts_it_when_it_fails(home: Path) -> None:
    written = service.definition(
        ["--port", "8770"], "darwin", {"HOME": str(home), ENV_TOKEN_FILE: "/somewhere/token", "OTHER": "x"}
    )
    assert written.path == home / "Library" / "LaunchAgents" / "browser-mcp.broker.plist"
    agent = plistlib.loads(written.text)
    assert agent["Label"] == "browser-mcp.broker"
    assert agent["ProgramArguments"] == [*CLI, "serve", "--port", "8770"]
    assert agent["RunAtLoad"] is True
    assert agent["KeepAlive"] == {"SuccessfulExit": False}
    assert agent["EnvironmentVariables"] == {ENV_TOKEN_FILE: "/somewhere/token"}
    assert Path(agent["StandardErrorPath"]).is_absolute()


def test_launchd_install_without_launchctl_writes_the_agent_and_says_it_is_not_loaded(
    home: Path, no_systemctl: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", no_systemctl)
    with pytest.raises(service.ServiceError, match="launchctl is not on PATH"):
        service.install([], "darwin")
    assert plistlib.loads((home / "Library" / "LaunchAgents" / "browser-mcp.broker.plist").read_bytes())


def test_no_service_is_made_on_windows() -> None:
    with pytest.raises(service.ServiceError, match=r"systemd \(Linux\) or launchd \(macOS\)"):
        service.definition([], "win32", {"HOME": "/h"})


def _user_systemd_refusal() -> str | None:
    """Why ``systemctl --user`` cannot run a service here, or None when it can."""
    if sys.platform != "linux":
        return f"a systemd user unit runs on Linux only, not {sys.platform}"
    try:
        done = subprocess.run(
            ["systemctl", "--user", "show-environment"], capture_output=True, text=True, timeout=10, check=False
        )
    except FileNotFoundError:
        return "systemctl is not installed on this machine"
    if done.returncode != 0:
        return f"systemctl --user reaches no user service manager here ({done.stderr.strip()})"
    if service.definition([]).path.exists():
        return f"{service.definition([]).path} exists: this user has a service the test would replace"
    return None


_REFUSAL = _user_systemd_refusal()


@pytest.mark.skipif(
    _REFUSAL is not None,
    reason=f"needs a running systemd user instance, which this machine does not have: {_REFUSAL}",
)
async def test_a_real_user_service_starts_is_found_restarts_after_a_crash_stops_and_goes(tmp_path: Path) -> None:
    discovery = tmp_path / "discovery"
    env = {"PATH": os.environ["PATH"]}

    async def cli(*args: str, as_flag: bool = True) -> CliResult:
        return await run_cli(*args, discovery_dir=discovery, as_flag=as_flag, env=env)

    async def broker_pid(other_than: int | None = None) -> int:
        async with asyncio.timeout(30):
            while True:
                listed = json.loads((await cli("status", "--json")).stdout)["brokers"]
                if listed and listed[0]["pid"] != other_than:
                    return int(listed[0]["pid"])
                await asyncio.sleep(0.2)  # nothing to wait on: the service manager starts it when it will

    installed = await cli("service", "install", "--port", "0")
    try:
        assert installed.returncode == 0, installed.stderr
        pid = await broker_pid()
        shown = await cli("service", "status")
        assert shown.returncode == 0, shown
        assert "enabled:   yes" in shown.stdout and f"running:   yes, pid {pid}, port " in shown.stdout
        os.kill(pid, signal.SIGKILL)  # a crash: restarted
        pid = await broker_pid(other_than=pid)
        stopped = await cli("stop")
        assert stopped.returncode == 0, stopped.stderr
        async with asyncio.timeout(30):
            while True:
                shown = await cli("service", "status")
                if shown.returncode != 0:
                    break
                await asyncio.sleep(0.2)  # the manager sees the exit a moment after the discovery file goes
        assert shown.returncode == 3 and "running:   no" in shown.stdout  # a clean exit is not restarted
    finally:
        removed = await cli("service", "uninstall", as_flag=False)
    assert removed.returncode == 0, removed.stderr
    assert not service.definition([]).path.exists()
    assert (await cli("status")).returncode == 1


def test_folder_options_are_made_absolute_in_both_spellings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    options = ["--discovery-dir=run", "--upload-dir", "up", "--port", "8770", "--upload-dir", "/abs"]
    assert service.serve_command(options) == [
        *CLI,
        "serve",
        f"--discovery-dir={tmp_path / 'run'}",
        "--upload-dir",
        str(tmp_path / "up"),
        "--port",
        "8770",
        "--upload-dir",
        "/abs",
    ]
