"""The ports 8765-8785 the extension probes for brokers, as the tests share them with every other
run on the machine: which are free, and a broker or app of a test's own on one of them."""

from __future__ import annotations

import os
import socket

from aiohttp import web

from .cli_helpers import BrokerProcess, Brokers

PROBED_PORTS = range(8765, 8786)


def free_probed_ports() -> list[int]:
    """The probed ports free now, starting at a place of this process's own, so that parallel
    runs and workers rarely race for one port; quiet ports first.

    A port counts as free as the broker would find it: its listener sets ``SO_REUSEADDR``, so a
    port whose last connections linger in TIME_WAIT (the extension probes every port again and
    again) is free for it, though a plain ``bind`` refuses it. Those come last: a broker that has
    just stopped leaves its port so, and a browser that found it there a moment ago may still
    open a link to whatever listens on it next."""
    start = os.getpid() % len(PROBED_PORTS)
    quiet, lingering = [], []
    for port in [*PROBED_PORTS[start:], *PROBED_PORTS[:start]]:
        if _binds(port, reuse=False):
            quiet.append(port)
        elif _binds(port, reuse=True):
            lingering.append(port)
    return quiet + lingering


def _binds(port: int, reuse: bool) -> bool:
    with socket.socket() as probe:
        if reuse:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def no_free_port(what: str) -> AssertionError:
    return AssertionError(f"no free port in {PROBED_PORTS.start}-{PROBED_PORTS.stop - 1} for {what}")


async def start_probed_broker(brokers: Brokers, *extra: str) -> BrokerProcess:
    """A broker on a port the extension probes; another run may take a port found free first,
    and the next is tried."""
    for port in free_probed_ports():
        try:
            return await brokers.start(*extra, port=port)
        except AssertionError:
            continue
    raise no_free_port("the test broker")


async def serve_on_probed_port(runner: web.AppRunner) -> int:
    """Serve ``runner``'s app on a free probed port (another run may take one first); its port."""
    for port in free_probed_ports():
        try:
            await web.TCPSite(runner, "127.0.0.1", port).start()
        except OSError:
            continue
        return port
    raise no_free_port("the test app")
