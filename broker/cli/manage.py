"""The commands that manage a live broker rather than a tab: ``pair`` and ``stop``."""

from __future__ import annotations

import argparse
import time

from ..core.link_auth import pairing_text
from ..relay.errors import ClientError
from .output import print_json
from .tabs import connect

__all__ = ["pair", "stop"]


def pair(args: argparse.Namespace) -> int:
    client = connect(args)
    issued = client.post("/pairing", {})
    if args.json:
        print_json(issued)
        return 0
    print(pairing_text(client.record.port, issued["code"], issued["expiresIn"]))
    return 0


def stop(args: argparse.Namespace) -> int:
    client = connect(args)
    client.post("/shutdown", {})
    deadline = time.monotonic() + 10
    while client.record.path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if client.record.path.exists():
        raise ClientError(f"broker {client.record.pid} did not stop within 10 s")
    if args.json:
        print_json({"stopped": client.record.pid, "port": client.record.port})
    else:
        print(f"stopped the broker on port {client.record.port} (pid {client.record.pid})")
    return 0
