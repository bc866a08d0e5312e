"""The REST door: the original bridge's routes and the broker's own, for scripts and curl.

``routes`` holds every route (docs/rest.md). May import :mod:`broker.daemon`, :mod:`broker.core`
and the shared modules; not the other doors.
"""
