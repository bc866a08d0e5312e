"""Ending a process the harness or a test started: asked first, killed only if it does not go."""

from __future__ import annotations

import asyncio


async def terminate_or_kill(process: asyncio.subprocess.Process, grace: float) -> None:
    """End ``process`` (SIGTERM), and kill it if it has not exited within ``grace`` seconds."""
    if process.returncode is None:
        process.terminate()
        try:
            async with asyncio.timeout(grace):
                await process.wait()
        except TimeoutError:
            process.kill()
            await process.wait()
