// What the tools' reading of a page's console and network answers, for both page drivers
// (devtools/telemetry.js hears them over the DevTools protocol, webext/telemetry.js through page
// hooks and webRequest): the listings of browser_console_messages and browser_network_requests,
// the level of each console message, a frame's lines named by its origin, the requests the
// page's Performance timeline holds that the browser did not tell of, and WebSocket connections
// with their frames, kept bounded among the requests.

import { invalidArguments } from "../base/errors.js";
import { sections } from "./results.js";

const LEVELS = ["error", "warning", "info", "debug"];
const LEVEL_OF_TYPE = {
  assert: "error",
  error: "error",
  exception: "error",
  warning: "warning",
  clear: "debug",
  debug: "debug",
  endGroup: "debug",
  profile: "debug",
  profileEnd: "debug",
  startGroup: "debug",
  startGroupCollapsed: "debug",
  trace: "debug",
};
const FETCH_TYPES = new Set(["Fetch", "XHR", "fetch", "xmlhttprequest"]);
const LINE_BREAKS = /\r\n|[\n\r\u2028\u2029]/g;

/** Page-side: the page's Performance timeline, its document and what it loaded: [{url, type, status}]. */
export function pageTimeline() {
  return performance
    .getEntriesByType("navigation")
    .concat(performance.getEntriesByType("resource"))
    .map((entry) => ({ url: entry.name, type: entry.initiatorType, status: entry.responseStatus }));
}

/**
 * The requests of `timeline` (pageTimeline's) missing from `heard`, the requests of the same
 * document that the browser told of, as entries of `document`. A heard answer whose request went
 * untold takes the timeline's kind, which names it better ("fetch"). Either driver's.
 */
export function unheardRequests(heard, timeline, document) {
  const added = [];
  for (const request of timeline) {
    const known = heard.find((seen) => seen.url === request.url);
    if (known && !known.method) known.type = request.type;
    if (!known) added.push({ document, url: request.url, type: request.type, status: request.status || undefined });
  }
  return added;
}

/** The level a console message of `type` (console.* and the DevTools protocol's names) is listed at. */
export const consoleLevel = (type) => LEVEL_OF_TYPE[type] ?? "info";

/**
 * A console line as listed: one of a frame's document (`frameOrigin` not null) begins with the
 * frame's origin, so that no frame's line passes for the top page's. Either driver's.
 */
export const lineFrom = (line, frameOrigin) =>
  frameOrigin === null
    ? line
    : `[frame ${frameOrigin && frameOrigin !== "null" ? frameOrigin : "of an opaque origin"}] ${line}`;

/** browser_console_messages' answer for `all`, the messages [{level, line}] it covers (either driver's). */
export function consoleListing(all, args) {
  const level = args.level ?? "info";
  if (!LEVELS.includes(level)) throw invalidArguments(`level must be one of ${LEVELS.join(", ")}`);
  const shown = all.filter((entry) => LEVELS.indexOf(entry.level) <= LEVELS.indexOf(level));
  const errors = all.filter((entry) => entry.level === "error").length;
  const warnings = all.filter((entry) => entry.level === "warning").length;
  const header = [`Total messages: ${all.length} (Errors: ${errors}, Warnings: ${warnings})`];
  if (shown.length !== all.length) header.push(`Returning ${shown.length} messages for level "${level}"`);
  // A message's own line breaks are indented, so that no text a page logs begins a line of its own
  // and passes for another message (a frame's, or an error the browser raised).
  return [...header, "", ...shown.map((entry) => entry.line.replace(LINE_BREAKS, "\n  "))].join("\n");
}

function shortUrl(url) {
  return url.startsWith("data:") && url.length > 100 ? `${url.slice(0, 50)}...${url.slice(-20)}` : url;
}

/** The pattern of browser_network_requests' `filter` (null for none); invalid_arguments if it is not one. */
export function requestFilter(args) {
  if (args.filter === undefined || args.filter === "") return null;
  try {
    return new RegExp(args.filter);
  } catch (error) {
    throw invalidArguments(`filter is not a valid regular expression: ${error.message}`);
  }
}

/**
 * Give each of the current page's `requests` that has none its number, in their order after the
 * numbered ones: the number browser_network_requests lists it by and browser_network_request takes,
 * the same for as long as the page stays (a request dropped from the log takes its number with it).
 */
export function numberRequests(requests) {
  let next = 1 + Math.max(0, ...requests.map((request) => request.number ?? 0));
  for (const request of requests) request.number ??= next++;
}

/** The request of the current page's `requests` numbered `index`; invalid_arguments if none is. */
export function requestNumbered(requests, index) {
  if (!Number.isInteger(index) || index < 1) throw invalidArguments("index must be a whole number, 1 or more");
  numberRequests(requests);
  const found = requests.find((request) => request.number === index);
  if (!found) {
    throw invalidArguments(`request #${index} is not one of this page's: browser_network_requests lists their numbers`);
  }
  return found;
}

/**
 * browser_network_requests' answer for the current page's `requests` [{method?, url, type,
 * status?, statusText?, failure?, number?}] (either driver's): by `args.static`, and `filter`.
 */
export function requestListing(requests, args, filter) {
  const lines = [];
  let hidden = 0;
  let methodless = false;
  numberRequests(requests);
  requests.forEach((request) => {
    const succeeded = !request.failure && request.status !== undefined && request.status < 400;
    if (!args.static && !FETCH_TYPES.has(request.type) && !request.websocket && succeeded) {
      hidden += 1;
      return;
    }
    if (filter && !filter.test(request.url)) return;
    let line = `${request.number}. ${request.method ? `[${request.method}] ` : ""}${shortUrl(request.url)}`;
    if (request.websocket) line += ` => ${webSocketSummary(request)}`;
    else if (request.failure) line += ` => [FAILED] ${request.failure}`;
    else if (request.status !== undefined)
      line += ` => [${request.status}]${request.statusText ? ` ${request.statusText}` : ""}`;
    methodless ||= !request.method;
    lines.push(line);
  });
  if (!lines.length) lines.push("No requests to show.");
  if (methodless)
    lines.push("", "Requests from before the browser tools attached to this tab are listed without their method.");
  if (hidden) {
    lines.push(
      "",
      `${hidden} successful static request${hidden === 1 ? "" : "s"} (documents, scripts, images...) not shown: pass "static": true to list them.`,
    );
  }
  return lines.join("\n");
}

export const REQUEST_PARTS = Object.freeze(["request-headers", "request-body", "response-headers", "response-body"]);
// A body shown with the rest of a request is cut sooner than one asked for alone.
const BODY_IN_DETAILS = 2_000;
const BODY_ALONE = 100_000;
const TEXTUAL =
  /^(text\/|application\/(json|javascript|ecmascript|xml|xhtml\+xml|x-www-form-urlencoded|graphql|x-ndjson)\b|image\/svg\+xml)|\+(json|xml)\b/i;

/** browser_network_request's `part`, checked (undefined: all of it). */
export function requestPart(args) {
  if (args.part !== undefined && !REQUEST_PARTS.includes(args.part)) {
    throw invalidArguments(`part must be one of ${REQUEST_PARTS.join(", ")}`);
  }
  return args.part;
}

function bytesOf(base64) {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Text of `bytes` when they are UTF-8 text with no NUL, else null. */
function textOf(bytes) {
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return text.includes("\0") ? null : text;
  } catch {
    return null;
  }
}

/**
 * What a request's body is, as listed: `body` {text?, base64?, size?, cut?, unavailable?} as the
 * driver read it (`cut`: the driver kept only its first part), its MIME type's say beside. Text
 * comes cut at `limit` characters, saying where; a binary body (an image, a font) is described.
 */
export function bodyLines(body, mimeType, limit) {
  if (!body) return ["(none)"];
  if (body.unavailable) return [`(${body.unavailable})`];
  const typeOf = (mimeType ?? "").split(";")[0].trim();
  if (body.binary) {
    return [`(binary${typeOf ? `, ${typeOf}` : ""}, ${body.size ?? "an unknown number of"} bytes: not shown)`];
  }
  const bytes = body.base64 !== undefined ? bytesOf(body.base64) : null;
  const size = body.size ?? (bytes ? bytes.length : new TextEncoder().encode(body.text ?? "").length);
  const type = (mimeType ?? "").split(";")[0].trim();
  const text = bytes ? (TEXTUAL.test(type) || !type ? textOf(bytes) : null) : (body.text ?? "");
  if (text === null) return [`(binary${type ? `, ${type}` : ""}, ${size} bytes: not shown)`];
  if (!text) return ["(empty)"];
  const lines = [text.length > limit ? text.slice(0, limit) : text];
  if (text.length > limit) {
    lines.push(`[cut at ${limit} of ${text.length} characters]`);
  } else if (body.cut) lines.push(`[cut: only the first ${size} bytes were kept]`);
  return lines;
}

function headerLinesOf(headers) {
  const pairs = Array.isArray(headers) ? headers : Object.entries(headers ?? {});
  return pairs.length ? pairs.map(([name, value]) => `${name}: ${value}`) : ["(none known)"];
}

/**
 * browser_network_request's answer for `request` (an entry of either driver's log) and what the
 * driver read of it: `{requestHeaders, responseHeaders, requestBody, responseBody}`, each as
 * bodyLines takes it; `part` one of REQUEST_PARTS, or undefined for all of it.
 */
export function requestDetails(request, read, part) {
  const mimeType = read.mimeType ?? null;
  if (part === "request-headers") return sections(["Request headers", headerLinesOf(read.requestHeaders)]);
  if (part === "response-headers") return sections(["Response headers", headerLinesOf(read.responseHeaders)]);
  if (part === "request-body") {
    return sections(["Request body", bodyLines(read.requestBody, read.requestType ?? null, BODY_ALONE)]);
  }
  if (part === "response-body") return sections(["Response body", bodyLines(read.responseBody, mimeType, BODY_ALONE)]);
  let status = "";
  if (request.failure) status = ` => [FAILED] ${request.failure}`;
  else if (request.status !== undefined)
    status = ` => [${request.status}]${request.statusText ? ` ${request.statusText}` : ""}`;
  const general = [
    `#${request.number} ${request.method ? `[${request.method}] ` : ""}${shortUrl(request.url)}${status}`,
  ];
  if (request.type) general.push(`- Type: ${request.type}`);
  if (mimeType) general.push(`- MIME type: ${mimeType}`);
  if (read.note) general.push(`- ${read.note}`);
  // A body's own lines are indented, so that none passes for a section of the answer.
  const body = (which, lines) => {
    const shown = lines.map((line) => line.replace(/^/gm, "  "));
    if (lines.some((line) => line.startsWith("[cut at "))) shown.push(`(part "${which}" shows more of it)`);
    return shown;
  };
  return sections(
    ["Request", general],
    ["Request headers", headerLinesOf(read.requestHeaders)],
    ["Request body", body("request-body", bodyLines(read.requestBody, read.requestType ?? null, BODY_IN_DETAILS))],
    ["Response headers", headerLinesOf(read.responseHeaders)],
    ["Response body", body("response-body", bodyLines(read.responseBody, mimeType, BODY_IN_DETAILS))],
  );
}

// A WebSocket connection's frames: the last MAX_FRAMES of each kept, each text cut to
// FRAME_PREVIEW characters, binary ones described by their size.
const MAX_FRAMES = 200;
const FRAME_PREVIEW = 200;

/** What a log keeps of a WebSocket connection, its frames heard by the driver (`frames: true`). */
export const webSocket = () => ({ state: "connecting", frames: [], sent: 0, received: 0 });

/**
 * Keep the frame {direction: "sent" | "received", at (ms since the handshake), opcode, text? or
 * base64?} of `websocket` (webSocket's), bounded.
 */
export function keepFrame(websocket, { direction, at, opcode, text, base64 }) {
  websocket[direction] += 1;
  const size = text !== undefined ? new TextEncoder().encode(text).length : base64 ? atob(base64).length : 0;
  const frame = { direction, at, size, binary: opcode !== 1 };
  if (text !== undefined) frame.text = text.slice(0, FRAME_PREVIEW);
  if (text !== undefined && text.length > FRAME_PREVIEW) frame.cut = text.length;
  websocket.frames.push(frame);
  if (websocket.frames.length > MAX_FRAMES) websocket.frames.shift();
}

function webSocketSummary(request) {
  const { websocket } = request;
  const status = request.status !== undefined ? `[${request.status}] ` : "";
  if (websocket.framesNote) return `${status}WebSocket; ${websocket.framesNote}`;
  const frames = websocket.sent + websocket.received;
  const state = websocket.error ? `${websocket.state}, error: ${websocket.error}` : websocket.state;
  return `${status}WebSocket ${state}, ${frames} frame${frames === 1 ? "" : "s"} (${websocket.sent} sent, ${websocket.received} received)`;
}

function frameLines(websocket, direction) {
  const frames = websocket.frames.filter((frame) => !direction || frame.direction === direction);
  const lines = frames.map((frame) => {
    const arrow = frame.direction === "sent" ? "-> sent" : "<- received";
    const what = frame.binary
      ? `binary, ${frame.size} bytes`
      : `${frame.size} bytes: ${JSON.stringify(frame.text)}${frame.cut ? ` [first ${FRAME_PREVIEW} of ${frame.cut} characters]` : ""}`;
    return `- +${frame.at} ms ${arrow}, ${what}`;
  });
  const heard = direction ? websocket[direction] : websocket.sent + websocket.received;
  if (heard > frames.length) lines.unshift(`(the last ${frames.length} of ${heard} frames)`);
  return lines.length ? lines : ["(none)"];
}

/**
 * browser_network_request's answer for a WebSocket connection `request`: its handshake's headers
 * (`read` as requestDetails takes them) and its frames; `part` "request-body" gives the frames it
 * sent, "response-body" those it received.
 */
export function webSocketDetails(request, read, part) {
  const { websocket } = request;
  if (part === "request-headers") return sections(["Request headers", headerLinesOf(read.requestHeaders)]);
  if (part === "response-headers") return sections(["Response headers", headerLinesOf(read.responseHeaders)]);
  if (part === "request-body") return sections(["Frames sent", frameLines(websocket, "sent")]);
  if (part === "response-body") return sections(["Frames received", frameLines(websocket, "received")]);
  const general = [
    `#${request.number} [${request.method ?? "GET"}] ${shortUrl(request.url)} => ${webSocketSummary(request)}`,
  ];
  if (websocket.closedAt !== undefined) general.push(`- Closed at +${websocket.closedAt} ms`);
  return sections(
    ["Request", general],
    ["Request headers", headerLinesOf(read.requestHeaders)],
    ["Response headers", headerLinesOf(read.responseHeaders)],
    ["Frames", frameLines(websocket)],
  );
}
