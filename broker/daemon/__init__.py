"""The running broker's centre, which every door uses: the hub, the runtime and the JSON views.

:mod:`~broker.daemon.hub` carries out the core's effects on the event loop; ``runtime`` is what a
running broker knows about itself (settings, identity, the app keys); ``connections`` bounds the
connections that have shown no token; ``views`` writes tabs, browsers and sessions as the JSON
every client reads. May import :mod:`broker.core` and the shared modules at ``broker/``' top
(codec, files, paths, discovery, uploads, version, loop); never a door (``mcp``, ``rest``,
``link``), the relay, the installers or the command line.
"""
