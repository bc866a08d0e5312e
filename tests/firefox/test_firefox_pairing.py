"""End to end in Firefox ESR: the person pairs a broker through the add-on's popup.

A Firefox of its own, with no native host and nothing trusted: the add-on finds the broker on
the one port it is told to probe, shows it "not paired" and learns nothing from it until the
person types the code ``browser-mcp pair`` prints. A picture of the popup goes beside the test's
files (``popup-paired.png``).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..e2e.test_e2e_native_host import joined_browsers
from ..harness.chromium import probe_only
from ..harness.firefox import extension_firefox
from ..harness.waiting import eventually
from ..support.cli_helpers import Brokers, run_cli

MARK_ITEM = """(port) => {
    const item = [...document.querySelectorAll(".pair-broker")].find((i) => i.innerText.includes(`port ${port}`));
    item.querySelector("input").setAttribute("data-pair", port);
    item.querySelector("button").setAttribute("data-pair", port);
    return true;
}"""


async def test_the_person_pairs_a_broker_by_typing_its_code_in_the_popup(tmp_path: Path) -> None:
    async with Brokers(tmp_path / "discovery") as brokers:
        broker = await brokers.start()
        async with extension_firefox(tmp_path / "browser") as firefox:
            popup = await firefox.extension_page("person/popup.html")
            await probe_only(popup, broker.port)

            async def shows(text: str) -> bool:
                return text in await popup.evaluate("document.body.innerText")

            await eventually(lambda: shows(f"Found a broker on port {broker.port} that is not paired."), "unpaired")
            assert await joined_browsers(broker) is None, "an unpaired broker was told of the browser"
            paired = await run_cli("pair", "--port", str(broker.port), discovery_dir=brokers.discovery_dir)
            found = re.search(r"port \d+: ([A-Z0-9]{4}-[A-Z0-9]{4})", paired.stdout)
            assert found, paired.stdout
            await popup.evaluate(MARK_ITEM, broker.port)
            await popup.click(f'input[data-pair="{broker.port}"]')
            await popup.type_text(found.group(1))
            await popup.click(f'button[data-pair="{broker.port}"]')
            [browser] = await eventually(lambda: joined_browsers(broker), "Firefox to join the paired broker")
            assert browser["name"] == "Firefox"
            await eventually(lambda: shows(f"Port {broker.port}: connected"), "the popup to show it connected")
            (tmp_path / "popup-paired.png").write_bytes(await popup.screenshot())
