"""What ``browser-mcp doctor`` finds, and the live brokers its checks look at."""

from __future__ import annotations

import pwd
from pathlib import Path
from typing import Any, Literal

import attrs

from .. import paths
from ..discovery import BrokerRecord, live_brokers
from ..relay.client import BrokerClient, ClientError

__all__ = ["ANSWER_TIMEOUT", "Finding", "Level", "LiveBroker", "find_brokers", "user_name"]


# A broker answers /status at once; one that does not (stopped, hung) must not hang the doctor
# (``doctor --timeout`` sets another).
ANSWER_TIMEOUT = 5.0
Level = Literal["ok", "note", "problem"]


@attrs.frozen
class Finding:
    check: str
    level: Level
    text: str
    fix: str | None = None


@attrs.frozen
class LiveBroker:
    record: BrokerRecord
    status: dict[str, Any] | None
    error: str | None


def user_name(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def find_brokers(discovery_dir: Path | None, timeout: float = ANSWER_TIMEOUT) -> list[LiveBroker]:
    found = []
    for record in live_brokers(paths.discovery_dirs(discovery_dir)):
        try:
            found.append(LiveBroker(record, BrokerClient(record, timeout=timeout).get("/status"), None))
        except ClientError as exc:
            found.append(LiveBroker(record, None, str(exc)))
    return found
