"""The asyncio side of the core: one :class:`Hub` per broker process, the path every door takes.

Every door hands it one typed call (:mod:`broker.core.tool_calls`: open or close a tab, change
its owner, list a tab's tools, call a page tool, carry out a browser action, ask a browser for
its windows, history or bookmarks) through one entry point, :meth:`Hub.call`, besides the
sessions' own methods (open, use, end). What runs the core on the event loop (its effects, the
futures callers await, the extension links, the one timer) is its base,
:class:`~broker.daemon.carrier.EffectCarrier`. Every rule about tabs, sessions and calls stays in
:mod:`broker.core`, the reading of a browser's answers too; this module only dispatches and
delivers, and reads an upload's files off the event loop (:mod:`broker.uploads` holds the rules).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, cast, overload

import attrs

from .. import codec, outputs, paths, scripts_library, state_files, uploads
from ..core.arguments import OpenTabRequest, TabChange
from ..core.browser_wide import CREATE_WINDOW, LIST_WINDOWS, RESIZE_WINDOW, TabsCall, WideCall, answer_of, tab_at
from ..core.effects import (
    BrowserCallOutcome,
    BrowserView,
    CallId,
    Effect,
    SessionId,
    SessionView,
    TabView,
    WindowOpened,
    WindowView,
)
from ..core.errors import BrokerError, InternalError, NotSupported, PageToolFailed, Unavailable
from ..core.messages import Arguments, Tool
from ..core.once import Outcome, footprint
from ..core.results import PageResult, bounded_result
from ..core.script_rules import ACTIONS as SCRIPT_ACTIONS
from ..core.security import Client
from ..core.tool_calls import (
    ActionCall,
    ChangeTab,
    CloseTab,
    ListPageTools,
    ListTabs,
    OpenTab,
    PageToolCall,
    ToolCall,
)
from .carrier import EffectCarrier, LinkSender, OnWait

__all__ = ["Hub", "LinkSender", "OnWait"]


class Hub(EffectCarrier):
    """The typed methods every door uses: sessions, tabs, page tool calls, browser actions and requests."""

    # Sessions

    async def open_session(
        self, session_id: SessionId, name: str, *, ends_when_idle: bool = False, credential: Client = None
    ) -> None:
        """Open the session if it is new, else note its use.

        A browser hears of the session (``connect``) with the first frame about it sent there,
        so a tab opened for it is grouped under its client's name (:mod:`broker.core.links`).

        Raises:
            Forbidden: the session was opened with another credential than ``credential``.
        """
        known = self.core.has_session(session_id)
        effects = self.core.open_session(
            session_id, name, self._loop.time(), ends_when_idle=ends_when_idle, credential=credential
        )
        # A use of a known session only moves its end later: nothing to send, no timer to move.
        if effects or not known:
            await self.run(effects)

    async def end_session(self, session_id: SessionId, credential: Client = None) -> bool:
        """End a session; False when there was none by that id.

        Raises:
            Forbidden: a client token (``credential``) names a session it did not open.
        """
        self.core.check_session_end(session_id, credential)
        existed = self.core.has_session(session_id)
        await self.run(self.core.close_session(session_id))
        return existed

    def hold_session(self, key: SessionId, credential: Client) -> None:
        """Count a connection that will carry session ``key`` as one of ``credential``'s sessions
        from when it opens, until :meth:`release_session`.

        Raises:
            TooManySessions: the credential holds as many sessions as it may.
        """
        self.core.hold_session(key, credential)

    def release_session(self, key: SessionId) -> None:
        self.core.release_session(key)

    def session_used(self, session_id: SessionId) -> None:
        """Note a use of a session that ends when idle; one that has ended stays ended."""
        self.core.session_used(session_id, self._loop.time())

    def has_session(self, session_id: SessionId) -> bool:
        return self.core.has_session(session_id)

    def ended_by_person(self, session_id: SessionId) -> bool:
        """The person ended the session in the browser, and its client's next call is to hear so."""
        return self.core.ended_by_person(session_id)

    @contextlib.asynccontextmanager
    async def listening(self, session_id: SessionId) -> AsyncIterator[None]:
        """While a client waits on a stream for the session's news, the session is in use."""
        self.core.listener_opened(session_id)
        try:
            yield
        finally:
            self.core.listener_closed(session_id, self._loop.time())
            self._schedule()

    # What there is

    def tabs(self) -> list[TabView]:
        return self.core.tabs()

    def tab(self, ref: str | int) -> TabView:
        """Raises: ExtensionNotConnected, TabNotFound, AmbiguousTab, InvalidRequest."""
        return self.core.tab(ref)

    def browsers(self) -> list[BrowserView]:
        return self.core.browsers()

    def own_tabs(self, session_id: SessionId) -> tuple[list[TabView], TabView | None]:
        """The session's tabs and its current one. Raises: SessionEnded."""
        return self.core.own_tabs(session_id)

    def current_tab(self, session_id: SessionId) -> TabView:
        """Raises: SessionEnded, InvalidRequest (none), ExtensionNotConnected, TabNotFound."""
        return self.core.current_tab(session_id)

    def select_tab(self, session_id: SessionId, ref: str | int) -> TabView:
        """Raises: SessionEnded, ExtensionNotConnected, TabNotFound, AmbiguousTab, TabOwnedByOther, TabNotClaimed."""
        return self.core.select_tab(session_id, ref)

    def sessions(self) -> list[SessionView]:
        return self.core.sessions()

    def session_tools(self, session_id: SessionId) -> list[tuple[TabView, Tool]]:
        return self.core.session_tools(session_id)

    def shared_tab_ids(self) -> frozenset[int]:
        return self.core.shared_tab_ids()

    @property
    def pending_count(self) -> int:
        return self.core.pending_count

    # What a session asks for: one typed call (broker.core.tool_calls), whichever door it came
    # through. Each raises the BrokerError the core or the browser answered.

    @overload
    async def call(self, session_id: SessionId, call: ListTabs) -> list[TabView]: ...
    @overload
    async def call(self, session_id: SessionId, call: OpenTab | ChangeTab) -> TabView: ...
    @overload
    async def call(self, session_id: SessionId, call: CloseTab) -> Any: ...
    @overload
    async def call(self, session_id: SessionId, call: ListPageTools) -> tuple[TabView, Any]: ...
    @overload
    async def call(
        self,
        session_id: SessionId,
        call: PageToolCall,
        *,
        on_wait: OnWait | None = None,
        answer_within: float | None = None,
        once_key: str | None = None,
    ) -> PageResult: ...
    @overload
    async def call(
        self,
        session_id: SessionId,
        call: ActionCall,
        *,
        on_wait: OnWait | None = None,
        answer_within: float | None = None,
        upload_from: Sequence[str] = (),
    ) -> tuple[TabView, Any]: ...
    @overload
    async def call(
        self, session_id: SessionId, call: WideCall, *, on_wait: OnWait | None = None
    ) -> BrowserCallOutcome: ...
    @overload
    async def call(self, session_id: SessionId, call: TabsCall) -> tuple[list[TabView], TabView | None]: ...

    async def call(
        self,
        session_id: SessionId,
        call: ToolCall,
        *,
        on_wait: OnWait | None = None,
        answer_within: float | None = None,
        once_key: str | None = None,
        upload_from: Sequence[str] = (),
    ) -> Any:
        """Carry out ``call`` for the session.

        ``on_wait`` hears when the call waits for the person's approval; ``answer_within`` is the
        page's time to answer (None: the default); ``once_key`` makes a page tool call at most once
        per session and key (:meth:`call_tool`); ``upload_from`` are the client's own folders an
        upload may take files from (its MCP roots), beside the broker's ``--upload-dir``.

        Raises:
            BrokerError: what the core, the browser, the page or an upload's files answered.
        """
        if isinstance(call, ListTabs):
            return self.core.tabs()
        if isinstance(call, OpenTab):
            return await self.open_tab(session_id, call.request)
        if isinstance(call, CloseTab):
            return await self.close_tab(session_id, call.tab)
        if isinstance(call, ChangeTab):
            return await self.change_tab(session_id, call.change, call.tab)
        if isinstance(call, ListPageTools):
            return await self.tab_tools(session_id, call.tab, call.refresh)
        if isinstance(call, PageToolCall):
            return await self.call_tool(session_id, call.tab, call.tool, call.args, answer_within, once_key, on_wait)
        if isinstance(call, ActionCall):
            return await self.act(session_id, call, answer_within, on_wait, upload_from)
        if isinstance(call, WideCall):
            return await self.browser_call(session_id, call, on_wait)
        return await self._own_tabs_call(session_id, call)

    async def open_tab(self, session_id: SessionId, request: OpenTabRequest) -> TabView:
        view: TabView = await self._request(
            lambda now: self.core.open_tab(
                session_id,
                request.url,
                request.focus,
                now,
                request.browser,
                window_id=request.window_id,
                new_window=request.new_window,
                pinned=request.pinned,
            )
        )
        return view

    async def browser_call(
        self, session_id: SessionId, call: WideCall, on_wait: OnWait | None = None
    ) -> BrowserCallOutcome:
        """A browser-wide call (windows, history, bookmarks); :func:`broker.daemon.views.browser_call_json`
        writes its outcome as REST and MCP send it. ``on_wait`` hears when it waits for the person's
        approval (a deletion always does).

        ``createWindow`` opens its tab as ``open_tab`` does, so the tab is the session's; a list
        of windows gets each window's tabs and whether all are the session's from the core.
        """
        if call.request == CREATE_WINDOW:
            assert call.url is not None
            tab = await self.open_tab(session_id, OpenTabRequest(call.url, True, call.browser, new_window=True))
            return WindowOpened(WindowView(tab.browser, tab.window_id or 0, (tab.id,), True), tab)
        if call.request == RESIZE_WINDOW and call.window is None:
            call = attrs.evolve(call, window=self.core.current_window(session_id))
        asked: list[str] = []

        def start(now: float) -> tuple[CallId, list[Effect]]:
            browser_key, call_id, effects = self.core.browser_request(session_id, call, now)
            asked.append(browser_key)
            return call_id, effects

        answer = await self._request(start, on_wait)
        if call.request == LIST_WINDOWS:
            return self.core.describe_windows(session_id, asked[0], answer)
        return answer_of(call, asked[0], answer)

    async def close_tab(self, session_id: SessionId, ref: str | int) -> Any:
        return await self._request(lambda now: self.core.close_tab(session_id, ref, now))

    async def change_tab(self, session_id: SessionId, change: TabChange, ref: str | int) -> TabView:
        """Claim, release or focus a tab for the session."""
        if change is TabChange.CLAIM:
            view, asked, effects = self.core.ask_claim(session_id, ref, self._loop.time())
            if asked is None:
                await self.run(effects)
            else:
                # A browser that answers claims may refuse one (another broker's session holds the tab).
                await self._request(lambda now: (asked, effects))
                view = self.core.tab(view.ref)
        else:
            act = self.core.release_tab if change is TabChange.RELEASE else self.core.focus_tab
            view, effects = act(session_id, ref)
            await self.run(effects)
        if view.tools_provisional and change is not TabChange.RELEASE:
            # The tab's tools join the session's: learn them from the page before answering. The
            # claim stands whatever the page says; a page that cannot say keeps its empty list.
            with contextlib.suppress(BrokerError):
                view, _ = await self.tab_tools(session_id, view.ref)
        return view

    async def tab_tools(self, session_id: SessionId, ref: str | int, refresh: bool = False) -> tuple[TabView, Any]:
        """A tab's page tools, asked of the page when unknown or when ``refresh``."""
        tools = await self._request(lambda now: self.core.request_tools(session_id, ref, now, refresh))
        return self.core.tab(ref), tools

    async def call_tool(
        self,
        session_id: SessionId,
        ref: str | int,
        tool: str,
        args: Arguments,
        answer_within: float | None = None,
        once_key: str | None = None,
        on_wait: OnWait | None = None,
    ) -> PageResult:
        """Call a page tool; with ``once_key``, at most once per session and key.

        Its result comes bounded as :mod:`broker.core.results` says (cut past
        ``max_result_chars``, binary-looking parts withheld, each with a note).

        A repeat with the same key while the first call runs waits for it; one after it ended
        gets its outcome, as :class:`~broker.core.once.OnceKeys` keeps it. A call with a key
        runs to its end even when its caller gives up, since another may be waiting on it.
        ``on_wait`` hears when the call waits for the person's approval.

        Raises:
            IdempotencyKeyReused: ``once_key`` named another call.
            IdempotencyOutcomeDropped: ``once_key``'s call ran, and its outcome was dropped.
            TooManyCalls: the session holds as many keys as it may.
            PageToolFailed: the page's result cannot be written as JSON.
        """

        def start(now: float) -> tuple[CallId, list[Effect]]:
            return self.core.call_tool(session_id, ref, tool, args, now, answer_within)

        if once_key is None:
            return self._bounded(await self._request(start, on_wait))
        place = (session_id, once_key)
        credential = self.core.session_credential(session_id)
        fingerprint = _fingerprint(ref, tool, args)
        known = self.core.once_keys.begin(session_id, once_key, fingerprint, self._loop.time(), credential)
        if isinstance(known, Outcome):
            return cast(PageResult, known.replay())
        task = self._once.get(place) if known else None
        if task is None:
            # What is kept for a repeat is what the client was sent: the result after the cut.
            task = self._loop.create_task(self._bounded_call(start, on_wait))
            self._once[place] = task
            task.add_done_callback(lambda done: self._once_ended(session_id, once_key, done))
        return await asyncio.shield(task)

    async def _bounded_call(
        self, start: Callable[[float], tuple[CallId, list[Effect]]], on_wait: OnWait | None
    ) -> PageResult:
        return self._bounded(await self._request(start, on_wait))

    def _bounded(self, value: Any) -> PageResult:
        try:
            return bounded_result(value, self.config.max_result_chars, codec.dumps_text)
        except codec.JSONEncodeError as exc:
            raise PageToolFailed(f"the page's result cannot be written as JSON: {exc}") from None

    def _once_ended(self, session_id: SessionId, key: str, task: asyncio.Task[PageResult]) -> None:
        if self._once.get((session_id, key)) is not task:
            return  # its session ended meanwhile, and a call of a new one took the key
        del self._once[(session_id, key)]
        error = Unavailable("the broker is shutting down") if task.cancelled() else task.exception()
        if error is not None and not isinstance(error, BrokerError):
            error = InternalError("internal error in the broker")
        result = None if error else task.result()
        size = footprint(error if result is None else (result.value, result.notes, result.json_text))
        # The core keeps the result, or a copy of the error with no traceback.
        self.core.once_keys.end(session_id, key, self._loop.time(), result, error, size)
        self._schedule()  # to free it when it lapses

    async def act(
        self,
        session_id: SessionId,
        call: ActionCall,
        answer_within: float | None = None,
        on_wait: OnWait | None = None,
        upload_from: Sequence[str] = (),
    ) -> tuple[TabView, Any]:
        """Carry out a built-in browser action in the session's tab (None: its current tab).

        An upload's files are checked and read first, off the event loop, from the broker's
        ``--upload-dir`` and ``upload_from`` (a client token's own folders count only where
        :func:`broker.uploads.upload_places` says); so is the storage state file that
        browser_set_storage_state restores (:mod:`broker.state_files`). ``on_wait`` hears when the
        action waits for the person's approval.

        A ``filename`` is the broker's, not the browser's: the answer is written there, as is a file
        the answer carries (:mod:`broker.outputs`).

        Raises:
            UploadNotAllowed, UploadTooLarge: a file the upload names may not be sent.
            OutputNotAllowed: the answer may not be written where ``filename`` says.
        """
        args = call.args
        # A tool that reads its file (browser_set_storage_state) has nothing to write.
        filename = None if call.tool.reads_file else args.get("filename")
        if filename is not None:
            # The broker writes the file: the browser hears the call without it.
            args = {name: value for name, value in args.items() if name != "filename"}
        output = outputs.output_places(self.config.output_dir, self.core.session_name(session_id), upload_from)
        if filename is not None:
            output.path_for(filename)  # refused before anything runs
        video_file = None
        if call.tool.action == "start_video" and filename is not None:
            # The video is the stop's answer: the start's name is the stop's file, and the browser's name for it.
            video_file, filename = filename, None
            args = {**args, "videoName": PurePosixPath(video_file).name}
        if call.tool.uploads or call.tool.reads_file:
            config = self.config
            client_token = self.core.session_credential(session_id) is not None
            places = uploads.upload_places(config.upload_dirs, upload_from, client_token=client_token)
            # Files are read whole: not on the event loop. A storage state is read as an upload's file.
            args = await asyncio.to_thread(
                state_files.checked_state if call.tool.reads_file else uploads.checked_upload,
                args,
                places,
                config.upload_max_bytes,
                config.upload_protected,
                call.tool.name,
            )
        if call.tool.action in SCRIPT_ACTIONS:
            # The person's scripts: the broker reads the folder, and the browser hears the source.
            if not self.config.allow_scripts:
                raise NotSupported(
                    f"{call.tool.name} is off: the person turned the script library off (serve --no-scripts)"
                )
            args = await asyncio.to_thread(self._scripts.arguments, session_id, call.tool.action, args)
        view = self.core.current_tab(session_id) if call.tab is None else self.core.tab(call.tab)
        action = call.tool.action
        if action == "stop_video":
            filename = self._video_files.pop((session_id, view.ref), filename)
        value = await self._request(
            lambda now: self.core.call_action(session_id, view.ref, action, args, now, answer_within), on_wait
        )
        if action == "start_video":
            self._video_files.pop((session_id, view.ref), None)
            if video_file is not None:
                self._video_files[session_id, view.ref] = video_file
        if filename is not None or outputs.holds_file(value):
            value = await asyncio.to_thread(outputs.saved, value, filename, output)
        return view, value

    async def _own_tabs_call(self, session_id: SessionId, call: TabsCall) -> tuple[list[TabView], TabView | None]:
        """``browser_tabs`` and ``browser_close`` over the session's own tabs; answered with its tabs
        and its current one after the call, as ``browser_tabs`` ``index`` numbers them."""
        tabs, _ = self.core.own_tabs(session_id)
        if call.action == "new":
            await self.open_tab(session_id, OpenTabRequest(call.url, focus=False))
        elif call.action == "close":
            view = self.core.current_tab(session_id) if call.index is None else tab_at(tabs, call.index)
            await self.close_tab(session_id, view.ref)
        elif call.action == "select":
            self.core.select_tab(session_id, tab_at(tabs, call.index or 0).ref)
        return self.core.own_tabs(session_id)

    def browser_actions(self) -> frozenset[str]:
        actions = self.core.browser_actions()
        return actions if self.config.allow_scripts else actions - SCRIPT_ACTIONS

    @functools.cached_property
    def _video_files(self) -> dict[tuple[SessionId, str], str]:
        """The ``filename`` each session's running video is to be saved to, by its tab."""
        return {}

    @functools.cached_property
    def _scripts(self) -> scripts_library.Library:
        """The person's script library, and what each session was shown of it."""
        return scripts_library.Library(Path(self.config.scripts_dir or paths.scripts_dir()))

    def browser_features(self) -> frozenset[str]:
        return self.core.browser_features()

    # Extension links

    # Effects

    # The one timer


def _fingerprint(ref: str | int, tool: str, args: Arguments) -> bytes:
    """What an idempotency key is bound to: the tab as named, the tool and the arguments' meaning
    (the same JSON with other spacing or key order is the same call)."""
    body = codec.canonical(args)
    return hashlib.sha256(b"\0".join((str(ref).encode(), tool.encode(), body))).digest()
