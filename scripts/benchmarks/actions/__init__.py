"""The actions suite: the built-in browser tools beside Playwright MCP's (``suite.py``), the two sides
behind the MCP SDK client (``sides.py``), and Firefox beside Chromium for ``--browser firefox``
(``firefox.py``)."""
