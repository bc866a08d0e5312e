"""What the fuzz tests of the broker's three doors share (``test_fuzz_*.py``, over real loopback sockets).

Hypothesis draws the inputs; each test builds one broker (a fixture) and throws all its examples
at it, checking after each that the broker answered exactly what the README says and still
serves the next caller. The oracles are written from the README (the link protocol, the routes,
the error table), not from the broker's code. Where the README leaves an order open (which of two
faults of one request is reported), any of their codes is accepted.

This module holds the settings of a fuzzed broker, the JSON values the strategies draw (deep
nesting included), the README's REST error table, and the constants of the REST and MCP requests.

The bugs the fuzz found are pinned as explicit cases in ``test_fuzz_known_bugs.py``; the inputs
that found them stay out of the random draws (``hits_known_bug_*``) where the oracles do not model
the broker's answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import attrs
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from broker.core.config import Config

from ..support.fakes import FakeTab

Json = dict[str, Any]


# The share of its examples a fuzz test throws under Hypothesis's "quick" profile, which
# scripts/test --quick loads (registered in tests/conftest.py): the inner loop still fuzzes every
# door, and the full run throws every example.
QUICK_SHARE = 10


def fuzz(examples: int) -> settings:
    """Settings for a test that throws ``examples`` inputs at one broker (a tenth of them under the
    "quick" profile, see QUICK_SHARE).

    The broker is a function-scoped fixture on purpose: it must outlive the examples, which is
    what the health check warns of. Sized so that each test runs in well under a minute.
    """
    quick = settings.get_current_profile_name() == "quick"
    return settings(
        max_examples=examples // QUICK_SHARE if quick else examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


def unlimited(**overrides: Any) -> dict[str, Any]:
    """Settings for a fuzzed broker: no per-session rate limit and no circuit breaker, where the
    broker has them. The fuzz sends hundreds of calls a second through a few sessions, and calls
    with timeouts under a second may time out: neither is what these tests are about."""
    fields = attrs.fields_dict(Config)
    if "rate_limit" in fields:
        overrides["rate_limit"] = 0
    if "breaker_failures" in fields:
        overrides["breaker_failures"] = 10**9
    return overrides


def echo_tab(tab_id: int) -> FakeTab:
    """A tab whose ``echo`` tool answers with its tab id and the arguments it got."""
    return FakeTab(tab_id, f"https://tab{tab_id}.example/", f"Tab {tab_id}", {"echo": echo(tab_id)})


def echo(tab_id: int) -> Callable[[Json], Any]:
    return lambda args: {"tab": tab_id, "args": args}


# JSON values. Integers stay within what a JSON reader turns into a finite number; deep nesting
# is drawn separately (Deep), since recursion would not reach it.

SAFE = 2**53 - 1
# A tab id no strategy draws: a tabFocused naming it is the barrier that shows a link's frames
# were all handled (its unknown_tab error comes after theirs).
BARRIER = 4_242_424_242_424

json_ints = st.integers(min_value=-(10**30), max_value=10**30).filter(lambda n: n != BARRIER)
huge_numbers = st.sampled_from([SAFE + 1, -(SAFE + 1), 2**63, 2**64, 2**64 + 1, 10**20, -(10**30), 7.0, 1e300, -0.0])
texts = st.text(max_size=12)
empties = st.sampled_from(["", {}, [], 0, None, False])
scalars = st.none() | st.booleans() | json_ints | st.floats(allow_nan=False, allow_infinity=False) | texts
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4), max_leaves=16
)


class Deep:
    """``depth`` nested lists or objects around a number, written out without recursion."""

    def __init__(self, depth: int, objects: bool) -> None:
        self.depth = depth
        self.objects = objects

    def text(self) -> str:
        if self.objects:
            return '{"d":' * self.depth + "0" + "}" * self.depth
        return "[" * self.depth + "0" + "]" * self.depth

    def __repr__(self) -> str:
        return f"Deep({self.depth}, objects={self.objects})"


# Frames stay under the JSON reader's depth limit (1024): the frame's object is one level more.
deep_values = st.builds(Deep, st.integers(min_value=1, max_value=1000), st.booleans())


def dump(value: Any) -> str:
    """JSON text of ``value``, with :class:`Deep` parts written out."""
    if isinstance(value, Deep):
        return value.text()
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k))}:{dump(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(dump(v) for v in value) + "]"
    return json.dumps(value, allow_nan=False)


def parse(data: bytes) -> Any:
    """What a frame of raw bytes says as JSON. Raises: ValueError, when it says nothing."""

    def refuse(constant: str) -> Any:
        raise ValueError(constant)

    return json.loads(data.decode("utf-8"), parse_constant=refuse)


# REST


def readme_error_table() -> dict[str, int]:
    """The REST reference's table of errors (docs/rest.md, "Errors are ..."): each code and its status."""
    readme = (Path(__file__).parents[2] / "docs" / "rest.md").read_text()
    start = readme.index('Errors are `{"error": {"code", "message"}}`')
    table = readme[start : readme.index("\n## ", start)]
    codes = {
        code: int(status)
        for status, cell in re.findall(r"^\| (\d{3}) \| ([^|]+) \|", table, re.MULTILINE)
        for code in re.findall(r"`([a-z_]+)`", cell)
    }
    assert {"invalid_request", "unauthorized", "forbidden", "not_found", "tab_owned", "timeout"} <= set(codes)
    return codes


README_CODES = readme_error_table()
# A route called with a method it does not take. Not in the README's table (the table should say so).
METHOD_NOT_ALLOWED = ("method_not_allowed", 405)
REST_CODES = {**README_CODES, METHOD_NOT_ALLOWED[0]: METHOD_NOT_ALLOWED[1]}

REST_TOKEN_HEADER = "Bearer test-token-0123456789"
KEEPER = "keeper"
BODY_LIMIT = 64 * 1024
PRINTABLE = st.characters(min_codepoint=0x20, max_codepoint=0x7E)


def header_text(max_size: int = 40) -> st.SearchStrategy[str]:
    # HTTP strips a value's outer spaces; values are drawn without them.
    return st.text(PRINTABLE, max_size=max_size).map(lambda value: value.strip(" "))


def hits_known_bug_ref(ref: str) -> bool:
    """A tab id of digits Python's int() cannot read (², ⑧) or of more than 4300 digits (they
    answered 500 once; test_fuzz_known_bugs.py keeps them fixed; the oracle does not model them)."""
    number = ref.rpartition(":")[2].removeprefix("-")
    return number.isdigit() and (not number.isdecimal() or len(number) > 4300)


def no_odd_digits(text: str) -> bool:
    return not hits_known_bug_ref(text)


def encode_segment(segment: str) -> str:
    # Dots too: the client would resolve a segment "." or ".." away before sending.
    return quote(segment, safe="").replace(".", "%2E")


# MCP

MODERN_VERSION = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "fuzzer", "version": "1"},
}
MCP_BASE_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "Authorization": REST_TOKEN_HEADER,
}
