"""Starting the servers the benchmarks measure, each a process of its own, and stopping them.

The broker (``browser-mcp serve``, or whatever ``--broker-cmd`` says), the REST baseline
(``scripts/benchmarks/baselines/rest_relay.py``) and the MCP baseline over HTTP
(``scripts/benchmarks/baselines/mcp_relay.py``; its stdio form is spawned by the MCP client itself),
the baselines run as modules (``python -m``) from the project's root. Each announces itself with a
line on stdout; its stderr goes to a log in the bench's folder, quoted when it fails to start.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import signal
import sys
import tempfile
import time
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from broker.paths import ENV_TOKEN_FILE

from . import READY_TIMEOUT, ROOT, START_TIMEOUT, BenchError

BROWSER_MCP = ROOT / ".venv" / "bin" / "browser-mcp"
REST_RELAY = "scripts.benchmarks.baselines.rest_relay"
MCP_RELAY = "scripts.benchmarks.baselines.mcp_relay"


@dataclass
class Server:
    kind: str
    process: asyncio.subprocess.Process
    pid: int  # the server itself, which a --broker-cmd wrapper may have started
    port: int
    token: str
    log: Path
    discovery_dir: Path | None = None
    discovery_file: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def stop(self) -> None:
        with suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), 15)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


def tail(path: Path, chars: int = 3000) -> str:
    return path.read_text(errors="replace")[-chars:]


async def announcement(process: asyncio.subprocess.Process, log: Path, what: str, pattern: str) -> re.Match[str]:
    """The line of the server's stdout that matches ``pattern``; lines before it are skipped.

    Whatever comes after is drained in the background, so a chatty wrapper never blocks.
    """
    assert process.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT
    skipped: list[str] = []
    while True:
        try:
            line = (await asyncio.wait_for(process.stdout.readline(), deadline - time.monotonic())).decode()
        except TimeoutError:
            process.kill()
            line = ""
        if not line:
            await process.wait()
            raise BenchError(
                f"{what} did not start (exit {process.returncode}); stdout: {skipped!r}; its log:\n{tail(log)}"
            )
        found = re.search(pattern, line)
        if found is not None:
            drain = asyncio.create_task(process.stdout.read())
            _background.add(drain)
            drain.add_done_callback(_background.discard)
            return found
        skipped.append(line)


_background: set[asyncio.Task[bytes]] = set()


async def start_broker(workdir: Path, command: list[str], port: int = 0, discovery_dir: Path | None = None) -> Server:
    """A broker on ``port`` (0: any free one) writing its discovery file to ``discovery_dir`` (a fresh one)."""
    discovery_dir = discovery_dir or Path(tempfile.mkdtemp(prefix="discovery-", dir=workdir))
    log = workdir / "broker.log"
    with log.open("ab") as stderr:
        process = await asyncio.create_subprocess_exec(
            *command, "--port", str(port), "--discovery-dir", str(discovery_dir),
            stdout=asyncio.subprocess.PIPE, stderr=stderr, cwd=ROOT,
            # Its lasting token stays in the bench's folder, not the user's configuration.
            env={**os.environ, ENV_TOKEN_FILE: str(workdir / "broker-token")},
        )  # fmt: skip
    found = await announcement(process, log, "the broker", r"listening on .*\(discovery file (.+)\)\s*$")
    discovery_file = Path(found.group(1))
    record = read_json(discovery_file)
    return Server(
        "broker", process, int(record["pid"]), int(record["port"]), record["token"], log, discovery_dir, discovery_file
    )


async def _start_baseline(
    kind: str, module: str, argument: str, workdir: Path, announced: str
) -> tuple[Server, re.Match[str]]:
    """A baseline module on a free port, with a token of its own; also the match of ``announced``."""
    token = secrets.token_urlsafe(32)
    log = workdir / f"{kind}.log"
    with log.open("ab") as stderr:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", module, argument,
            stdout=asyncio.subprocess.PIPE, stderr=stderr, cwd=ROOT,
            env={**os.environ, "BENCH_RELAY_TOKEN": token},
        )  # fmt: skip
    found = await announcement(process, log, f"the {kind}", announced)
    return Server(kind, process, process.pid, int(found.group(1)), token, log), found


async def start_relay(workdir: Path) -> Server:
    """The REST baseline, ``scripts/benchmarks/baselines/rest_relay.py``, on a free port."""
    server, _ = await _start_baseline("relay", REST_RELAY, "0", workdir, r"listening on http://127\.0\.0\.1:(\d+)")
    return server


async def start_mcp_baseline_http(workdir: Path) -> tuple[Server, str]:
    """The MCP baseline over HTTP; returns it and the URL of its extension link."""
    server, found = await _start_baseline(
        "baseline", MCP_RELAY, "http", workdir, r"listening on http://127\.0\.0\.1:(\d+)/mcp; extension link on (\S+)"
    )
    return server, found.group(2)


async def wait_for_tabs(session: aiohttp.ClientSession, broker: Server, count: int) -> None:
    """Until the broker lists the fake's ``count`` tabs."""
    headers = {"Authorization": f"Bearer {broker.token}"}
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        async with session.get(broker.url + "/tabs", headers=headers) as response:
            listed = orjson.loads(await response.read())
        if len(listed["tabs"]) >= count:
            return
        if time.monotonic() > deadline:
            raise BenchError(f"the broker did not list the fake's {count} tabs")
        await asyncio.sleep(0.02)
