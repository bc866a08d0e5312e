"""The baselines the broker is measured beside, each run as a process of its own (``python -m``):
``rest_relay.py`` (REST calls: stock aiohttp and the standard library's json) and ``mcp_relay.py`` (the
MCP SDK's low-level server with one forwarding tool, over HTTP or stdio), sharing their end of the
extension link (``link.py``). Their memory and start-up are figures of the reports, so they import
nothing of the bench beyond this package.
"""
