// The WebExtension driver's network log: each tab's requests as chrome.webRequest reports them
// ended (completed or failed), marked with the document they came in, listed as telemetry.js
// lists the DevTools driver's. Heard only from the first action on a tab on, and only where the
// browser grants the webRequest permission.

import { ActionError, Code, invalidArguments } from "./errors.js";
import { documentOf } from "./webext_navigation.js";

const MAX_ENTRIES = 1_000;
const FETCH_TYPES = new Set(["xmlhttprequest"]);

/** tab id -> [{url, method, type, status, statusText, failure, document}] */
const logs = new Map();

/** Start keeping the tab's requests (its first action). */
export function watchRequests(tabId) {
  if (!logs.has(tabId)) logs.set(tabId, []);
}

export function forgetRequests(tabId) {
  logs.delete(tabId);
}

function add(details, entry) {
  const log = logs.get(details.tabId);
  if (!log) return;
  log.push({
    url: details.url,
    method: details.method,
    type: details.type,
    document: documentOf(details.tabId),
    ...entry,
  });
  log.splice(0, Math.max(0, log.length - MAX_ENTRIES));
}

/** Hear the browser's requests, where the permission was granted. */
export function listenForRequests() {
  if (!chrome.webRequest) return;
  const filter = { urls: ["<all_urls>"] };
  chrome.webRequest.onCompleted.addListener((details) => {
    const [, ...words] = (details.statusLine ?? "").split(" ");
    add(details, { status: details.statusCode, statusText: words.slice(1).join(" ") });
  }, filter);
  chrome.webRequest.onErrorOccurred.addListener((details) => add(details, { failure: details.error }), filter);
}

/** browser_network_requests {static?, filter?} */
export async function networkRequests(tabId, args) {
  if (!chrome.webRequest) {
    throw new ActionError(Code.NOT_SUPPORTED, "this Firefox build of the extension was not granted webRequest");
  }
  let filter = null;
  if (args.filter !== undefined && args.filter !== "") {
    try {
      filter = new RegExp(args.filter);
    } catch (error) {
      throw invalidArguments(`filter is not a valid regular expression: ${error.message}`);
    }
  }
  const current = (logs.get(tabId) ?? []).filter((request) => request.document === documentOf(tabId));
  const lines = [];
  let hidden = 0;
  current.forEach((request, index) => {
    const succeeded = !request.failure && request.status !== undefined && request.status < 400;
    if (!args.static && !FETCH_TYPES.has(request.type) && succeeded) {
      hidden += 1;
      return;
    }
    if (filter && !filter.test(request.url)) return;
    let line = `${index + 1}. [${request.method}] ${request.url}`;
    if (request.failure) line += ` => [FAILED] ${request.failure}`;
    else line += ` => [${request.status}]${request.statusText ? ` ${request.statusText}` : ""}`;
    lines.push(line);
  });
  if (!lines.length) lines.push("No requests to show.");
  if (hidden) {
    lines.push(
      "",
      `${hidden} successful static request${hidden === 1 ? "" : "s"} (documents, scripts, images...) not shown: pass "static": true to list them.`,
    );
  }
  return lines.join("\n");
}
