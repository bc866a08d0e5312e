"""The extension's message type names (``extension/base/protocol.js``) match the broker's codec."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

from broker import codec
from broker.core import link_calls
from broker.core.broker_messages import BrokerMessage, HandshakeMessage, HandshakeReply
from broker.core.messages import ExtensionMessage
from broker.core.security import PROJECT_EXTENSION_ID
from broker.version import BROKER_HEADER

EXTENSION = Path(__file__).resolve().parents[2] / "extension"


def _names(block: str, name: str = "[A-Za-z]+") -> set[str]:
    source = (EXTENSION / "base" / "protocol.js").read_text()
    found = re.search(rf"export const {block} = Object\.freeze\(\{{(.*?)\}}\);", source, re.S)
    assert found is not None, f"protocol.js has no {block}"
    return set(re.findall(rf':\s*"({name})"', found.group(1)))


def test_protocol_js_names_every_message_the_broker_sends() -> None:
    sent = {*BrokerMessage.__args__, *HandshakeReply.__args__}
    assert _names("FromBroker") == {codec.TAGS[cls] for cls in sent}


def test_protocol_js_names_every_message_the_broker_accepts() -> None:
    accepted = {*ExtensionMessage.__args__, *HandshakeMessage.__args__}
    assert _names("ToBroker") == {codec.TAGS[cls] for cls in accepted}


def test_the_extensions_refusal_codes_are_the_ones_the_broker_maps_to_its_errors() -> None:
    assert _names("PersonRefusal", "[a-z_]+") == set(link_calls._DECLINED)
    assert _names("Refusal", "[a-z_]+") == set(link_calls._REFUSED)


def test_the_extensions_close_refusals_are_ones_the_broker_maps_to_its_errors() -> None:
    sent = _names("CloseRefusal", "[a-z_]+") | {"paused", "tab_not_claimed"}
    assert sent <= set(link_calls._CLOSE_REFUSALS)


def test_protocol_js_knows_the_header_that_marks_a_brokers_answers() -> None:
    source = (EXTENSION / "base" / "protocol.js").read_text()
    assert f'export const BROKER_HEADER = "{BROKER_HEADER}";' in source


def test_the_manifest_key_gives_the_project_extension_id() -> None:
    key = json.loads((EXTENSION / "manifest.json").read_text())["key"]
    digest = hashlib.sha256(base64.b64decode(key)).hexdigest()[:32]
    assert digest.translate(str.maketrans("0123456789abcdef", "abcdefghijklmnop")) == PROJECT_EXTENSION_ID
