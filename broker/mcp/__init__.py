"""The MCP door: MCP over HTTP on the broker's port and the stdio tunnel, through the official SDK.

``door`` adds the routes and loads the SDK with the first MCP request; ``transports`` serves
Streamable HTTP in both protocol eras and the tunnel that ``browser-mcp mcp`` relays into;
``asgi`` runs the SDK's ASGI handlers inside aiohttp; ``server`` is the SDK ``Server`` whose tools
are computed for the session asking; ``progress`` tells a waiting client how long it has waited.
May import :mod:`broker.daemon`, :mod:`broker.core` and the shared modules; not the other doors.
"""
