"""A small synchronous client of a live broker's REST API, for the command line.

Picks a broker from the discovery records and speaks to it with the standard library's
``urllib`` (a CLI runs one request and exits; no event loop is worth starting for that). Broker
errors come back as :class:`ClientError` carrying the broker's own code and message.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import Any

from . import codec
from .discovery import BrokerRecord, matching_brokers

__all__ = ["BrokerClient", "ClientError", "select_broker"]


class ClientError(Exception):
    """A command cannot do what was asked; the message is for a person."""


def select_broker(records: list[BrokerRecord], pid: int | None, port: int | None) -> BrokerRecord:
    """The one broker meant: named by ``pid`` or ``port``, or the only one alive.

    Raises:
        ClientError: none is alive, none matches, or several are alive and none was named.
    """
    if not records:
        raise ClientError("no broker is running (start one with: browser-mcp serve)")
    matching = matching_brokers(records, pid, port)
    if not matching:
        alive = ", ".join(f"pid {r.pid} port {r.port}" for r in records)
        raise ClientError(f"no live broker matches (alive: {alive})")
    if len(matching) > 1:
        alive = ", ".join(f"pid {r.pid} port {r.port}" for r in matching)
        raise ClientError(f"several brokers are alive ({alive}); choose one with --pid or --port")
    return matching[0]


class BrokerClient:
    def __init__(self, record: BrokerRecord, timeout: float = 120.0) -> None:
        self.record = record
        self.timeout = timeout

    def get(self, path: str) -> Any:
        return self._request("GET", path, None)

    def post(self, path: str, body: Any) -> Any:
        return self._request("POST", path, body)

    def delete(self, path: str) -> Any:
        return self._request("DELETE", path, None)

    def _request(self, method: str, path: str, body: Any) -> Any:
        """Raises: ClientError, with the broker's error code and message when it gave one."""
        data = None if body is None else codec.dumps(body)
        request = urllib.request.Request(
            self.record.url + path,
            data=data,
            method=method,
            headers={
                "Authorization": f"Bearer {self.record.token}",
                "Content-Type": "application/json",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return codec.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise ClientError(_broker_error(exc)) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ClientError(f"cannot reach the broker on port {self.record.port}: {reason}") from None


def _broker_error(exc: urllib.error.HTTPError) -> str:
    try:
        error = codec.loads(exc.read())["error"]
        return f"{error['message']} ({error['code']}, HTTP {exc.code})"
    except (ValueError, KeyError, TypeError):
        return f"HTTP {exc.code} {exc.reason}"
