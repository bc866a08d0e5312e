"""The client side: what runs in an AI client's or a person's process and talks to a broker.

``stdio_relay`` is ``browser-mcp mcp``, the stdio MCP server an AI client spawns, relayed to a
broker; ``finder`` finds a live broker for it or starts one; ``client`` is the command line's small
REST client; ``stdio`` guards the process's own stdin and stdout. May import :mod:`broker.core`
and the shared modules; never the daemon or its doors, which run in another process.
"""
