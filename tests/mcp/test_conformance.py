"""The public MCP conformance suite (``@modelcontextprotocol/conformance``) against a real broker's ``/mcp``.

Each test runs the suite's CLI for one server scenario in one protocol era (``--spec-version``)
against one ``browser-mcp serve`` the module starts for them all (each scenario opens sessions of
its own, and none changes what the broker serves), and reads the checks it wrote (``-o DIR`` ->
``DIR/<run>/checks.json``).
Every check must be SUCCESS (or INFO), except the few named in ``EXCLUDED_CHECKS``.

The suite's version and a Node 22 binary for it (it needs Node >= 22; Debian has 20) are pinned in
``tests/conformance/package.json`` and its lockfile; ``scripts/test`` runs ``npm ci`` there. The CLI
has no option for request headers, so ``tests/conformance/auth-header.mjs`` is preloaded into it to
add the broker's ``Authorization: Bearer <token>``. Without node or the installed suite the tests
fail (never skip): conformance tests must run in CI.

Scenarios of the suite's two requirement sets that are not run, and why:

- Capabilities the broker does not offer (it serves tools only):
  ``logging-set-level``, ``tools-call-with-logging`` (logging); ``completion-complete``
  (completions); ``resources-list``, ``resources-read-text``, ``resources-read-binary``,
  ``resources-templates-read``, ``resources-subscribe``, ``resources-unsubscribe``,
  ``sep-2164-resource-not-found`` (resources); ``prompts-list``, ``prompts-get-simple``,
  ``prompts-get-with-args``, ``prompts-get-embedded-resource``, ``prompts-get-with-image`` (prompts);
  the ten ``tasks-*`` scenarios (the tasks extension).
- Fixture tools of the suite's reference server, which the broker does not have (its tools are
  ``tabs``, ``page_tools``, ``call_page_tool``): ``tools-call-simple-text``, ``tools-call-image``,
  ``tools-call-audio``, ``tools-call-embedded-resource``, ``tools-call-mixed-content``,
  ``tools-call-with-progress``, ``tools-call-sampling``, ``tools-call-elicitation``,
  ``elicitation-sep1034-defaults``, ``elicitation-sep1330-enums``, ``json-schema-2020-12``,
  ``http-custom-header-server-validation`` (a tool with ``x-mcp-header`` annotations), and the
  fourteen ``input-required-result-*`` scenarios (SEP-2322: tools that ask the client for
  elicitation, sampling or roots; the broker's tools never do). Some of these "pass" against the
  broker only because its ``tool_not_found`` error result happens to fit the check.
- ``server-sse-polling`` (2025-11-25, pending): the broker answers POSTs with JSON, and the
  scenario's checks apply only to SSE responses (it reports INFO only).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from ..support.cli_helpers import BrokerProcess, Brokers, finish

# A Node program per scenario: the full run (scripts/test) runs them, the inner loop (--quick) does not.
# The scenarios share the module's broker, so they run in the module's event loop.
pytestmark = [pytest.mark.heavy, pytest.mark.asyncio(loop_scope="module")]

CONFORMANCE_DIR = Path(__file__).parents[1] / "conformance"
CONFORMANCE_CLI = CONFORMANCE_DIR / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
AUTH_PRELOAD = CONFORMANCE_DIR / "auth-header.mjs"
LOCAL_NODE = CONFORMANCE_DIR / "node_modules" / ".bin" / "node"
NODE_MAJOR = 22
INSTALL_HINT = "run `npm ci` in tests/conformance (scripts/test does it)"

# Per run of the CLI: it waits up to 30 s per scenario itself; this bounds a hung process.
RUN_TIMEOUT = 90.0

LEGACY = "2025-11-25"
MODERN = "2026-07-28"

SCENARIOS: dict[str, tuple[str, ...]] = {
    LEGACY: (
        "server-initialize",
        "server-session-lifecycle",
        "ping",
        "tools-list",
        "tools-call-error",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
    ),
    MODERN: (
        "server-stateless",
        "tools-list",
        "tools-call-error",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
        "http-header-validation",
        "caching",
    ),
}

# Checks of the scenarios above that cannot pass against the broker, and why.
EXCLUDED_CHECKS: dict[str, dict[str, str]] = {
    "server-stateless": {
        "sep-2575-server-rejects-undeclared-capability": "needs the diagnostic tool test_missing_capability",
        "sep-2575-missing-capability-http-400": "needs the diagnostic tool test_missing_capability",
        "sep-2575-server-sends-tools-list-changed-on-subscription": (
            "changes the tool list through the diagnostic tool test_trigger_tool_change"
        ),
        "sep-2575-server-sends-prompts-list-changed-on-subscription": "no prompts (the suite skips it)",
    },
    "caching": {
        "sep-2549-prompts-list-caching-hints": "no prompts",
        "sep-2549-resources-list-caching-hints": "no resources",
        "sep-2549-resources-templates-list-caching-hints": "no resources",
        "sep-2549-resources-read-caching-hints": "no resources (the suite skips it)",
    },
}

PASSING = ("SUCCESS", "INFO")


def node_command() -> list[str]:
    """The node that runs the suite: the pinned one from npm, else a node >= 22 on the PATH.

    Raises:
        pytest.fail.Exception: no usable node, or the suite is not installed.
    """
    if not CONFORMANCE_CLI.is_file():
        pytest.fail(f"the MCP conformance suite is not installed ({CONFORMANCE_CLI} is missing): {INSTALL_HINT}")
    if LOCAL_NODE.exists():
        return [str(LOCAL_NODE)]
    found = shutil.which("node")
    if found is None:
        pytest.fail(f"no node to run the MCP conformance suite: {LOCAL_NODE} is missing and none is on PATH")
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    major = re.match(r"v(\d+)\.", version)
    if major is None or int(major.group(1)) < NODE_MAJOR:
        pytest.fail(
            f"the MCP conformance suite needs Node >= {NODE_MAJOR}; {found} is {version or 'unknown'} and "
            f"{LOCAL_NODE} (npm's node-<os>-<cpu> binary, none exists for macOS on arm64) is missing: {INSTALL_HINT}"
        )
    return [found]


async def run_scenario(url: str, token: str, era: str, scenario: str, out: Path) -> list[dict[str, Any]]:
    """Run one scenario of the suite against ``url``; the checks it wrote."""
    command = [
        *node_command(),
        "--import",
        str(AUTH_PRELOAD),
        str(CONFORMANCE_CLI),
        "server",
        "--url",
        url,
        "--scenario",
        scenario,
        "--spec-version",
        era,
        "--output-dir",
        str(out),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NODE_")}
    env["MCP_CONFORMANCE_AUTHORIZATION"] = f"Bearer {token}"
    env["NO_COLOR"] = "1"
    process = await asyncio.create_subprocess_exec(
        *command,
        cwd=out.parent,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    async with asyncio.timeout(RUN_TIMEOUT):
        printed, _ = await finish(process)
    text = printed.decode(errors="replace")
    # The CLI exits 1 when a check fails; anything else is a crash.
    assert process.returncode in (0, 1), f"the conformance CLI exited {process.returncode}:\n{text}"
    return read_checks(out, text)


def read_checks(out: Path, printed: str) -> list[dict[str, Any]]:
    """The checks of the one run the CLI saved under ``out``."""
    results = sorted(out.glob("*/checks.json"))
    assert len(results) == 1, f"expected one checks.json under {out}, found {results}:\n{printed}"
    checks: list[dict[str, Any]] = json.loads(results[0].read_text())
    return checks


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def broker(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[BrokerProcess]:
    """One broker for every scenario of the module, stopped after the last."""
    node_command()  # fail before starting a broker when the suite cannot run
    async with Brokers(tmp_path_factory.mktemp("conformance") / "discovery") as brokers:
        # Warnings and errors alone: nothing reads its stderr while it serves every scenario.
        yield await brokers.start("--log-level", "warning")


@pytest.mark.parametrize(
    ("era", "scenario"), [(era, scenario) for era, scenarios in SCENARIOS.items() for scenario in scenarios]
)
async def test_conformance_scenario(broker: BrokerProcess, tmp_path: Path, era: str, scenario: str) -> None:
    token = broker.token
    checks = await run_scenario(f"http://127.0.0.1:{broker.port}/mcp", token, era, scenario, tmp_path / "results")

    excluded = EXCLUDED_CHECKS.get(scenario, {})
    failed = [
        f"{check['id']}: {check['status']} {check.get('errorMessage') or check.get('description', '')}"
        for check in checks
        if check["id"] not in excluded and check["status"] not in PASSING
    ]
    assert not failed, f"{scenario} ({era}) failed checks:\n" + "\n".join(failed)
    passed = [check["id"] for check in checks if check["status"] == "SUCCESS" and check["id"] != "wire-schema-valid"]
    assert passed, f"{scenario} ({era}) ran no check that could pass: {checks}"
