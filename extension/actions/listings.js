// What the tools' reading of a page's console and network answers, for both page drivers
// (devtools/telemetry.js hears them over the DevTools protocol, webext/telemetry.js through page
// hooks and webRequest): the listings of browser_console_messages and browser_network_requests,
// the level of each console message, a frame's lines named by its origin, and the requests the
// page's Performance timeline holds that the browser did not tell of.

import { invalidArguments } from "../base/errors.js";

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
 * browser_network_requests' answer for the current page's `requests` [{method?, url, type,
 * status?, statusText?, failure?}] (either driver's): by `args.static`, and `filter`.
 */
export function requestListing(requests, args, filter) {
  const lines = [];
  let hidden = 0;
  let methodless = false;
  requests.forEach((request, index) => {
    const succeeded = !request.failure && request.status !== undefined && request.status < 400;
    if (!args.static && !FETCH_TYPES.has(request.type) && succeeded) {
      hidden += 1;
      return;
    }
    if (filter && !filter.test(request.url)) return;
    let line = `${index + 1}. ${request.method ? `[${request.method}] ` : ""}${shortUrl(request.url)}`;
    if (request.failure) line += ` => [FAILED] ${request.failure}`;
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
