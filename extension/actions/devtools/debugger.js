// The DevTools protocol link to each tab the built-in tools act on (chrome.debugger): attached on
// the tab's first action, detached when its client lets the tab go, and re-attached on the next
// action after the person cancels Chromium's "started debugging this browser" bar. Owns, per tab:
// which AI session used it last, the queue that runs its actions one at a time, which document it
// shows (a counter that moves on every cross-document navigation, so refs and logs of an earlier
// page are told apart), and an isolated world for the tools' own page-side helpers.
//
// What the tools do with the link lives in the modules beside this one; they hear the tab's events
// through onTabEvent and drop their per-tab state through onTabForgotten.

import { ActionError, Code, withTimeout } from "../../base/errors.js";
import { sessionOf } from "../../base/owner_key.js";

const PROTOCOL_VERSION = "1.3";
const COMMAND_TIMEOUT_MS = 15_000;
export const WORLD_NAME = "browser-mcp";
/** The handles the tools make in a page, released together after each action. */
export const OBJECT_GROUP = "browser-mcp";
// Enough for a page's requests to be listed; their bodies are never read.
const NETWORK_BUFFERS = { maxTotalBufferSize: 1_000_000, maxResourceBufferSize: 100_000 };

/** tab id -> {attaching, document, owner, queue, world, mainFrame, attachedAt, waiters} */
const tabs = new Map();
const eventHandlers = [];
const attachHandlers = [];
const forgetHandlers = [];
const sessionHandlers = [];

/** `handler(tabId, method, params)` for every protocol event of an attached tab. */
export function onTabEvent(handler) {
  eventHandlers.push(handler);
}

/**
 * `handler(tabId, command)` once a tab is attached (again), its domains enabled; the attaching
 * waits for it. `command(method, params)` sends to the tab (`send` would wait for the attaching).
 */
export function onTabAttached(handler) {
  attachHandlers.push(handler);
}

/**
 * `handler(tabId, closed)` when a tab is detached (closed false) or closed: what was kept about
 * its pages is stale.
 */
export function onTabForgotten(handler) {
  forgetHandlers.push(handler);
}

function stateOf(tabId) {
  let state = tabs.get(tabId);
  if (!state) {
    state = {
      attaching: null,
      document: 0,
      owner: null,
      queue: Promise.resolve(),
      world: null,
      mainFrame: null,
      attachedAt: 0,
      waiters: new Set(),
    };
    tabs.set(tabId, state);
  }
  return state;
}

/** Run `task()` after every earlier task of the same tab: two actions never interleave their input. */
export function serialized(tabId, task) {
  const state = stateOf(tabId);
  const run = state.queue.then(task, task);
  state.queue = run.catch(() => {});
  return run;
}

/** The document the tab shows, as a number that changes whenever a new document commits. */
export function documentOf(tabId) {
  return tabs.get(tabId)?.document ?? 0;
}

/** Remember which AI session ("port/sessionId") acts on the tab, so its end can detach it. */
export function ownTab(tabId, owner) {
  stateOf(tabId).owner = owner;
}

function chromeCall(call) {
  return new Promise((resolve, reject) => {
    call((result) => {
      const error = chrome.runtime.lastError;
      if (error) reject(new Error(error.message));
      else resolve(result);
    });
  });
}

async function attachNow(tabId) {
  const target = { tabId };
  try {
    await chromeCall((done) => chrome.debugger.attach(target, PROTOCOL_VERSION, done));
  } catch (error) {
    // A worker that restarted while attached finds its own earlier session still there.
    if (!/already attached/i.test(error.message)) {
      throw new ActionError(Code.ACTION_FAILED, `cannot attach the debugger to tab ${tabId}: ${error.message}`);
    }
    await chromeCall((done) => chrome.debugger.detach(target, done)).catch(() => {});
    await chromeCall((done) => chrome.debugger.attach(target, PROTOCOL_VERSION, done)).catch((again) => {
      throw new ActionError(Code.ACTION_FAILED, `another debugger holds tab ${tabId}: ${again.message}`);
    });
  }
  await Promise.all([
    rawSend(tabId, "Page.enable"),
    rawSend(tabId, "Runtime.enable"),
    rawSend(tabId, "Network.enable", NETWORK_BUFFERS),
  ]);
  const { frameTree } = await rawSend(tabId, "Page.getFrameTree");
  stateOf(tabId).mainFrame = frameTree.frame.id;
  const command = (method, params) => withTimeout(rawSend(tabId, method, params), COMMAND_TIMEOUT_MS, method);
  await Promise.all(attachHandlers.map((handler) => handler(tabId, command)));
  stateOf(tabId).attachedAt = Date.now();
}

/** Attach to the tab unless attached already; concurrent callers share one attempt. */
export function attach(tabId) {
  const state = stateOf(tabId);
  if (!state.attaching) {
    state.attaching = attachNow(tabId).catch((error) => {
      if (tabs.get(tabId) === state) state.attaching = null;
      throw error;
    });
  }
  return state.attaching;
}

function rawSend(target, method, params = {}) {
  const debuggee = typeof target === "object" ? target : { tabId: target };
  return chromeCall((done) => chrome.debugger.sendCommand(debuggee, method, params, done));
}

/**
 * Send one protocol command to the attached tab, or to `{tabId, sessionId}`: the session of an
 * out-of-process frame of the tab (frames.js). A command that does not answer within `timeoutMs`
 * fails with `timeout`; the browser's own refusal keeps its message.
 */
export async function send(target, method, params = {}, timeoutMs = COMMAND_TIMEOUT_MS, again = true) {
  const tabId = typeof target === "object" ? target.tabId : target;
  await attach(tabId);
  try {
    return await withTimeout(rawSend(target, method, params), timeoutMs, method);
  } catch (error) {
    if (error instanceof ActionError) throw error;
    if (typeof target !== "object" && /not attached|detached/i.test(error.message)) {
      // Detached without a word to onDetach: what was kept is stale, and attaching again is all
      // it takes to carry on (refs then fail as stale if the page changed meanwhile).
      if (tabs.get(tabId)?.attaching) forget(tabId, false);
      if (again) return send(tabId, method, params, timeoutMs, false);
      throw new ActionError(Code.ACTION_FAILED, `the debugger was detached from tab ${tabId} during ${method}`);
    }
    throw new Error(`${method}: ${error.message}`, { cause: error });
  }
}

/**
 * Resolve with the params of the tab's next event that `match(method, params)` accepts, or with
 * null after `timeoutMs`. Start waiting before doing what causes the event.
 */
export function waitForEvent(tabId, match, timeoutMs) {
  const state = stateOf(tabId);
  let waiter;
  const promise = new Promise((resolve) => {
    const timer = setTimeout(() => finish(null), timeoutMs);
    const finish = (value) => {
      clearTimeout(timer);
      state.waiters.delete(waiter);
      resolve(value);
    };
    waiter = { match, finish };
    state.waiters.add(waiter);
  });
  promise.cancel = () => waiter.finish(null);
  return promise;
}

/** When the debugger last attached to the tab (ms since the epoch), 0 when it is not attached. */
export function attachedAt(tabId) {
  return tabs.get(tabId)?.attaching ? tabs.get(tabId).attachedAt : 0;
}

/** The id of the tab's top frame (the page itself, not one of its iframes). */
export function mainFrameOf(tabId) {
  return tabs.get(tabId)?.mainFrame ?? null;
}

/** An isolated world in the tab's current document, where the tools' helpers run unseen by the page. */
export async function utilityWorld(tabId) {
  const state = stateOf(tabId);
  if (state.world?.document === state.document) return state.world.contextId;
  const document = state.document;
  await attach(tabId);
  const { executionContextId } = await send(tabId, "Page.createIsolatedWorld", {
    frameId: state.mainFrame,
    worldName: WORLD_NAME,
  });
  state.world = { document, contextId: executionContextId };
  return executionContextId;
}

/** `handler(tabId, sessionId, method, params)` for every event of an out-of-process frame's session. */
export function onSessionEvent(handler) {
  sessionHandlers.push(handler);
}

/** chrome.debugger.onEvent: a new document moves the tab's counter before anyone else hears of it. */
export function debuggerEvent(source, method, params) {
  const state = tabs.get(source.tabId);
  if (!state) return;
  if (source.sessionId) {
    // An out-of-process frame's: its documents are not the tab's.
    for (const handler of sessionHandlers) handler(source.tabId, source.sessionId, method, params);
    return;
  }
  if (method === "Page.frameNavigated" && !params.frame.parentId) {
    state.document += 1;
    state.world = null;
    state.mainFrame = params.frame.id;
  }
  for (const handler of eventHandlers) {
    try {
      handler(source.tabId, method, params);
    } catch (error) {
      console.warn(`browser-mcp: handling ${method} failed`, error);
    }
  }
  for (const waiter of [...state.waiters]) {
    if (waiter.match(method, params)) waiter.finish(params);
  }
}

function forget(tabId, closed) {
  const state = tabs.get(tabId);
  if (!state) return;
  if (closed) tabs.delete(tabId);
  else Object.assign(state, { attaching: null, world: null });
  for (const waiter of [...state.waiters]) waiter.finish(null);
  for (const handler of forgetHandlers) handler(tabId, closed);
}

/**
 * chrome.debugger.onDetach: the tab closed, or the person cancelled the debugging bar. What was
 * kept about the tab's pages goes (refs.js then refuses earlier refs as stale, as it cannot know
 * what the tab showed meanwhile); the next action attaches again.
 */
export function debuggerDetached(source) {
  if (tabs.get(source.tabId)?.attaching) forget(source.tabId, false);
}

/** chrome.tabs.onRemoved. */
export function tabGone(tabId) {
  forget(tabId, true);
}

/** Detach from the tab (its client released it), after whatever action is running on it. */
export function releaseTab(tabId) {
  const state = tabs.get(tabId);
  if (!state) return Promise.resolve();
  return serialized(tabId, async () => {
    if (tabs.get(tabId) !== state || !state.attaching) return;
    state.owner = null;
    forget(tabId, false);
    // onDetach follows, and finds nothing left to forget.
    await chromeCall((done) => chrome.debugger.detach({ tabId }, done)).catch(() => {});
  });
}

/** Detach from the tabs last used by the sessions of the broker on `port` that `ended(sessionId)` picks. */
export async function releaseSessions(port, ended) {
  const released = [];
  for (const [tabId, state] of tabs) {
    const sessionId = sessionOf(state.owner, port);
    if (sessionId !== null && ended(sessionId)) released.push(releaseTab(tabId));
  }
  await Promise.all(released);
}
