"""The world of the tests that drive one part of the core without the Broker: the registries it is
handed (a browser on link 1 with tab 7, session s1), and the parts it is built from.
"""

from __future__ import annotations

from typing import Any

import attrs

from broker.core.browsers import Browser, Browsers, Tab
from broker.core.config import Config
from broker.core.link_calls import Link, LinkCalls, Links
from broker.core.messenger import Messenger
from broker.core.person import PersonInCharge
from broker.core.sessions import Session, Sessions

__all__ = ["Parts", "make_parts"]


@attrs.define
class Parts:
    config: Config
    links: Links
    browsers: Browsers
    sessions: Sessions
    messenger: Messenger
    calls: LinkCalls
    person: PersonInCharge
    link: Link
    browser: Browser
    tab: Tab
    session: Session


def make_parts(**overrides: Any) -> Parts:
    config = Config(server_version="test", call_timeout=10.0, **overrides)
    links, browsers = Links(), Browsers()
    sessions = Sessions(config.session_idle, config.max_sessions, config.client_max_sessions)
    messenger = Messenger(config, browsers, sessions)
    calls = LinkCalls(config, links, browsers, sessions, messenger)
    person = PersonInCharge(config, browsers, sessions, calls, messenger)
    browser = browsers.add(1)
    browser.heard_from = True
    link = links[1] = Link(1, browser.key, last_received=0.0, last_sent=0.0)
    tab = browser.tabs[7] = Tab(7)
    sessions.open("s1", "client one", 0.0, ends_when_idle=False)
    return Parts(config, links, browsers, sessions, messenger, calls, person, link, browser, tab, sessions["s1"])
