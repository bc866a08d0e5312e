"""Both page drivers against their written contract (``extension/actions/contract.js``), under Node
without a browser (``tests/js/page_drivers.mjs``): each has the members the contract names for it
and no other, announces the tools the declaration (``extension/actions/tools.js``) gives it, and
answers none of them not_supported."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "tests" / "js" / "page_drivers.mjs"


@pytest.fixture(scope="module")
def problems() -> dict[str, Any]:
    node = shutil.which("node")
    assert node, "node is missing: scripts/test needs Node (apt-get install nodejs npm)"
    done = subprocess.run(
        [node, str(HARNESS), str(ROOT / "extension")], check=False, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_the_contract_documents_every_member_it_lists_and_no_other(problems: dict[str, Any]) -> None:
    assert problems["contract"] == []


@pytest.mark.parametrize("driver", ["devtools", "webextension"])
def test_a_driver_has_its_contracts_members_and_carries_out_its_declared_tools(
    problems: dict[str, Any], driver: str
) -> None:
    assert problems[driver] == []
