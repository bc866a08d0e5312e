"""Version skew is told, not suffered: the broker says its version and the oldest extension it
needs on the link's ``connect``; the extension says its own in ``connected``; an older one (or one
that does not say) still joins, and is named with what to do in REST ``/status``, ``browser-mcp
status`` and the broker's log. A real ``browser-mcp serve`` process and the scripted fake
extension; the popup's side is in ``tests/e2e/test_e2e_person.py``.
"""

from __future__ import annotations

import signal

import aiohttp
import pytest

from broker.core.browsers import outdated_extension
from broker.version import MIN_EXTENSION_VERSION, VERSION

from ..support.cli_helpers import BrokerProcess, Brokers, run_cli, table_rows
from ..support.fakes import FakeExtension, FakeTab

OLD = "0.0.9"


async def _join(session: aiohttp.ClientSession, broker: BrokerProcess, version: str | None) -> FakeExtension:
    fake = FakeExtension([FakeTab(7, "https://shop.example/")], extension_version=version)
    await fake.connect(session, broker.ws_url)
    start = len(fake.inbox)
    await fake.send({"type": "ping"})  # its pong means the snapshot before it is applied
    await fake.wait_for("pong", start=start)
    return fake


async def _status(session: aiohttp.ClientSession, broker: BrokerProcess) -> dict[str, object]:
    headers = {"Authorization": f"Bearer {broker.token}"}
    async with session.get(f"http://127.0.0.1:{broker.port}/status", headers=headers) as answer:
        assert answer.status == 200
        [browser] = (await answer.json())["browsers"]
        return dict(browser)


async def _log_after_stop(broker: BrokerProcess) -> str:
    broker.send_signal(signal.SIGTERM)
    return (await broker.exited()).stderr


@pytest.mark.parametrize(("said", "named"), [(OLD, f"is {OLD}"), (None, "does not say its version")])
async def test_an_older_extension_joins_and_is_named_with_what_to_do(
    brokers: Brokers, session: aiohttp.ClientSession, said: str | None, named: str
) -> None:
    broker = await brokers.start()
    fake = await _join(session, broker, said)
    try:
        [hello, *_] = fake.received("connect")
        assert hello["serverVersion"] == VERSION
        assert hello["minExtensionVersion"] == MIN_EXTENSION_VERSION

        browser = await _status(session, broker)
        assert browser["extensionVersion"] == said
        advice = browser["extensionOutdated"]
        assert isinstance(advice, str)
        assert named in advice
        assert f"needs {MIN_EXTENSION_VERSION} or newer" in advice
        assert "browser-mcp extension path" in advice
        assert "chrome://extensions" in advice

        shown = await run_cli("status", discovery_dir=brokers.discovery_dir)
        table, _, notes = shown.stdout.partition("\n\n")
        [row] = table_rows(table)
        assert f"(extension {said or '?'}, outdated)" in row["BROWSERS"]
        assert notes == f"port {broker.port}, b1: {advice}\n"

        start = len(fake.inbox)
        await fake.send_snapshot()  # a second snapshot with the same version is not logged again
        await fake.send({"type": "ping"})
        await fake.wait_for("pong", start=start)
    finally:
        await fake.close()
    log = await _log_after_stop(broker)
    assert log.count(advice) == 1, log
    assert f"WARNING broker.core.links: browser b1: {advice}" in log


async def test_a_current_extension_is_not_named(brokers: Brokers, session: aiohttp.ClientSession) -> None:
    broker = await brokers.start()
    fake = await _join(session, broker, VERSION)
    try:
        browser = await _status(session, broker)
        assert browser["extensionVersion"] == VERSION
        assert browser["extensionOutdated"] is None
        shown = await run_cli("status", discovery_dir=brokers.discovery_dir)
        [row] = table_rows(shown.stdout)
        assert f"(extension {VERSION})" in row["BROWSERS"]
    finally:
        await fake.close()
    assert "extension path" not in await _log_after_stop(broker)


@pytest.mark.parametrize(
    ("said", "outdated"),
    [
        ("0.1.0", False),
        ("0.1", False),  # Chrome's 0.1 is 0.1.0
        ("0.1.0.1", False),
        ("1.0", False),
        ("0.0.9", True),
        ("0.0.99.99", True),
        (None, True),
        ("", True),
        ("0.2-beta", True),  # not a version Chrome takes: nothing to trust
        ("1.2.3.4.5", True),
    ],
)
def test_older_means_below_the_minimum_number_by_number(said: str | None, outdated: bool) -> None:
    assert (outdated_extension(said, "0.1.0") is not None) is outdated


def test_no_minimum_names_no_extension() -> None:
    assert outdated_extension(None, "") is None
