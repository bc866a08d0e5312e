"""End to end in Firefox ESR: the add-on trusts a broker through the native host, no code typed.

``install-native-host --browser firefox`` writes Firefox's manifest under the test's ``HOME``
(``.mozilla/native-messaging-hosts``), allowing the add-on's gecko id. The broker listens on a
port outside 8765-8785 and requires the link key, so joining it proves both the native path and
that a ``moz-extension://`` origin, drawn per profile, is admitted by the key's proof alone.
"""

from __future__ import annotations

import json
from pathlib import Path

from broker.core.security import FIREFOX_EXTENSION_ID

from ..e2e.test_e2e_native_host import joined_browsers
from ..harness.firefox import extension_firefox
from ..harness.waiting import eventually
from ..support.cli_helpers import Brokers, cli_env, run_cli
from ..support.mcp_clients import LEGACY, mcp_client


async def test_firefox_joins_a_key_requiring_broker_the_native_host_names(
    brokers: Brokers, discovery_dir: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = cli_env(discovery_dir, HOME=str(home))
    installed = await run_cli("install-native-host", "--browser", "firefox", discovery_dir=discovery_dir, env=env)
    assert installed.returncode == 0, installed.stderr
    manifest = json.loads((home / ".mozilla/native-messaging-hosts/browser_mcp.broker.json").read_text())
    assert manifest["allowed_extensions"] == [FIREFOX_EXTENSION_ID]

    broker = await brokers.start("--require-extension-token")
    assert broker.port not in range(8765, 8786)
    async with extension_firefox(home, env=env) as firefox:
        [browser] = await eventually(lambda: joined_browsers(broker), "Firefox to join the broker")
        async with mcp_client(f"http://127.0.0.1:{broker.port}/mcp", broker.token, "Fox Client", LEGACY) as client:
            opened = await client.call_json("tabs", {"action": "open", "url": "about:blank"})
            assert opened, opened
        assert browser["instanceId"]
        assert browser["name"] == "Firefox" and browser["version"].split(".")[0].isdigit(), browser
        assert browser["driver"]["name"] == "webextension", browser
        # Its page's Origin is the add-on's, drawn for this profile.
        assert firefox.extension_origin.startswith("moz-extension://")
