"""What a started broker has loaded: only what serving needs, the rest when it is first used.

A real ``browser-mcp serve`` process, run until it has answered a request; what it mapped is read
from ``/proc/<pid>/maps``, what it imported from Python's own ``-X importtime`` lines on stderr.
"""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import aiohttp

from ..support.cli_helpers import CLI, EXIT_TIMEOUT, START_TIMEOUT, cli_env, finish

# Loaded only for a pairing (cryptography: its Rust binding and libcrypto's pages, some 8 MB) or for
# another command than serve (its options live beside it).
NOT_AT_START = ("cryptography", "tomlkit", "broker.install")


def _token_in(discovery_dir: Path) -> str:
    token: str = json.loads(next(discovery_dir.glob("*.json")).read_text())["token"]
    return token


def _maps_of(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


async def serve_until_answered(discovery_dir: Path) -> tuple[str, str]:
    """The maps of a broker that has answered ``GET /status``, and the imports it reported until it stopped."""
    process = await asyncio.create_subprocess_exec(
        *CLI, "serve", "--port", "0", "--discovery-dir", str(discovery_dir),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env=cli_env(discovery_dir, PYTHONPROFILEIMPORTTIME="1"),
    )  # fmt: skip
    try:
        assert process.stdout is not None
        async with asyncio.timeout(START_TIMEOUT):
            line = (await process.stdout.readline()).decode()
        port = int(line.split("http://127.0.0.1:", 1)[1].split(" ", 1)[0])
        token = _token_in(discovery_dir)
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{port}/status", headers={"Authorization": f"Bearer {token}"}) as answer,
        ):
            assert answer.status == 200, await answer.text()
        maps = _maps_of(process.pid)
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(EXIT_TIMEOUT):
            _out, err = await finish(process)
    return maps, err.decode()


async def test_a_started_broker_has_not_mapped_cryptography_which_only_pairing_needs(discovery_dir: Path) -> None:
    maps, imports = await serve_until_answered(discovery_dir)
    assert "import time:" in imports, imports[:2000]  # the imports were reported: their absence below means something
    assert "cryptography" not in maps


async def test_a_started_broker_has_not_imported_the_other_commands_modules(discovery_dir: Path) -> None:
    _maps, imports = await serve_until_answered(discovery_dir)
    imported = {line.rsplit("|", 1)[1].strip() for line in imports.splitlines() if line.startswith("import time:")}
    assert "broker.app" in imported and "aiohttp.web" in imported
    loaded = sorted(name for name in imported if name.startswith(NOT_AT_START))
    assert loaded == []
