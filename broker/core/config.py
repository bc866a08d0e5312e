"""The broker's limits and timings, with their defaults: the one place each default is written.

``browser-mcp serve``'s options, :class:`broker.daemon.runtime.Settings` and the hub all take theirs
from here.
"""

from __future__ import annotations

import attrs

__all__ = ["Config", "DEFAULTS"]


@attrs.frozen
class Config:
    server_version: str
    # Older extensions are named in status, the log and their popup (broker.version); "" = any.
    min_extension_version: str = ""
    # Seconds a call waits for the page when the caller names no timeout.
    call_timeout: float = 30.0
    # A link quiet this long gets a ping; one silent this long is closed.
    ping_interval: float = 20.0
    silence_timeout: float = 45.0
    # A browser whose link was lost keeps its tabs' owners this long, for its reconnect.
    browser_grace: float = 300.0
    # A session with no connection to end it (REST, stateless MCP) ends after this long unused.
    session_idle: float = 600.0
    max_pending_per_session: int = 256
    # Calls a second each session may make, in bursts of up to rate_burst; 0 turns it off.
    rate_limit: float = 20.0
    rate_burst: int = 40
    # Calls a second each client token may make across all its sessions, in bursts of up to
    # client_rate_burst; 0 turns it off. The broker's own token has no such limit of its own.
    client_rate_limit: float = 20.0
    client_rate_burst: int = 40
    # A tool that times out this many times in a row on a tab is not called for breaker_cooldown s.
    breaker_failures: int = 3
    breaker_cooldown: float = 30.0
    # Live sessions at once; a new one past this is refused, and the browser hears nothing of it.
    # The broker's own token and the client tokens together have this many each, so clients
    # cannot take the owner's room; each client token has at most client_max_sessions of them.
    max_sessions: int = 1000
    client_max_sessions: int = 100
    # Idempotency-Keys one session holds (calls running or ended within idempotency_keep_for s).
    idempotency_keys_per_session: int = 1000
    idempotency_keep_for: float = 60.0
    # Bytes of those calls' outcomes kept for one credential (the owner's token, or one client
    # token across its sessions); past it the oldest outcomes are dropped.
    idempotency_bytes_per_credential: int = 4 * 1024 * 1024
    # Tabs one browser may report, and all browsers together (those within their grace time
    # included); more are refused with an error frame.
    max_tabs_per_browser: int = 10_000
    max_tabs: int = 20_000
    # Extension links open at once; one more is refused before its WebSocket opens while this many
    # have proven the link key, and closes the oldest that has not otherwise.
    max_links: int = 16
    # Extension links that have not proven the link key yet (or, when proof is not required,
    # settled as an extension that skips the handshake): at most this many (a new one past it
    # closes the oldest), each for at most link_proof_timeout s (a pairing exchange restarts it).
    max_unproven_links: int = 32
    link_proof_timeout: float = 10.0
    # Seconds a connection may take to bring a whole request's headers (and may idle between requests).
    header_timeout: float = 10.0
    # Seconds a request's whole body may take to come once its headers have: past them it is
    # answered 408 and its connection closed (a deadline, not a rate: broker.core.limits says why).
    body_timeout: float = 10.0
    # Seconds a connection answered before its request's body has all come reads on (dropping what
    # comes) before it closes: closed at once, its peer, still sending, may get a reset instead of
    # the answer.
    linger_time: float = 1.0
    # Open connections, at most, of each kind; each is lowered to fit the broker's limit of open
    # files (broker.core.limits.connection_caps), which the broker raises at start toward what these
    # need. Those that have not shown a token: a new one past this closes the oldest of them.
    max_unproven_connections: int = 256
    # Those of the broker's own token (the command line, the stdio relays), of all client tokens
    # together, and of each client token: one past these is answered 429 and closed.
    max_owner_connections: int = 2048
    max_client_token_connections: int = 1024
    max_connections_per_client: int = 256
    # Open files the broker keeps for its own use (its log, listening socket, event loop, a file an
    # upload reads) beside its connections.
    spare_descriptors: int = 32
    # The largest frame or request body accepted, in bytes.
    frame_limit: int = 32 * 1024 * 1024
    # Whether browser_evaluate (any JavaScript in a client's tab) is offered at all.
    allow_evaluate: bool = True
    # Whether the person's script library (browser_scripts, browser_run_script) is offered, and its
    # folder (None: browser-mcp scripts path's).
    allow_scripts: bool = True
    scripts_dir: str | None = None
    # Folders (absolute) every caller may upload files from, and the most one upload sends (each
    # file and all together).
    upload_dirs: tuple[str, ...] = ()
    upload_max_bytes: int = 100 * 1024 * 1024
    # The broker's own files and folders beside those every broker has (its token, the default
    # discovery folders): never uploaded unless an upload_dirs folder names them.
    upload_protected: tuple[str, ...] = ()
    # Where the files built-in tools write go, a folder per client (None: in the broker's data
    # folder; broker.outputs has the whole rule).
    output_dir: str | None = None
    # Characters of a page tool's result a client gets; past them it is cut, with a note
    # (broker.core.results has the whole rule).
    max_result_chars: int = 100_000


DEFAULTS = Config(server_version="")
