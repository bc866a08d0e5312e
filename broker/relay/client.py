"""A small synchronous client of a live broker's REST API, for the command line.

Picks a broker from the discovery records and speaks to it with the standard library's
``urllib`` (a CLI runs one request and exits; no event loop is worth starting for that). Broker
errors come back as :class:`ClientError` carrying the broker's own code and message.

The owner's token goes only to a server that proved it is the broker the discovery file names:
before the first request, ``POST /auth/challenge`` with a fresh nonce must come back with the
proof keyed by the file's token for the file's port (:mod:`broker.core.link_auth`). A file whose
pid now belongs to another program, pointing at whatever listens on that port, gets nothing.
Requests never go through a proxy: proxy settings are for the web, and a proxy would see the token.
"""

from __future__ import annotations

import secrets
import urllib.error
import urllib.request
from typing import Any

from .. import codec
from ..core import link_auth
from ..discovery import BrokerRecord, matching_brokers
from .errors import ClientError

__all__ = ["BrokerClient", "ClientError", "LOOPBACK", "check_broker_proof", "select_broker"]

# No ProxyHandler from the environment: http_proxy and ALL_PROXY must not see loopback requests.
LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))


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


def check_broker_proof(record: BrokerRecord, nonce: str, answer: object) -> None:
    """Raises: ClientError, unless ``answer`` to ``/auth/challenge`` proves the token of ``record``."""
    proof = answer.get("proof") if isinstance(answer, dict) else None
    if not link_auth.check_proof(proof, link_auth.link_key(record.token), link_auth.Role.HTTP, record.port, nonce):
        raise ClientError(
            f"the server on port {record.port} did not prove it is the broker of {record.path}"
            f" (pid {record.pid}); not sending it the token. Is that file stale? Start a broker"
            " with browser-mcp serve"
        )


class BrokerClient:
    def __init__(self, record: BrokerRecord, timeout: float = 120.0) -> None:
        self.record = record
        self.timeout = timeout
        self._proven = False

    def prove(self) -> None:
        """Check, once, that the server on the record's port is the broker holding its token.

        Raises:
            ClientError: it is not, or cannot be reached.
        """
        if self._proven:
            return
        nonce = link_auth.b64(secrets.token_bytes(32))
        request = urllib.request.Request(
            self.record.url + "/auth/challenge",
            data=codec.dumps({"nonce": nonce}),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        try:
            with LOOPBACK.open(request, timeout=self.timeout) as response:
                answer = codec.loads(response.read())
        except urllib.error.HTTPError as exc:
            answer = None
            exc.close()
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ClientError(f"cannot reach the broker on port {self.record.port}: {reason}") from None
        except ValueError:
            answer = None
        check_broker_proof(self.record, nonce, answer)
        self._proven = True

    def get(self, path: str) -> Any:
        return self._request("GET", path, None)

    def post(self, path: str, body: Any) -> Any:
        return self._request("POST", path, body)

    def delete(self, path: str) -> Any:
        return self._request("DELETE", path, None)

    def _request(self, method: str, path: str, body: Any) -> Any:
        """Raises: ClientError, with the broker's error code and message when it gave one."""
        self.prove()
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
            with LOOPBACK.open(request, timeout=self.timeout) as response:
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
