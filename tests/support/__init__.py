"""The helpers the tests share: the scripted fake extension (fakes.py), Chromium and Firefox with the extension
(chromium.py, firefox.py), real broker processes (cli_helpers.py), the MCP SDK's clients (mcp_clients.py), page-side
functions and pages, and the Firefox tests' probes.
"""
