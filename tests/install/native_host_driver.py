"""``browser-mcp native-host`` driven as the browser drives it: its length-prefixed frames, the host in a
subprocess, and the discovery record of a broker to plant for it.
"""

from __future__ import annotations

import asyncio
import json
import struct
from pathlib import Path
from typing import Any

from broker.core.security import PROJECT_EXTENSION_ID

from ..support.cli_helpers import CLI, EXIT_TIMEOUT, START_TIMEOUT, cli_env, discovery_fields

__all__ = ["Host", "LENGTH", "ORIGIN", "fields", "frame", "split_frames"]


ORIGIN = f"chrome-extension://{PROJECT_EXTENSION_ID}/"
LENGTH = struct.Struct("=I")


def frame(message: Any) -> bytes:
    body = json.dumps(message).encode()
    return LENGTH.pack(len(body)) + body


def split_frames(data: bytes) -> list[dict[str, Any]]:
    """Every message in ``data``; fails when anything but whole frames of JSON objects is there."""
    messages = []
    while data:
        assert len(data) >= LENGTH.size, f"a partial length prefix: {data!r}"
        (size,) = LENGTH.unpack(data[: LENGTH.size])
        body, data = data[LENGTH.size : LENGTH.size + size], data[LENGTH.size + size :]
        assert len(body) == size, f"a frame cut short: {body!r}"
        message = json.loads(body)
        assert isinstance(message, dict) and "type" in message, message
        messages.append(message)
    return messages


class Host:
    """``browser-mcp native-host`` in a subprocess, driven as the browser drives it."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, discovery_dir: Path, *args: str, command: tuple[str, ...] | None = None) -> Host:
        process = await asyncio.create_subprocess_exec(
            *(command or (*CLI, "native-host")),
            *(args or (ORIGIN,)),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=cli_env(discovery_dir),
        )
        return cls(process)

    async def read(self, within: float = START_TIMEOUT) -> dict[str, Any]:
        assert self.process.stdout is not None
        async with asyncio.timeout(within):
            header = await self.process.stdout.readexactly(LENGTH.size)
            body = await self.process.stdout.readexactly(LENGTH.unpack(header)[0])
        message: dict[str, Any] = json.loads(body)
        return message

    async def brokers(self, within: float = START_TIMEOUT) -> list[dict[str, Any]]:
        message = await self.read(within)
        assert message["type"] == "brokers", message
        assert set(message) == {"type", "brokers"}
        brokers: list[dict[str, Any]] = message["brokers"]
        return brokers

    def send(self, message: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(frame(message))

    async def close(self) -> tuple[int | None, list[dict[str, Any]], str]:
        """Close stdin as the browser does; exit code, the messages after, and stderr."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            async with asyncio.timeout(EXIT_TIMEOUT):
                out, err = await self.process.communicate()
        finally:
            if self.process.returncode is None:
                self.process.kill()
                await self.process.communicate()
        return self.process.returncode, split_frames(out), err.decode()


def fields(pid: int, port: int = 8765) -> dict[str, Any]:
    return discovery_fields(pid, port, extra="not sent")
