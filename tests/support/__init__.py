"""The helpers the tests share: the scripted fake extension (fakes.py), real broker processes (cli_helpers.py),
the MCP SDK's clients (mcp_clients.py), the browser tests' worlds (extension_world.py, person_world.py,
actions_world.py with fake_broker.py, firefox_world.py, records_world.py), page-side functions and pages, and the
Firefox tests' probes. The browsers themselves, the pages served and waiting are ``tests.harness``'s, which the
benchmark shares.
"""
