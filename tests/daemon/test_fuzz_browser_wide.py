"""Fuzzing the browser's own REST routes (``/windows``, ``/history``, ``/bookmarks``), over real
loopback HTTP (see ``fuzzing.py``): any request gets JSON with a code of the README's table, and
none focuses or closes the window that holds the person's tab.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from yarl import URL

from ..conftest import BrokerUnderTest, MakeBroker
from ..support.fakes import FakeTab
from .fuzzing import (
    BODY_LIMIT,
    KEEPER,
    REST_CODES,
    REST_TOKEN_HEADER,
    encode_segment,
    fuzz,
    header_text,
    json_ints,
    json_values,
    parse,
    texts,
    unlimited,
)

# REST: the browser's own routes (README, "Windows, history and bookmarks")

PERSONS_WINDOW = 1
window_refs = st.sampled_from([PERSONS_WINDOW, 2, 100, "b1:1", "b1:2", "b2:1", "0", "-1"]) | texts.map(str) | json_ints


@st.composite
def browser_wide_requests(draw: st.DrawFn) -> tuple[str, str, dict[str, str], Any, dict[str, str]]:
    """A request of the browser's routes, its method, path, query, body or parts drawn at random."""
    window = encode_segment(str(draw(window_refs)))
    method, path = draw(
        st.sampled_from(
            [
                ("GET", "/windows"),
                ("POST", "/windows"),
                ("POST", f"/windows/{window}/focus"),
                ("DELETE", f"/windows/{window}"),
                ("GET", "/history"),
                ("GET", "/bookmarks"),
                ("POST", "/bookmarks"),
                (draw(st.sampled_from(["PUT", "PATCH", "DELETE"])), "/bookmarks"),
                ("DELETE", "/history"),
                ("GET", "/bookmarks/tree"),
                ("DELETE", f"/bookmarks/{encode_segment(str(draw(window_refs)))}"),
            ]
        )
    )
    names = st.sampled_from(["q", "max", "since", "until", "url", "folder", "recursive", "browser"]) | header_text(8)
    query = draw(st.dictionaries(names, header_text(20), max_size=3))
    body = draw(st.none() | json_values | st.fixed_dictionaries({"url": texts, "title": texts, "browser": texts}))
    session = draw(st.sampled_from([None, KEEPER, "fuzz-other"]))
    headers = {"Authorization": REST_TOKEN_HEADER, **({"X-Session-Id": session} if session else {})}
    return method, path, query, body, headers


@fuzz(200)
@given(request=browser_wide_requests())
async def test_any_request_of_the_browser_routes_is_json_and_leaves_the_persons_window_alone(
    wide_fuzz: BrokerUnderTest, request: tuple[str, str, dict[str, str], Any, dict[str, str]]
) -> None:
    broker = wide_fuzz
    method, path, query, body, headers = request
    url = broker.server.make_url(URL(path, encoded=True)).with_query(query)
    async with broker.client.session.request(method, url, json=body, headers=headers) as response:
        status, content_type, raw = response.status, response.content_type, await response.read()

    assert status != 500 and content_type == "application/json", (status, raw[:300])
    answer = parse(raw)
    event(f"{method} {status if status == 200 else answer['error']['code']}")
    if status != 200:
        code = answer["error"]["code"]
        assert REST_CODES.get(code) == status, (status, answer)
        assert type(answer["error"]["message"]) is str and answer["error"]["message"]
    fake = broker.fakes[0]
    # The person's window holds the person's tab: nobody focuses or closes it, whatever they send.
    asked = [m["args"].get("windowId") for m in fake.received("browserRequest") if m["request"].endswith("Window")]
    assert PERSONS_WINDOW not in asked, asked
    assert 7 in fake.tabs
    status, listed = await broker.get("/windows")
    assert status == 200 and PERSONS_WINDOW in [w["id"] for w in listed["windows"]]


@pytest.fixture
async def wide_fuzz(make_broker: MakeBroker) -> BrokerUnderTest:
    """A browser sharing its history and bookmarks: the person's tab 7 in window 1, and the
    keeper's tab 8 in window 2."""
    broker = await make_broker(**unlimited(frame_limit=BODY_LIMIT))
    fake = await broker.extension(
        FakeTab(7, "https://person.example/", "Person", window_id=PERSONS_WINDOW),
        FakeTab(8, "https://keeper.example/", "Keeper", window_id=2),
        features=["windows", "history", "bookmarks", "deleteHistory", "bookmarkTree", "deleteBookmark"],
    )
    fake.shared = True
    fake.approval = "deny"
    fake.bookmark_nodes = [{"id": "1", "parentId": "0", "title": "Bar"}, {"id": "2", "parentId": "1", "title": "In"}]
    status, _ = await broker.post("/tabs/8/claim", headers={"X-Session-Id": KEEPER})
    assert status == 200
    return broker
