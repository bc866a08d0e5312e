"""Who holds the ports the extension probes for a broker: ours, another user's broker, or another program.

An extension that finds something else on a probed port cannot tell it from a broker until it
answers; the doctor names the process (from /proc, else lsof) so the person can tell.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
from collections.abc import Iterator
from pathlib import Path

from ..discovery import is_broker_process, printed_words
from .doctor_findings import Finding, LiveBroker

__all__ = ["PORTS", "port_findings"]


PORTS = range(8765, 8786)


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # As the broker binds: SO_REUSEADDR, so a port left in TIME_WAIT counts as free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return False
            raise
    return True


def _proc_listeners(ports: set[int]) -> dict[int, set[str]]:
    """Port -> socket inodes listening on it, from ``/proc/net/tcp{,6}``."""
    found: dict[int, set[str]] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                port = int(fields[1].rsplit(":", 1)[1], 16)
                if fields[3] == "0A" and port in ports:  # 0A: LISTEN
                    found.setdefault(port, set()).add(fields[9])
    return found


def _proc_owners(inodes: dict[int, set[str]]) -> dict[int, tuple[int, str]]:
    """Port -> (pid, name) of a process holding one of its sockets, for the processes we may look into."""
    wanted = {f"socket:[{inode}]": port for port, group in inodes.items() for inode in group}
    owners: dict[int, tuple[int, str]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or len(owners) == len(inodes):
            continue
        with contextlib.suppress(OSError):
            for fd in (proc / "fd").iterdir():
                port = wanted.get(os.readlink(fd))
                if port is not None and port not in owners:
                    name = (proc / "comm").read_text().strip()
                    words = (proc / "cmdline").read_bytes().split(b"\0")
                    line = " ".join(w.decode(errors="replace") for w in words if w)
                    owners[port] = (int(proc.name), f"{name}: {line[:80]}" if line else name)
    return owners


def _lsof_owner(port: int) -> tuple[int, str] | None:
    shown = printed_words(["lsof", "-nP", f"-iTCP:{port}", "-sTCP:LISTEN", "-Fpc"], timeout=10)
    if shown is None:
        return None
    pid = next((int(w[1:]) for w in shown if w.startswith("p") and w[1:].isdigit()), None)
    name = next((w[1:] for w in shown if w.startswith("c")), "?")
    return None if pid is None else (pid, name)


def port_findings(brokers: list[LiveBroker]) -> Iterator[Finding]:
    ours = {b.record.port: b.record.pid for b in brokers}
    held = [p for p in PORTS if not _port_free(p)]
    others = [p for p in held if p not in ours]
    owners = _proc_owners(_proc_listeners(set(others))) if Path("/proc/net/tcp").exists() else {}
    parts = []
    for port in held:
        if port in ours:
            parts.append(f"{port} our broker (pid {ours[port]})")
            continue
        owner = owners.get(port) or _lsof_owner(port)
        if owner is None:
            parts.append(f"{port} another process (the system does not say which)")
        elif is_broker_process(owner[0]):
            parts.append(
                f"{port} a broker not in the discovery folders, started with another --discovery-dir? (pid {owner[0]})"
            )
        else:
            parts.append(f"{port} {owner[1]} (pid {owner[0]})")
    free = len(PORTS) - len(held)
    text = f"{PORTS.start}-{PORTS.stop - 1}: {free} free" + "".join(f"; {part}" for part in parts)
    if free == 0:
        yield Finding(
            "ports",
            "problem",
            text,
            "a new broker takes any port then, which the extension finds only through the native host:"
            " stop what holds them, or browser-mcp install-native-host",
        )
    elif others:
        # The extension looks for brokers on these ports and skips servers that are not one.
        yield Finding("ports", "note", text + " (the extension skips servers that are not brokers)")
    else:
        yield Finding("ports", "ok", text)
