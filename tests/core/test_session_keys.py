"""A session's key as one type (``broker/core/sessions.py``'s SessionKey): its kind a field, its string
the one the core and every answer carry, and read back from that string alone."""

from __future__ import annotations

import pytest

from broker.core.sessions import SessionKey, SessionKind


@pytest.mark.parametrize(
    ("key", "written"),
    [
        (SessionKey(SessionKind.MCP_CONNECTION, "3f2a9c0d1e2b"), "mcp-3f2a9c0d1e2b"),
        (SessionKey(SessionKind.MCP_HTTP, "abc"), "mcp-http-abc"),
        (SessionKey(SessionKind.MCP_CLIENT, "ci"), "mcp-client:ci"),
        (SessionKey(SessionKind.MCP_NAME, "Claude Code"), "mcp-name:Claude Code"),
        (SessionKey(SessionKind.REST), "rest"),
        (SessionKey(SessionKind.REST, "ci"), "rest:ci"),
        (SessionKey(SessionKind.CHOSEN, "my-script"), "my-script"),
    ],
)
def test_a_key_is_written_as_its_door_always_wrote_it_and_read_back_whole(key: SessionKey, written: str) -> None:
    assert str(key) == written
    assert SessionKey.of(written) == key


def test_only_a_key_a_rest_caller_chose_is_not_reserved() -> None:
    assert not SessionKey.of("my-script").reserved
    assert not SessionKey.of("restful").reserved
    assert not SessionKey.of("mcp").reserved
    assert all(SessionKey.of(key).reserved for key in ("rest", "rest:other", "mcp-", "mcp-x", "mcp-http-1"))
