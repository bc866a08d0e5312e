"""The fixture the MCP door's tests share."""

from __future__ import annotations

import pytest

from ..support.mcp_clients import ERAS


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)
