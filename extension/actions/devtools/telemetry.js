// What a tab's pages did while the tools were attached: console messages and uncaught errors,
// and network requests, WebSocket connections among them with their frames (opened before the
// debugger attached, a connection is not seen: the Network domain tells of none it missed). Kept
// per tab, the last MAX_ENTRIES of each, each entry marked with the document it came from (the
// tools list the current page's unless asked for all); dropped when the tab is detached or closed.
//
// A console line of a frame's document, not the top one's, is listed under the frame's origin, so
// that a frame of another site never passes for the page the client opened. A frame of the same
// process speaks through the tab's session, told apart by its execution context; a frame of
// another site through its own session, whose Runtime is enabled as it attaches (which replays
// what it logged before). Only what the browser raised comes as an exception: an ErrorEvent the
// page dispatches itself is no console message, and is not listed.
//
// The debugger attaches on a tab's first action, after the page loaded. Console messages from
// before come anyway (Runtime.enable replays what V8 kept); requests from before are taken from
// the page's Performance timeline, which records their address and status but not their method.
// A request still in flight as the debugger attaches (a fetch started at load) was announced to
// no one: it is listed from its response, which the Network domain does report, and the timeline,
// read again for every listing, adds it once it has finished and says what kind it was.

import {
  attach,
  documentOf,
  mainFrameOf,
  onSessionEvent,
  onTabAttached,
  onTabEvent,
  onTabForgotten,
  send,
} from "./debugger.js";
import {
  consoleLevel,
  consoleListing,
  lineFrom,
  pageTimeline,
  requestDetails,
  requestFilter,
  requestListing,
  requestNumbered,
  requestPart,
  unheardRequests,
  keepFrame,
  webSocket,
  webSocketDetails,
} from "../listings.js";
import { onFrameSession } from "./frames.js";
import { textResult } from "../results.js";

const MAX_ENTRIES = 1_000;

/**
 * tab id -> {console: [], requests: [], byRequestId: Map, contexts: Map}; `contexts`: the page's
 * execution contexts by "sessionId/contextId" (the tab's own session's with no id), each
 * {frameId, origin}.
 */
const logs = new Map();

function logOf(tabId) {
  let log = logs.get(tabId);
  if (!log) {
    log = { console: [], requests: [], byRequestId: new Map(), contexts: new Map() };
    logs.set(tabId, log);
  }
  return log;
}

const contextKey = (sessionId, contextId) => `${sessionId ?? ""}/${contextId}`;

function contextEvent(tabId, sessionId, method, params) {
  const { contexts } = logOf(tabId);
  if (method === "Runtime.executionContextCreated") {
    const { id, origin, auxData } = params.context;
    contexts.set(contextKey(sessionId, id), { frameId: auxData?.frameId ?? null, origin });
  } else if (method === "Runtime.executionContextDestroyed") {
    contexts.delete(contextKey(sessionId, params.executionContextId));
  } else if (method === "Runtime.executionContextsCleared") {
    const prefix = contextKey(sessionId, "");
    for (const key of contexts.keys()) if (key.startsWith(prefix)) contexts.delete(key);
  }
}

/**
 * Where a console entry of context `contextId` came from: {frameId, origin} of its frame, decided
 * at listing time against the tab's top frame (not known yet while Runtime.enable replays).
 */
function sourceOf(tabId, sessionId, contextId) {
  const context = logOf(tabId).contexts.get(contextKey(sessionId, contextId));
  // A frame of another site is never the top: where its context is not known, it is still a frame's.
  return { frameId: context?.frameId ?? (sessionId ? sessionId : null), origin: context?.origin ?? "" };
}

/** The origin of the frame an entry came from, or null for the tab's top document. */
function frameOriginOf(tabId, entry) {
  if (!entry.frameId || entry.frameId === mainFrameOf(tabId)) return null;
  return entry.origin;
}

function keep(list, entry, onDrop) {
  list.push(entry);
  if (list.length > MAX_ENTRIES) onDrop?.(list.shift());
}

function describeValue(remote) {
  if (remote.type === "string") return remote.value;
  if (remote.unserializableValue) return remote.unserializableValue;
  if ("value" in remote) return String(remote.value);
  return remote.description ?? remote.type;
}

function onConsole(tabId, params, sessionId = null) {
  const frame = params.stackTrace?.callFrames?.[0];
  const text = (params.args ?? []).map(describeValue).join(" ");
  // The protocol counts lines from 0; a person, and Firefox's listing, from 1.
  const where = frame?.url ? ` @ ${frame.url}:${frame.lineNumber + 1}` : "";
  keep(logOf(tabId).console, {
    document: documentOf(tabId),
    level: consoleLevel(params.type),
    line: `[${params.type.toUpperCase()}] ${text}${where}`,
    ...sourceOf(tabId, sessionId, params.executionContextId),
  });
}

function onException(tabId, { exceptionDetails: details }, sessionId = null) {
  const line = details.exception?.description ?? details.text ?? "Uncaught error";
  keep(logOf(tabId).console, {
    document: documentOf(tabId),
    level: "error",
    line,
    ...sourceOf(tabId, sessionId, details.executionContextId),
  });
}

function recordRequest(log, requestId, entry) {
  log.byRequestId.set(requestId, entry);
  keep(log.requests, entry, (dropped) => {
    for (const [id, kept] of log.byRequestId) if (kept === dropped) log.byRequestId.delete(id);
  });
}

function onRequest(tabId, params) {
  const log = logOf(tabId);
  const earlier = log.byRequestId.get(params.requestId);
  if (earlier && params.redirectResponse) {
    earlier.status = params.redirectResponse.status;
    earlier.statusText = params.redirectResponse.statusText;
    earlier.responseHeaders = params.redirectResponse.headers;
    // The id goes on with the redirect: the body the browser keeps under it is the next request's.
    earlier.requestId = null;
  }
  const entry = {
    document: documentOf(tabId),
    method: params.request.method,
    url: params.request.url,
    type: params.type,
    requestId: params.requestId,
    requestHeaders: params.request.headers,
    postData: params.request.postData,
    hasPostData: Boolean(params.request.hasPostData),
  };
  recordRequest(log, params.requestId, entry);
}

/** The answer to a request sent before the debugger attached: its method is not known. */
function onResponseOfEarlierRequest(tabId, params) {
  const log = logOf(tabId);
  const entry = {
    document: documentOf(tabId),
    url: params.response.url,
    type: params.type,
    requestId: params.requestId,
    ...responseOf(params.response),
  };
  recordRequest(log, params.requestId, entry);
}

/** What an entry keeps of a response. */
function responseOf(response) {
  return {
    status: response.status,
    statusText: response.statusText,
    responseHeaders: response.headers,
    mimeType: response.mimeType,
  };
}

onTabEvent((tabId, method, params) => {
  const entry = () => logs.get(tabId)?.byRequestId.get(params.requestId);
  contextEvent(tabId, null, method, params);
  switch (method) {
    case "Runtime.consoleAPICalled":
      onConsole(tabId, params);
      break;
    case "Runtime.exceptionThrown":
      onException(tabId, params);
      break;
    case "Network.requestWillBeSent":
      onRequest(tabId, params);
      break;
    case "Network.responseReceived":
      if (!entry()) onResponseOfEarlierRequest(tabId, params);
      else Object.assign(entry(), responseOf(params.response));
      break;
    case "Network.loadingFailed":
      if (entry()) entry().failure = params.canceled ? "canceled" : params.errorText;
      break;
    default:
      if (method.startsWith("Network.webSocket")) onWebSocket(tabId, method, params, entry());
  }
});

/**
 * A WebSocket connection of the page, kept as a request of its log (numbered and bounded with
 * them): its handshake, whether it is open, and its frames (listings.js's keepFrame).
 */
function onWebSocket(tabId, method, params, socket) {
  if (method === "Network.webSocketCreated") {
    const entry = { document: documentOf(tabId), method: "GET", url: params.url, type: "WebSocket" };
    recordRequest(logOf(tabId), params.requestId, { ...entry, requestId: params.requestId, websocket: webSocket() });
    return;
  }
  if (!socket?.websocket) return;
  const { websocket } = socket;
  websocket.started ??= params.timestamp;
  const at = Math.round((params.timestamp - websocket.started) * 1000);
  if (method === "Network.webSocketWillSendHandshakeRequest") socket.requestHeaders = params.request.headers;
  else if (method === "Network.webSocketHandshakeResponseReceived") {
    Object.assign(socket, responseOf(params.response));
    websocket.state = params.response.status === 101 ? "open" : "refused";
  } else if (method === "Network.webSocketFrameSent" || method === "Network.webSocketFrameReceived") {
    const { opcode, payloadData } = params.response;
    const direction = method.endsWith("Sent") ? "sent" : "received";
    keepFrame(websocket, {
      direction,
      at,
      opcode,
      ...(opcode === 1 ? { text: payloadData } : { base64: payloadData }),
    });
  } else if (method === "Network.webSocketFrameError") {
    websocket.error = params.errorMessage;
  } else if (method === "Network.webSocketClosed") {
    websocket.state = "closed";
    websocket.closedAt = at;
  }
}

// A frame of another site logs on its own session.
onFrameSession((session) => send(session, "Runtime.enable").catch(() => {}));

onSessionEvent((tabId, sessionId, method, params) => {
  contextEvent(tabId, sessionId, method, params);
  if (method === "Runtime.consoleAPICalled") onConsole(tabId, params, sessionId);
  else if (method === "Runtime.exceptionThrown") onException(tabId, params, sessionId);
});

onTabForgotten((tabId) => logs.delete(tabId));

/**
 * The requests of the page's Performance timeline that the Network domain did not tell of: made
 * before the debugger came, or in flight as it came. `earlier`: put them first, as they all came
 * before what the debugger saw.
 */
async function addFromTimeline(tabId, command, earlier) {
  const document = documentOf(tabId);
  let loaded;
  try {
    const { result } = await command("Runtime.evaluate", { expression: `(${pageTimeline})()`, returnByValue: true });
    loaded = result.value ?? [];
  } catch {
    return; // a page that cannot run scripts (an error page) made no requests worth listing
  }
  if (documentOf(tabId) !== document) return;
  const log = logOf(tabId);
  const current = log.requests.filter((request) => request.document === document);
  const added = unheardRequests(current, loaded, document);
  if (earlier) log.requests.unshift(...added.slice(-MAX_ENTRIES));
  else log.requests.push(...added);
  log.requests.splice(0, Math.max(0, log.requests.length - MAX_ENTRIES));
}

onTabAttached((tabId, command) => addFromTimeline(tabId, command, true));

/** "N errors, M warnings" of the current page, or "" when it logged neither. */
export function consoleSummary(tabId) {
  const current = (logs.get(tabId)?.console ?? []).filter((entry) => entry.document === documentOf(tabId));
  const errors = current.filter((entry) => entry.level === "error").length;
  const warnings = current.filter((entry) => entry.level === "warning").length;
  return errors || warnings ? `${errors} errors, ${warnings} warnings` : "";
}

/** browser_console_messages {level?, all?} */
export function consoleMessages(tabId, args) {
  const all = (logs.get(tabId)?.console ?? []).filter((entry) => args.all || entry.document === documentOf(tabId));
  const listed = all.map((entry) => ({ level: entry.level, line: lineFrom(entry.line, frameOriginOf(tabId, entry)) }));
  return consoleListing(listed, args);
}

/** browser_network_requests {static?, filter?} */
export async function networkRequests(tabId, args) {
  const filter = requestFilter(args);
  await addFromTimeline(tabId, (method, params) => send(tabId, method, params), false);
  const current = (logs.get(tabId)?.requests ?? []).filter((request) => request.document === documentOf(tabId));
  return requestListing(current, args, filter);
}

// What the browser says when it kept no body under a request's id.
const NOT_KEPT = "not kept by the browser: a body over 100 KB, or one from before the tools attached";

async function responseBodyOf(tabId, request) {
  if (!request.requestId) return { unavailable: "not kept: the tools attached after it, or it was redirected" };
  if (request.failure) return { unavailable: `none: the request failed (${request.failure})` };
  try {
    const { body, base64Encoded } = await send(tabId, "Network.getResponseBody", { requestId: request.requestId });
    return base64Encoded ? { base64: body } : { text: body };
  } catch {
    return { unavailable: request.status === undefined ? "none yet: no response has come" : NOT_KEPT };
  }
}

async function requestBodyOf(tabId, request) {
  if (request.postData !== undefined) return { text: request.postData };
  if (!request.hasPostData) return null;
  try {
    return { text: (await send(tabId, "Network.getRequestPostData", { requestId: request.requestId })).postData };
  } catch {
    return { unavailable: NOT_KEPT };
  }
}

const headerOf = (headers, name) =>
  Object.entries(headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1] ?? null;

/** browser_network_request {index, part?}: one request of the current page, by its listed number. */
export async function networkRequest(tabId, args) {
  const part = requestPart(args);
  await attach(tabId);
  await addFromTimeline(tabId, (method, params) => send(tabId, method, params), false);
  const current = (logs.get(tabId)?.requests ?? []).filter((request) => request.document === documentOf(tabId));
  const request = requestNumbered(current, args.index);
  if (request.websocket) {
    const headers = { requestHeaders: request.requestHeaders ?? [], responseHeaders: request.responseHeaders ?? [] };
    return textResult(webSocketDetails(request, headers, part));
  }
  const wants = (name) => part === undefined || part === name;
  const read = {
    requestHeaders: request.requestHeaders ?? [],
    responseHeaders: request.responseHeaders ?? [],
    mimeType: request.mimeType ?? headerOf(request.responseHeaders, "content-type"),
    requestType: headerOf(request.requestHeaders, "content-type"),
    requestBody: wants("request-body") ? await requestBodyOf(tabId, request) : null,
    responseBody: wants("response-body") ? await responseBodyOf(tabId, request) : null,
  };
  if (!request.method) read.note = "Made before the tools attached to the tab: only its address and status are known";
  return textResult(requestDetails(request, read, part));
}
