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
// in the DevTools driver, read for every listing.

import { originOf } from "../../base/origin.js";
import { ActionError, Code, withTimeout } from "../../base/errors.js";
import { pageConsoleRecords } from "./page_hooks.js";
import {
  consoleLevel,
  consoleListing,
  lineFrom,
  pageTimeline,
  requestFilter,
  requestListing,
  unheardRequests,
} from "../listings.js";
import { ANSWER_HOST } from "./dialogs.js";
import { documentOf } from "./navigation.js";
import { runIn } from "./scripts.js";

const MAX_ENTRIES = 1_000;
const SCRIPT_TIMEOUT_MS = 5_000;

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
  const filter = requestFilter(args);
  const read = documentOf(tabId);
  // A page no script reaches (an error page) made no requests worth listing.
  const timeline = (await runIn(tabId, 0, pageTimeline).catch(() => null)) ?? [];
  const document = documentOf(tabId);
  const heard = (logs.get(tabId) ?? []).filter((request) => request.document === document);
  // A timeline read as the tab moved on may be the earlier page's.
  const unheard = document === read ? unheardRequests(heard, timeline, document) : [];
  const requests = [...unheard, ...heard].filter((request) => pagesOwn(request.url));
  return requestListing(requests, args, filter);
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
