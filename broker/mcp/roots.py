"""The folders an MCP client may upload from: its MCP roots, else the folder ``browser-mcp mcp`` ran in."""

from __future__ import annotations

import asyncio
import contextvars
import logging
from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .. import uploads

__all__ = ["ROOTS_INPUT", "ROOTS_TIMEOUT", "WORKDIR", "upload_folders"]

logger = logging.getLogger(__name__)

# The folder `browser-mcp mcp` was started in, for a connection it relays; files there may be uploaded.
WORKDIR: contextvars.ContextVar[str | None] = contextvars.ContextVar("mcp_workdir", default=None)
# How long a client that declared roots gets to list them, and the key its stateless answer has.
ROOTS_TIMEOUT = 5.0
ROOTS_INPUT = "roots"


async def upload_folders(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> list[str] | types.InputRequiredResult:
    """The folders this client may upload from: its MCP roots, or for `browser-mcp mcp` without
    them, the folder it was started in.

    A client that declares roots is asked for them: in the handshake era with a request of the
    broker's own, in the stateless one (2026-07-28) by answering the call with an
    InputRequiredResult, which the client answers by calling again with its roots. A client
    whose roots cannot be listed counts as one without.
    """
    capabilities = ctx.session.client_capabilities
    if capabilities is not None and capabilities.roots is not None:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            answered = (params.input_responses or {}).get(ROOTS_INPUT)
            if answered is None:
                return types.InputRequiredResult(input_requests={ROOTS_INPUT: types.ListRootsRequest()})
            listed = answered if isinstance(answered, types.ListRootsResult) else None
        else:
            try:
                async with asyncio.timeout(ROOTS_TIMEOUT):
                    listed = await ctx.session.send_request(types.ListRootsRequest(), types.ListRootsResult)
            except (MCPError, TimeoutError) as exc:
                logger.info("the client's roots could not be listed: %s", exc)
                listed = None
        if listed is not None:
            return [folder for root in listed.roots if (folder := uploads.root_folder(str(root.uri)))]
    workdir = WORKDIR.get()
    return [workdir] if workdir else []
