"""Putting the broker in its place on a machine, and checking it is there.

The native messaging host and its installer (``native_host``, ``native_install``), the login
service (``service``), the AI applications' MCP configuration files (``client_apps``), the
extension the package carries and its Firefox build (``extension_package``, ``firefox_extension``)
and ``doctor``. May import the relay's client, :mod:`broker.core` and the shared modules; never
the daemon or its doors. None of it is loaded by ``browser-mcp serve``.
"""
