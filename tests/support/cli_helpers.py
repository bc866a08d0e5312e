"""Run the real ``browser-mcp`` command in subprocesses: brokers (``serve``) and one-shot commands.

Tests wait on what the processes print (a broker's "listening on" line, a command's exit) rather
than sleeping. Every process started through :class:`Brokers` is stopped when it closes (SIGTERM,
then SIGKILL), and every pipe is drained with ``communicate()`` so no transport is left open.
The discovery folder is always a temporary one, passed both as ``--discovery-dir`` and as
``BROWSER_MCP_DISCOVERY_DIR`` so that no command can fall back to ``/tmp/browser-mcp``.

A :class:`SharedBroker` serves all the tests of a module that only need a broker to talk to: each
brings its own fake browser (forgotten by the broker when its link closes, as a browser without an
instance id is) and its own clients, so they stay independent; a broker's start, and its first MCP
request loading the MCP SDK, cost about a second of CPU each. Tests that stop, signal or configure
a broker, or read what all of a broker's sessions or browsers are, start their own.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import aiohttp
import attrs
import pytest

from broker.paths import ENV_DISCOVERY_DIR, ENV_TOKEN_FILE
from broker.version import PROTOCOL_VERSION, VERSION

from .fakes import FakeExtension, FakeTab

__all__ = [
    "CLI",
    "START_TIMEOUT",
    "BrokerProcess",
    "Brokers",
    "CliResult",
    "SharedBroker",
    "broker_process_fixtures",
    "claim",
    "cli_env",
    "connect_extension",
    "discovery_fields",
    "lookalike_broker",
    "plant",
    "discovery_files",
    "run_cli",
    "shared_shop_fixture",
    "start_shared_broker",
    "table_rows",
]

_SCRIPT = Path(sys.executable).with_name("browser-mcp")
# The console script a user runs; ``python -m broker`` when the venv has none.
CLI: tuple[str, ...] = (str(_SCRIPT),) if _SCRIPT.exists() else (sys.executable, "-m", "broker")

# Starting Python and importing aiohttp takes seconds on a slow machine.
START_TIMEOUT = 20.0
COMMAND_TIMEOUT = 30.0
EXIT_TIMEOUT = 10.0

_LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+) \(discovery file (.+)\)$")


@attrs.frozen
class CliResult:
    returncode: int | None
    stdout: str
    stderr: str

    def assert_failed_saying(self, *phrases: str) -> None:
        """The command failed with a message, not a crash: exit 1, each phrase on stderr, no traceback."""
        assert self.returncode == 1, (self.returncode, self.stderr)
        for phrase in phrases:
            assert phrase in self.stderr, (phrase, self.stderr)
        assert "Traceback" not in self.stderr


def discovery_fields(pid: int, port: int = 8765, **extra: Any) -> dict[str, Any]:
    """What a broker's discovery file holds, for files a test plants itself."""
    return {
        "port": port,
        "pid": pid,
        "startedAt": "2025-01-02T03:04:05Z",
        "version": VERSION,
        "protocol": PROTOCOL_VERSION,
        "token": f"token-of-{pid}",
        **extra,
    }


def lookalike_broker() -> subprocess.Popen[bytes]:
    """A live process of this user whose command line is a broker's (``-m broker serve``); it serves nothing.

    What readers see when a broker's pid was reused by another broker-looking process, or what a
    planted file names to pass the process check: only the server's proof can tell.
    """
    code = "import time; print('ready', flush=True); time.sleep(300)"
    process = subprocess.Popen([sys.executable, "-c", code, "-m", "broker", "serve"], stdout=subprocess.PIPE)
    assert process.stdout is not None
    # Its command line is in place once it runs Python's code (it is empty while it starts).
    assert process.stdout.readline() == b"ready\n"
    process.stdout.close()
    return process


def plant(directory: Path, name: str, content: Any) -> Path:
    """A discovery file written by someone else (not through ``publish``)."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = directory / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    path.chmod(0o600)
    return path


def token_file_for(discovery_dir: Path) -> Path:
    """Where brokers of a test keep their token: beside its discovery folder, never in the home."""
    return discovery_dir.with_name(discovery_dir.name + "-token")


def cli_env(discovery_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LOG_LEVEL", "BROWSER_MCP_ALLOWED_EXTENSIONS")}
    env[ENV_DISCOVERY_DIR] = str(discovery_dir)
    env[ENV_TOKEN_FILE] = str(token_file_for(discovery_dir))
    env.update(extra)
    return env


async def finish(process: asyncio.subprocess.Process) -> tuple[bytes, bytes]:
    """Wait for ``process`` to exit and read the rest of its output; kill it if the wait is cut short."""
    try:
        return await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.communicate()


async def run_cli(
    *args: str, discovery_dir: Path, as_flag: bool = True, env: dict[str, str] | None = None, cwd: Path | None = None
) -> CliResult:
    """Run ``browser-mcp ARGS`` (in ``cwd`` if given) and wait for it to exit.

    ``discovery_dir`` is always in the environment (with ``env`` on top); ``as_flag`` also passes
    it as ``--discovery-dir``.
    """
    command = [*CLI, *args]
    if as_flag:
        command += ["--discovery-dir", str(discovery_dir)]
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=cli_env(discovery_dir, **(env or {})),
        cwd=cwd,
    )
    async with asyncio.timeout(COMMAND_TIMEOUT):
        out, err = await finish(process)
    return CliResult(process.returncode, out.decode(), err.decode())


class ReachableBroker:
    """What a test reaches a broker subprocess by, whichever kind: its port, discovery file and pid."""

    port: int
    discovery_file: Path

    @property
    def pid(self) -> int:
        raise NotImplementedError

    @property
    def token(self) -> str:
        """The broker's token, as its discovery file gives it to clients."""
        token: str = json.loads(self.discovery_file.read_text())["token"]
        return token

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"


@attrs.define
class BrokerProcess(ReachableBroker):
    process: asyncio.subprocess.Process
    port: int
    discovery_file: Path
    listening_line: str
    log: IO[bytes]

    @property
    def pid(self) -> int:
        return self.process.pid

    def send_signal(self, signum: int) -> None:
        self.process.send_signal(signum)

    async def exited(self) -> CliResult:
        """Wait for the broker to exit on its own; what it printed after the listening line, and its log."""
        async with asyncio.timeout(EXIT_TIMEOUT):
            out, _ = await finish(self.process)
        self.log.seek(0)
        return CliResult(self.process.returncode, out.decode(), self.log.read().decode())


@attrs.frozen
class SharedBroker(ReachableBroker):
    """A ``browser-mcp serve`` subprocess that outlives a test (see the module's docstring)."""

    process: subprocess.Popen[bytes]
    port: int
    discovery_dir: Path
    discovery_file: Path
    log: Path
    stdout_reader: threading.Thread

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if the broker has not exited within :data:`EXIT_TIMEOUT`."""
        self.process.terminate()
        try:
            self.process.wait(EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.stdout_reader.join()
        assert self.process.stdout is not None
        self.process.stdout.close()


def start_shared_broker(discovery_dir: Path, log: Path) -> SharedBroker:
    """Start ``browser-mcp serve --port 0`` on ``discovery_dir``, its log going to ``log``.

    Its log goes to a file and the rest of its stdout is read by a thread, so that no pipe fills
    up between the tests that use it (they run on event loops of their own).

    Raises:
        AssertionError: the broker exited or printed something else first.
    """
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [*CLI, "serve", "--port", "0", "--discovery-dir", str(discovery_dir)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=cli_env(discovery_dir),
        )
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], START_TIMEOUT)
    line = process.stdout.readline().decode().strip() if ready else ""
    found = _LISTENING.search(line)
    if found is None:
        process.kill()
        process.wait()
        raise AssertionError(f"the broker did not say where it listens: {line!r}\n{log.read_text()}")
    reader = threading.Thread(target=process.stdout.read, daemon=True)
    reader.start()
    return SharedBroker(process, int(found.group(1)), discovery_dir, Path(found.group(2)), log, reader)


class Brokers:
    """Starts ``browser-mcp serve --port 0`` subprocesses (or on a given port) and stops them all on close."""

    def __init__(self, discovery_dir: Path) -> None:
        self.discovery_dir = discovery_dir
        self._processes: list[asyncio.subprocess.Process] = []
        self._logs: list[IO[bytes]] = []

    async def start(self, *extra: str, discovery_dir: Path | None = None, port: int = 0, **popen: Any) -> BrokerProcess:
        """Start a broker on ``port`` (0: any free one) and wait for its "listening on" line.

        Raises:
            AssertionError: the broker exited or printed something else first.
        """
        directory = discovery_dir or self.discovery_dir
        # Its log goes to a file, not a pipe nobody reads until it exits: a broker that logged more
        # than the pipe holds would stop at its next line.
        log = tempfile.TemporaryFile()  # noqa: SIM115 - closed with the brokers
        self._logs.append(log)
        process = await asyncio.create_subprocess_exec(
            *CLI,
            "serve",
            "--port",
            str(port),
            "--discovery-dir",
            str(directory),
            *extra,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
            env=cli_env(directory),
            **popen,
        )
        self._processes.append(process)
        assert process.stdout is not None
        async with asyncio.timeout(START_TIMEOUT):
            line = (await process.stdout.readline()).decode().strip()
        found = _LISTENING.search(line)
        if found is None:
            async with asyncio.timeout(EXIT_TIMEOUT):
                out, _ = await finish(process)
            log.seek(0)
            raise AssertionError(
                f"the broker did not say where it listens; exit {process.returncode}\n"
                f"stdout: {line}\n{out.decode()}\nstderr: {log.read().decode()}"
            )
        return BrokerProcess(process, int(found.group(1)), Path(found.group(2)), line, log)

    async def close(self) -> None:
        for process in self._processes:
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
            try:
                async with asyncio.timeout(EXIT_TIMEOUT):
                    await finish(process)
            except TimeoutError:
                pass  # finish killed it; the test has already failed or passed on its own terms
        for log in self._logs:
            log.close()

    async def __aenter__(self) -> Brokers:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()


async def connect_extension(
    session: aiohttp.ClientSession,
    broker: ReachableBroker,
    *tabs: FakeTab,
    actions: list[str] | None = None,
    features: list[str] | None = None,
) -> FakeExtension:
    """A fake extension on ``broker``'s link, once the broker has applied its snapshot."""
    fake = FakeExtension(list(tabs), actions=actions, features=features)
    await fake.connect(session, broker.ws_url)
    # The broker handles frames in order: its pong means the snapshot before it is applied.
    start = len(fake.inbox)
    await fake.send({"type": "ping"})
    await fake.wait_for("pong", start=start)
    return fake


async def claim(
    session: aiohttp.ClientSession, broker: ReachableBroker, *refs: str | int, session_id: str = "rest"
) -> None:
    """Claim tabs on ``broker`` over REST for a session (the command line's own, ``rest``, by default).

    Page tool calls, like built-in tools, act only in a tab the caller claimed.
    """
    headers = {"Authorization": f"Bearer {broker.token}", "X-Session-Id": session_id}
    for ref in refs:
        async with session.post(f"http://127.0.0.1:{broker.port}/tabs/{ref}/claim", headers=headers) as answer:
            assert answer.status == 200, await answer.text()


def discovery_files(directory: Path) -> list[str]:
    """The names of the discovery files (and their temp files) in ``directory``."""
    if not directory.exists():
        return []
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(("server-", ".server-")))


def table_rows(text: str) -> list[dict[str, str]]:
    """The rows of a table the CLI printed, as dicts keyed by its header.

    Columns are separated by two or more spaces; cells hold at most single spaces.
    """
    header, *lines = text.strip().splitlines()
    names = header.split()
    rows = []
    for line in lines:
        cells = re.split(r"\s{2,}", line.strip())
        assert len(cells) == len(names), f"row {line!r} does not fit header {header!r}"
        rows.append(dict(zip(names, cells, strict=True)))
    return rows


def broker_process_fixtures(shop_tabs: Callable[[], list[FakeTab]]) -> tuple[Any, Any]:
    """A test module's ``broker`` and ``shop`` fixtures, for tests of the command from outside.

    ``broker`` is a ``browser-mcp serve`` process (conftest's in-process ``broker`` goes by the
    same name, so a module takes these in its stead); ``shop`` is a fake browser on it with
    ``shop_tabs()``. Use: ``broker, shop = broker_process_fixtures(shop_tabs)``.
    """

    @pytest.fixture(name="broker")
    async def broker_process(brokers: Brokers) -> BrokerProcess:
        return await brokers.start()

    @pytest.fixture(name="shop")
    async def shop_on_it(broker: BrokerProcess, connect_fake: Callable[..., Any]) -> FakeExtension:
        extension: FakeExtension = await connect_fake(broker, *shop_tabs())
        return extension

    return broker_process, shop_on_it


def shared_shop_fixture(shop_tabs: Callable[[], list[FakeTab]]) -> Any:
    """A test module's ``shared_shop`` fixture: a fake browser with ``shop_tabs()`` on the module's
    ``shared_broker``, connected for one test and closed after it.
    Use: ``shared_shop = shared_shop_fixture(shop_tabs)``.
    """

    @pytest.fixture(name="shared_shop")
    async def shop_on_the_shared_broker(shared_broker: SharedBroker, connect_fake: Callable[..., Any]) -> FakeExtension:
        extension: FakeExtension = await connect_fake(shared_broker, *shop_tabs())
        return extension

    return shop_on_the_shared_broker
