"""The extension link: the WebSocket browser extensions open at ``/``, and its handshake.

``websocket`` upgrades and feeds each frame to the hub; ``handshake`` is the broker's side of
proving who it is (the link key, pairing) and the HTTP routes that go with it. May import
:mod:`broker.daemon`, :mod:`broker.core` and the shared modules; not the other doors.
"""
