"""The helpers the tests share: the scripted fake extension (fakes.py), Chromium and Firefox with the extension
(chromium.py, firefox.py), real broker processes (cli_helpers.py), the MCP SDK's clients (mcp_clients.py), the
browser tests' worlds (extension_world.py, person_world.py, actions_world.py with fake_broker.py, firefox_world.py,
records_world.py),
pages served (page_server.py), waiting (waiting.py), page-side functions and pages, and the Firefox tests' probes.
"""
