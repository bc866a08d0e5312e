// The WebExtension driver's console and network log. The console is what the page hooks
// (page_hooks.js) heard in each frame, read from the frames when listed; a line of a frame's
// document, not the top one's, begins with the frame's origin, and an error event the page
// dispatched itself is listed as the page's (telemetry.js's lineFrom, as in the DevTools driver).
//
// The network log: each tab's requests as chrome.webRequest reports them
// ended (completed or failed), marked with the document they came in, listed by telemetry.js's
// requestListing as the DevTools driver's are; only where the browser grants the webRequest
// permission. webRequest is heard from the tab's first action on, which for a tab a client just
// opened comes after its page's load more often than not (the tab is focused and grouped before
// the client hears of it): what the page loaded before is taken from its Performance timeline, as
// in the DevTools driver, read for every listing. A WebSocket connection is listed from its
// handshake, which is all webRequest sees of it: its frames are not_supported.

import { originOf } from "../../base/origin.js";
import { ActionError, Code, withTimeout } from "../../base/errors.js";
import { pageConsoleRecords } from "./page_hooks.js";
import {
  consoleLevel,
  consoleListing,
  lineFrom,
  pageTimeline,
  numberRequests,
  requestDetails,
  requestFilter,
  requestListing,
  requestNumbered,
  requestPart,
  unheardRequests,
  webSocketDetails,
} from "../listings.js";
import { holderOf, routeFor } from "../network_routes.js";
import { textResult } from "../results.js";
import { ANSWER_HOST } from "./dialogs.js";
import { documentOf } from "./navigation.js";
import { runIn } from "./scripts.js";

const MAX_ENTRIES = 1_000;
const SCRIPT_TIMEOUT_MS = 5_000;
const FRAMES_NOTE = "its frames: not given by Firefox";

/** Whether the page itself asked for `url`: not the hooks, nor one of the add-on's own files. */
function pagesOwn(url) {
  try {
    const { protocol, hostname } = new URL(url);
    // The page hooks' own requests, which Firefox counts as the page's, are the driver's doing.
    return protocol !== "moz-extension:" && hostname !== ANSWER_HOST;
  } catch {
    return true;
  }
}

/** tab id -> [{url, method, type, status, statusText, failure, document, number?, ...details}] */
const logs = new Map();
/** request id -> what was heard of a request of a kept tab before it ended: its headers and body */
const pending = new Map();
const MAX_PENDING = 1_000;
/** tab id -> {holder, listener}: the tab's response bodies copied as they pass (filterResponseData) */
const copiers = new Map();
// A body is kept up to MAX_BODY bytes, and a tab's bodies up to MAX_BODIES bytes (the oldest go
// first), as Chromium's DevTools buffers keep them.
const MAX_BODY = 100_000;
const MAX_BODIES = 1_000_000;
// Bodies not copied: the page's media, described by their headers instead.
const UNCOPIED = new Set(["image", "imageset", "media", "font", "object", "websocket", "beacon", "ping"]);

const webRequest = () => globalThis.browser?.webRequest ?? chrome.webRequest;

/** The copy of one response's body: its chunks up to MAX_BODY bytes. */
function copyBody(requestId) {
  const copy = { chunks: [], size: 0, cut: false };
  const filter = webRequest().filterResponseData(requestId);
  filter.ondata = ({ data }) => {
    filter.write(data);
    if (copy.size + data.byteLength > MAX_BODY) {
      copy.chunks.push(data.slice(0, MAX_BODY - copy.size));
      copy.size = MAX_BODY;
      copy.cut = true;
      filter.disconnect(); // the rest flows to the page without us
      return;
    }
    copy.chunks.push(data);
    copy.size += data.byteLength;
  };
  filter.onstop = () => filter.close();
  filter.onerror = () => {
    copy.failed = true;
  };
  return copy;
}

function pendingOf(requestId) {
  let heard = pending.get(requestId);
  if (!heard) {
    heard = {};
    pending.set(requestId, heard);
    for (const id of pending.keys()) {
      if (pending.size <= MAX_PENDING) break;
      pending.delete(id);
    }
  }
  return heard;
}

/** Copy the tab's response bodies while its holder is the one that had it watched. */
function copyBodiesOf(tabId) {
  let holder = holderOf(tabId);
  const had = copiers.get(tabId);
  if (had?.holder === holder || !webRequest()?.filterResponseData) return;
  if (had) webRequest().onBeforeRequest.removeListener(had.listener);
  const listener = (details) => {
    // A tab the tools acted in before its session's hold on it was told here is that session's.
    if (holder === null) holder = holderOf(tabId);
    if (holderOf(tabId) !== holder) {
      // Another's now, or the person's: their pages' bodies are none of the tools' business.
      webRequest().onBeforeRequest.removeListener(listener);
      if (copiers.get(tabId)?.listener === listener) copiers.delete(tabId);
      return {};
    }
    if (!logs.has(tabId) || !pagesOwn(details.url) || UNCOPIED.has(details.type)) return {};
    const route = routeFor(tabId, details.url);
    // A route that answers the request (network_routes.js) replaces its body: that is the page's.
    pendingOf(details.requestId).body = route?.fulfill
      ? { text: route.body, routed: true }
      : copyBody(details.requestId);
    return {};
  };
  webRequest().onBeforeRequest.addListener(listener, { urls: ["<all_urls>"], tabId }, ["blocking"]);
  copiers.set(tabId, { holder, listener });
}

/** Start keeping the tab's requests (its first action). */
export function watchRequests(tabId) {
  if (!logs.has(tabId)) logs.set(tabId, []);
  copyBodiesOf(tabId);
}

export function forgetRequests(tabId) {
  logs.delete(tabId);
  const had = copiers.get(tabId);
  if (had) webRequest().onBeforeRequest.removeListener(had.listener);
  copiers.delete(tabId);
}

/** Let the oldest bodies of the tab's log go while it holds more than MAX_BODIES bytes of them. */
function boundBodies(log) {
  let total = log.reduce((sum, entry) => sum + (entry.body?.size ?? 0), 0);
  for (const entry of log) {
    if (total <= MAX_BODIES) break;
    if (!entry.body?.chunks) continue;
    total -= entry.body.size;
    entry.body = { dropped: true };
  }
}

function add(details, entry) {
  const log = logs.get(details.tabId);
  const heard = pending.get(details.requestId) ?? {};
  pending.delete(details.requestId);
  if (!log) return;
  const document = documentOf(details.tabId);
  const heardEntry = {
    url: details.url,
    method: details.method,
    type: details.type,
    document,
    requestHeaders: heard.requestHeaders,
    requestBody: heard.requestBody,
    responseHeaders: details.responseHeaders,
    body: heard.body,
    ...entry,
  };
  // webRequest sees a WebSocket's handshake alone: neither its frames nor its closing.
  if (details.type === "websocket") heardEntry.websocket = { framesNote: FRAMES_NOTE };
  // The page's timeline may have told of it first (it ended in the page before the browser said
  // so here): the same request, which keeps its number.
  const told = log.find((kept) => kept.fromTimeline && kept.document === document && kept.url === details.url);
  if (told) {
    delete told.fromTimeline;
    Object.assign(told, heardEntry);
    return;
  }
  log.push(heardEntry);
  log.splice(0, Math.max(0, log.length - MAX_ENTRIES));
  boundBodies(log);
}

/** Hear the browser's requests, where the permission was granted. */
export function listenForRequests() {
  if (!chrome.webRequest) return;
  const filter = { urls: ["<all_urls>"] };
  const kept = (details) => logs.has(details.tabId);
  chrome.webRequest.onBeforeRequest.addListener(
    (details) => {
      if (kept(details) && details.requestBody) pendingOf(details.requestId).requestBody = details.requestBody;
    },
    filter,
    ["requestBody"],
  );
  chrome.webRequest.onSendHeaders.addListener(
    (details) => {
      if (kept(details)) pendingOf(details.requestId).requestHeaders = details.requestHeaders;
    },
    filter,
    ["requestHeaders"],
  );
  chrome.webRequest.onCompleted.addListener(
    (details) => {
      const [, ...words] = (details.statusLine ?? "").split(" ");
      add(details, { status: details.statusCode, statusText: words.slice(1).join(" ") });
    },
    filter,
    ["responseHeaders"],
  );
  chrome.webRequest.onErrorOccurred.addListener((details) => add(details, { failure: details.error }), filter);
}

/** browser_network_requests {static?, filter?} */
export async function networkRequests(tabId, args) {
  if (!chrome.webRequest) {
    throw new ActionError(Code.NOT_SUPPORTED, "this Firefox build of the extension was not granted webRequest");
  }
  const filter = requestFilter(args);
  const read = documentOf(tabId);
  // A page no script reaches (an error page) made no requests worth listing.
  const timeline = (await runIn(tabId, 0, pageTimeline).catch(() => null)) ?? [];
  const document = documentOf(tabId);
  const heard = (logs.get(tabId) ?? []).filter((request) => request.document === document);
  // A timeline read as the tab moved on may be the earlier page's.
  const requests = currentRequests(tabId, document, heard, document === read ? timeline : []);
  return requestListing(requests, args, filter);
}

/**
 * The current page's requests, numbered, those of `timeline` the browser did not tell of kept
 * in the log from now on, so that each keeps its number: before the heard ones while none of
 * them is numbered yet (they came first), after them otherwise.
 */
function currentRequests(tabId, document, heard, timeline) {
  const unheard = unheardRequests(heard, timeline, document).map((request) => ({ ...request, fromTimeline: true }));
  const log = logs.get(tabId);
  if (log && unheard.length) {
    const first = log.findIndex((request) => request.document === document);
    if (first >= 0 && !heard.some((request) => request.number)) log.splice(first, 0, ...unheard);
    else log.push(...unheard);
  }
  const requests = (log ?? unheard).filter((request) => request.document === document && pagesOwn(request.url));
  numberRequests(requests);
  return requests;
}

const headerPairs = (headers) => (headers ?? []).map(({ name, value }) => [name, value ?? ""]);
const headerOf = (headers, name) => headers?.find((header) => header.name.toLowerCase() === name)?.value ?? null;

function base64Of(chunks) {
  let binary = "";
  for (const chunk of chunks) {
    const bytes = new Uint8Array(chunk);
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** A request's body as webRequest gave it: form fields, or raw bytes. */
function requestBodyOf(request) {
  const body = request.requestBody;
  if (!body) return null;
  if (body.error) return { unavailable: `not read: ${body.error}` };
  if (body.formData) {
    const fields = Object.entries(body.formData).flatMap(([name, values]) => values.map((value) => [name, value]));
    return { text: new URLSearchParams(fields).toString() };
  }
  const raw = (body.raw ?? []).filter((part) => part.bytes);
  if (!raw.length) return body.raw?.some((part) => part.file) ? { unavailable: "a file, not read" } : null;
  return { base64: base64Of(raw.map((part) => part.bytes)) };
}

function responseBodyOf(request) {
  const type = headerOf(request.responseHeaders, "content-type");
  if (UNCOPIED.has(request.type)) {
    const size = headerOf(request.responseHeaders, "content-length");
    return { binary: true, size: size === null ? undefined : Number(size) };
  }
  const body = request.body;
  if (!body) {
    if (request.failure) return { unavailable: `none: the request failed (${request.failure})` };
    return { unavailable: request.method ? "not kept: no body came" : "not kept: made before the tools attached" };
  }
  if (body.dropped) return { unavailable: "not kept: the tab's newer bodies took its place (1 MB in all)" };
  if (body.routed) return { text: body.text };
  if (body.failed && !body.size) return { unavailable: "not read: the browser gave no copy of it" };
  return { base64: base64Of(body.chunks), size: body.size, cut: body.cut, type };
}

/** browser_network_request {index, part?}: one request of the current page, by its listed number. */
export async function networkRequest(tabId, args) {
  if (!chrome.webRequest) {
    throw new ActionError(Code.NOT_SUPPORTED, "this Firefox build of the extension was not granted webRequest");
  }
  const part = requestPart(args);
  const read = documentOf(tabId);
  const timeline = (await runIn(tabId, 0, pageTimeline).catch(() => null)) ?? [];
  const document = documentOf(tabId);
  const heard = (logs.get(tabId) ?? []).filter((request) => request.document === document);
  const request = requestNumbered(
    currentRequests(tabId, document, heard, document === read ? timeline : []),
    args.index,
  );
  if (request.websocket) return webSocketHandshake(request, part);
  const details = {
    requestHeaders: headerPairs(request.requestHeaders),
    responseHeaders: headerPairs(request.responseHeaders),
    mimeType: headerOf(request.responseHeaders, "content-type"),
    requestType: headerOf(request.requestHeaders, "content-type"),
    requestBody: requestBodyOf(request),
    responseBody: responseBodyOf(request),
  };
  if (!request.method)
    details.note = "Made before the tools attached to the tab: only its address and status are known";
  return textResult(requestDetails(request, details, part));
}

/**
 * A WebSocket connection's handshake headers; its frames are not_supported: Firefox's webRequest
 * sees the handshake alone, and a wrapper of the page's WebSocket could be lied to by the page.
 */
function webSocketHandshake(request, part) {
  const headers = {
    requestHeaders: headerPairs(request.requestHeaders),
    responseHeaders: headerPairs(request.responseHeaders),
  };
  if (part === "request-headers" || part === "response-headers") {
    return textResult(webSocketDetails(request, headers, part));
  }
  throw new ActionError(
    Code.NOT_SUPPORTED,
    "Firefox's WebExtension APIs do not show a WebSocket's frames (webRequest sees its handshake alone);" +
      ' part "request-headers" or "response-headers" gives the handshake',
  );
}

/** The origin of each frame of the tab that is not its top document, by frame id. */
async function frameOrigins(tabId) {
  const frames = (await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null)) ?? [];
  return new Map(
    frames.filter((frame) => frame.frameId !== 0).map((frame) => [frame.frameId, originOf(frame.url) || frame.url]),
  );
}

function consoleLine({ type, text }) {
  if (type === "exception" || type === "dispatched") return text;
  return `[${type.toUpperCase()}] ${text}`;
}

/** browser_console_messages {level?, all?}: what the hooks of the tab's frames heard, oldest first. */
export async function consoleMessages(tabId, args) {
  let results = [];
  try {
    const reading = chrome.scripting.executeScript({ target: { tabId, allFrames: true }, func: pageConsoleRecords });
    results = await withTimeout(reading, SCRIPT_TIMEOUT_MS, "the console's records");
  } catch {
    // none to read: a page the add-on may not script
  }
  const origins = results.some((frame) => frame.frameId !== 0) ? await frameOrigins(tabId) : new Map();
  const records = results
    .flatMap(({ frameId, result }) =>
      (result ?? []).map((record) => ({ ...record, frame: frameId === 0 ? null : (origins.get(frameId) ?? "") })),
    )
    .sort((a, b) => a.time - b.time);
  const entries = records.map((record) => ({
    // An error the page says it had is an error all the same, only not the browser's word.
    level: record.type === "dispatched" ? "error" : consoleLevel(record.type),
    line: lineFrom(consoleLine(record), record.frame),
  }));
  const listing = consoleListing(entries, args);
  if (!args.all) return listing;
  return `${listing}\n\nFirefox keeps each page's messages in the page: those of pages the tab showed before are gone.`;
}
