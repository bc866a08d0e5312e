// The frames a broker sends, read once where they arrive (broker_requests.js) into records, so
// that the modules that carry them out take the record and check nothing again: one typedef per
// FromBroker type the extension carries out (broker/core/broker_messages.py gives the broker's
// side of each), and `decodeFrame`, the one place a new field's check or default goes.
//
// A record keeps every field its modules read, under the frame's own name. A field typed
// `unknown` is passed on as sent, as it always was: the browser's API it reaches refuses what is
// not so, and that refusal is the answer (tab_not_found, open_failed, a tabClosed), so checking it
// here would change what a malformed frame is answered with. A request that cannot be carried
// out as sent (a browserAction or browserRequest naming what the extension has no tool or request
// for, or of the wrong shape) is no error at arrival: its record carries `invalid`, the error
// {code, message} it is answered with once its turn comes, after the tab's ownership and the
// person's say (the pause, an approval), which decide first as they always did. The link's
// handshake frames (authProof, pairNonce, pairKey) are the handshake's (handshake.js).

import { FromBroker } from "../base/protocol.js";
import { invalidArguments } from "../base/errors.js";

/**
 * What the decoder asks of the layers above the link, handed in by the wiring
 * (broker_requests.js): the names a browserAction and a browserRequest may carry.
 * @typedef {object} FrameNames
 * @property {(action: unknown) => boolean} isAction Whether a built-in tool of that wire name is
 *   declared (actions/tools.js).
 * @property {(request: unknown) => boolean} isRequest Whether the browser carries out a
 *   browserRequest of that name (tabs/browser_wide.js).
 */

/**
 * A `connect`: the link's own (no sessionId: the broker's versions and the sessions it still
 * holds) or a session's start.
 * @typedef {object} ConnectFrame
 * @property {"connect"} type
 * @property {unknown} sessionId The session that starts; falsy on the link's own connect.
 * @property {unknown} clientName The client's name, else the session id.
 * @property {string | null} credential The credential that opened the session, when a string.
 * @property {unknown[] | null} sessionIds The sessions the broker holds, when a list.
 * @property {string | null} serverVersion The broker's version, when a string.
 * @property {string | null} minExtensionVersion The oldest extension it works with, when a string.
 */

/**
 * A `disconnect`: the session ended.
 * @typedef {object} DisconnectFrame
 * @property {"disconnect"} type
 * @property {unknown} sessionId
 */

/**
 * An `openTab`, answered by tabCreated with its requestId (tabs/tabs.js).
 * @typedef {object} OpenTabFrame
 * @property {"openTab"} type
 * @property {unknown} sessionId
 * @property {unknown} url As sent, to the browser's tabs API.
 * @property {boolean} focus Whether the tab comes to the front: all but an explicit false.
 * @property {unknown} requestId
 * @property {number | null} windowId The window to open it in, when a whole number.
 * @property {boolean} newWindow Whether it opens in a window of its own: only for true.
 * @property {boolean} pinned Whether it opens pinned: only for true.
 */

/**
 * A `closeTab`, `focusTab`, `tabClaimed` or `tabReleased`: a tab of the session's.
 * @typedef {object} TabFrame
 * @property {"closeTab" | "focusTab" | "tabClaimed" | "tabReleased"} type
 * @property {unknown} sessionId
 * @property {unknown} tabId As sent, to the browser's tabs API.
 * @property {unknown} requestId closeTab's: undefined from a broker of the original protocol.
 * @property {unknown} callId tabClaimed's: falsy from a broker that waits for no answer.
 */

/**
 * A `callTool` (page_tools/tool_calls.js).
 * @typedef {object} CallToolFrame
 * @property {"callTool"} type
 * @property {unknown} sessionId
 * @property {unknown} callId
 * @property {unknown} tabId As sent, to the browser's tabs API.
 * @property {unknown} toolName
 * @property {unknown} args As sent, to the page's tool; `{}` when missing.
 */

/**
 * A `discoverTools` (page_tools/tool_calls.js).
 * @typedef {object} DiscoverToolsFrame
 * @property {"discoverTools"} type
 * @property {unknown} sessionId
 * @property {unknown} callId
 * @property {unknown} tabId As sent, to the browser's tabs API.
 */

/**
 * A `browserAction` (actions/run.js). Its fields have the types below unless `invalid` says why not.
 * @typedef {object} BrowserActionFrame
 * @property {"browserAction"} type
 * @property {unknown} sessionId
 * @property {unknown} callId
 * @property {number} tabId
 * @property {string} action The tool's wire name, one actions/tools.js declares.
 * @property {Record<string, unknown>} args `{}` when missing.
 * @property {{code: string, message: string} | null} invalid The error the action is answered
 *   with in its turn, else null: the first of a tabId that is not a whole number, an action no
 *   tool declares, args that are not an object.
 */

/**
 * A `browserRequest` (tabs/browser_wide.js).
 * @typedef {object} BrowserRequestFrame
 * @property {"browserRequest"} type
 * @property {unknown} sessionId
 * @property {unknown} callId
 * @property {string} request One the browser carries out, unless `invalid` says not.
 * @property {Record<string, unknown>} args `{}` when missing or not an object.
 * @property {{code: string, message: string} | null} invalid The error the request is answered
 *   with in its turn, else null: a request of no name the browser carries out.
 */

/**
 * A `cancelCall`: the broker called the call off.
 * @typedef {object} CancelCallFrame
 * @property {"cancelCall"} type
 * @property {unknown} sessionId
 * @property {unknown} callId
 * @property {unknown} reason
 */

/**
 * A `ping` or a `pong`.
 * @typedef {object} KeepaliveFrame
 * @property {"ping" | "pong"} type
 */

/**
 * An `error`: the broker could not use a frame of this browser's.
 * @typedef {object} ErrorFrame
 * @property {"error"} type
 * @property {unknown} code
 * @property {unknown} message
 */

/**
 * @typedef {ConnectFrame | DisconnectFrame | OpenTabFrame | TabFrame | CallToolFrame
 *   | DiscoverToolsFrame | BrowserActionFrame | BrowserRequestFrame | CancelCallFrame
 *   | KeepaliveFrame | ErrorFrame} BrokerFrame
 */

const stringOrNull = (value) => (typeof value === "string" ? value : null);
const isObject = (value) => Boolean(value) && typeof value === "object" && !Array.isArray(value);
const errorOf = (error) => ({ code: error.code, message: error.message });

/** @returns {ConnectFrame} */
function connectFrame(frame) {
  return {
    type: FromBroker.CONNECT,
    sessionId: frame.sessionId,
    clientName: frame.clientName || frame.sessionId,
    credential: stringOrNull(frame.credential),
    sessionIds: Array.isArray(frame.sessionIds) ? frame.sessionIds : null,
    serverVersion: stringOrNull(frame.serverVersion),
    minExtensionVersion: stringOrNull(frame.minExtensionVersion),
  };
}

/** @returns {OpenTabFrame} */
function openTabFrame(frame) {
  return {
    type: FromBroker.OPEN_TAB,
    sessionId: frame.sessionId,
    url: frame.url,
    focus: frame.focus !== false,
    requestId: frame.requestId,
    windowId: Number.isInteger(frame.windowId) ? frame.windowId : null,
    newWindow: frame.newWindow === true,
    pinned: frame.pinned === true,
  };
}

/** @returns {TabFrame} */
function tabFrame(frame) {
  const { type, sessionId, tabId, requestId, callId } = frame;
  return { type, sessionId, tabId, requestId, callId };
}

/** @returns {BrowserActionFrame} */
function browserActionFrame(frame, names) {
  const { sessionId, callId, tabId, action } = frame;
  const args = frame.args ?? {};
  // In the order the action was always refused in, so that a frame of several faults names the same.
  let fault = null;
  if (!Number.isInteger(tabId)) fault = invalidArguments("tabId must be a tab's id");
  else if (!names.isAction(action)) fault = invalidArguments(`unknown browser action ${JSON.stringify(action)}`);
  else if (!isObject(args)) fault = invalidArguments("args must be an object");
  return { type: FromBroker.BROWSER_ACTION, sessionId, callId, tabId, action, args, invalid: fault && errorOf(fault) };
}

/** @returns {BrowserRequestFrame} */
function browserRequestFrame(frame, names) {
  const { sessionId, callId, request } = frame;
  const fault = names.isRequest(request)
    ? null
    : invalidArguments(`unknown browser request ${JSON.stringify(request)}`);
  const args = isObject(frame.args) ? frame.args : {};
  return { type: FromBroker.BROWSER_REQUEST, sessionId, callId, request, args, invalid: fault && errorOf(fault) };
}

/** FromBroker type -> (frame, names) -> its record. */
const DECODERS = Object.freeze({
  [FromBroker.CONNECT]: connectFrame,
  [FromBroker.DISCONNECT]: ({ sessionId }) => ({ type: FromBroker.DISCONNECT, sessionId }),
  [FromBroker.OPEN_TAB]: openTabFrame,
  [FromBroker.CLOSE_TAB]: tabFrame,
  [FromBroker.FOCUS_TAB]: tabFrame,
  [FromBroker.TAB_CLAIMED]: tabFrame,
  [FromBroker.TAB_RELEASED]: tabFrame,
  [FromBroker.CALL_TOOL]: ({ sessionId, callId, tabId, toolName, args }) => ({
    type: FromBroker.CALL_TOOL,
    sessionId,
    callId,
    tabId,
    toolName,
    args: args ?? {},
  }),
  [FromBroker.DISCOVER_TOOLS]: ({ sessionId, callId, tabId }) => ({
    type: FromBroker.DISCOVER_TOOLS,
    sessionId,
    callId,
    tabId,
  }),
  [FromBroker.BROWSER_ACTION]: browserActionFrame,
  [FromBroker.BROWSER_REQUEST]: browserRequestFrame,
  [FromBroker.CANCEL_CALL]: ({ sessionId, callId, reason }) => ({
    type: FromBroker.CANCEL_CALL,
    sessionId,
    callId,
    reason,
  }),
  [FromBroker.PING]: () => ({ type: FromBroker.PING }),
  [FromBroker.PONG]: () => ({ type: FromBroker.PONG }),
  [FromBroker.ERROR]: ({ code, message }) => ({ type: FromBroker.ERROR, code, message }),
});

/**
 * The record of a frame a broker sent (JSON already parsed), or null for one of no type the
 * extension carries out here (nor an object at all), which is only logged.
 * @param {unknown} frame
 * @param {FrameNames} names
 * @returns {BrokerFrame | null}
 */
export function decodeFrame(frame, names) {
  const type = /** @type {any} */ (frame)?.type;
  return typeof type === "string" && Object.hasOwn(DECODERS, type) ? DECODERS[type](frame, names) : null;
}
