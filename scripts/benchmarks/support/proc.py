"""A process's own counters, read from ``/proc`` (Linux only): CPU, memory, open files; and finding a
child process."""

from __future__ import annotations

import os
import time
from contextlib import suppress
from pathlib import Path

from . import START_TIMEOUT, BenchError

CLOCK_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> tuple[float, float]:
    """utime and stime of ``pid`` (all its threads), in seconds."""
    data = Path(f"/proc/{pid}/stat").read_text()
    fields = data[data.rfind(")") + 2 :].split()
    # fields[0] is field 3 (state) of proc(5); utime and stime are fields 14 and 15.
    return int(fields[11]) / CLOCK_TICK, int(fields[12]) / CLOCK_TICK


def total_cpu(pid: int) -> float:
    return sum(cpu_seconds(pid))


def run_seconds(pid: int) -> float:
    """CPU time of ``pid``'s live threads as the scheduler counts it (``/proc/<pid>/task/*/schedstat``).

    Nanoseconds rather than clock ticks, for short spans where a 10 ms tick would swamp the
    figure; threads that have ended are no longer counted.
    """
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with suppress(OSError):  # a thread that ended meanwhile
            total += int((task / "schedstat").read_text().split()[0])
    return total / 1e9


def status_kib(pid: int, key: str) -> int:
    """A ``/proc/<pid>/status`` figure in KiB: ``VmRSS`` (now) or ``VmHWM`` (the peak)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise BenchError(f"no {key} in /proc/{pid}/status")


def open_fds(pid: int) -> int:
    """How many file descriptors ``pid`` holds open."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def child_pid(marker: str) -> int:
    """The pid of this process's child whose command line contains ``marker``."""
    me = str(os.getpid())
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with suppress(OSError):
                stat = (entry / "stat").read_text()
                if stat[stat.rfind(")") + 2 :].split()[1] != me:
                    continue
                if marker in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    return int(entry.name)
        time.sleep(0.01)
    raise BenchError(f"no child process running {marker!r}")
