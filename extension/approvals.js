// Approvals: what may run in a page, asked of the person before a broker's request runs. A call
// they must allow (a page tool declaring destructiveHint, browser_evaluate, or under the stricter
// policy every tool not declared read-only) waits for their answer in an approval window, an
// extension page naming the agent, the tool, its arguments and the site. The broker hears that the
// call waits (approvalPending), so it does not time the call out meanwhile. Deny, closing the
// window, or no answer within the approval time fails the call with `not_approved`; "always allow
// on this site" adds the site to the options' list. Read-only tools never ask.
//
// Waiting approvals live only in this worker: if it stops, its links close and the broker fails
// their calls at once, so nothing is left to rebuild.

import { FromBroker, PersonRefusal, ToBroker } from "./protocol.js";
import { reply } from "./links.js";
import { toolsOf } from "./page_tools.js";
import { isPaused, pausedError } from "./person.js";
import { RECORD_REQUESTS, notShared } from "./records.js";
import { sessionName } from "./sessions.js";
import { Policy, settings, settingsReady, updateSettings } from "./settings.js";

// Playwright MCP's read-only built-in tools; every other one changes the page. The broker knows
// this too (broker/core/browser_tools.py), but the person's safeguard takes no broker's word for it.
const READ_ONLY_ACTIONS = new Set(["snapshot", "wait_for", "take_screenshot", "console_messages", "network_requests"]);
// The browser's own requests (browser_wide.js) as the approval window names them, and which only read.
const BROWSER_REQUESTS = Object.freeze({
  listWindows: { tool: "browser_windows list", readOnly: true },
  focusWindow: { tool: "browser_windows focus", readOnly: false },
  closeWindow: { tool: "browser_windows close", readOnly: false },
  searchHistory: { tool: "browser_history_search", readOnly: true },
  searchBookmarks: { tool: "browser_bookmarks search", readOnly: true },
  createBookmark: { tool: "browser_bookmarks create", readOnly: false },
});
const ARGS_SHOWN = 600;
const WINDOW = { type: "popup", width: 480, height: 520, focused: true };

let nextId = 1;
/** id -> {details, owner: "port/sessionId", windowId, timer, finish(outcome)} */
const waiting = new Map();

function originOf(url) {
  try {
    const { origin } = new URL(url);
    return origin === "null" ? "" : origin;
  } catch {
    return "";
  }
}

function shorten(args) {
  const text = JSON.stringify(args ?? {}, null, 2);
  return text.length > ARGS_SHOWN ? `${text.slice(0, ARGS_SHOWN)}…` : text;
}

function needsApproval(annotations, origin) {
  const { approvalPolicy, alwaysAllow } = settings();
  if (approvalPolicy === Policy.NEVER || annotations?.readOnlyHint === true) return false;
  if (origin && alwaysAllow.includes(origin)) return false;
  if (approvalPolicy === Policy.NOT_READ_ONLY) return true;
  return annotations?.destructiveHint === true;
}

/** The tool a request names and what it declares about itself; an error when it may not run at all. */
async function describe(message) {
  if (message.type === FromBroker.BROWSER_REQUEST) {
    // Nobody is asked to approve what the person's switch refuses anyway.
    const refused = Object.hasOwn(RECORD_REQUESTS, message.request) ? await notShared() : null;
    if (refused) return { refused };
    // An unknown request asks nothing: runBrowserRequest answers it with what is wrong.
    const known = Object.hasOwn(BROWSER_REQUESTS, message.request) ? BROWSER_REQUESTS[message.request] : null;
    return {
      name: known?.tool ?? String(message.request),
      annotations: { readOnlyHint: known?.readOnly ?? true },
      wholeBrowser: true,
    };
  }
  if (message.type !== FromBroker.BROWSER_ACTION) {
    const tool = toolsOf(message.tabId).find((t) => t.name === message.toolName);
    return { name: message.toolName, annotations: tool?.annotations };
  }
  if (message.action === "evaluate" && !settings().allowEvaluate) {
    return {
      refused: {
        code: "not_supported",
        message: "the person turned browser_evaluate off in this browser (the browser-mcp extension's options)",
      },
    };
  }
  const annotations =
    message.action === "evaluate" ? { destructiveHint: true } : { readOnlyHint: READ_ONLY_ACTIONS.has(message.action) };
  return { name: `browser_${message.action}`, annotations };
}

/** The tab a call acts in: its URL and title; null when the call names no tab there is. */
async function placeOf(message) {
  if (!Number.isInteger(message.tabId)) return null;
  const tab = await chrome.tabs.get(message.tabId).catch(() => null);
  return tab && { url: tab.url || tab.pendingUrl || "", title: tab.title ?? "" };
}

/**
 * Whether a broker's callTool, browserAction or browserRequest may run now: null when it may,
 * else the error {code, message} to answer it with. Waits for the person when the call needs
 * their approval.
 */
export async function admit(link, message) {
  if (isPaused()) return pausedError();
  await settingsReady;
  const { name, annotations, refused, wholeBrowser } = await describe(message);
  if (refused) return refused;
  const place = wholeBrowser ? { url: "", title: "" } : await placeOf(message);
  // A request without a proper tab is answered by the call itself, which says what is wrong.
  if (!place) return null;
  const { url, title } = place;
  const origin = originOf(url);
  if (!needsApproval(annotations, origin)) return null;
  const timeoutMs = settings().approvalTimeoutMs;
  link.send(reply(ToBroker.APPROVAL_PENDING, message, { callId: message.callId, timeout: timeoutMs / 1000 }));
  const details = {
    agent: sessionName(link.port, message.sessionId),
    tool: name,
    args: shorten(message.args),
    site: origin || url || "the whole browser",
    // "Always allow" is for a site; a request of the whole browser is allowed once at a time.
    perSite: Boolean(origin),
    title,
    timeoutMs,
  };
  const answer = await ask(details, `${link.port}/${message.sessionId}`);
  if (answer === "always" && origin) await updateSettings({ alwaysAllow: [...settings().alwaysAllow, origin] });
  if (answer === "once" || answer === "always") return isPaused() ? pausedError() : null;
  return answer;
}

function notApproved(details, why) {
  return {
    code: PersonRefusal.NOT_APPROVED,
    message: `the person did not approve ${details.tool} on ${details.site}: ${why}`,
  };
}

/** Open the approval window and settle with "once", "always", or the error to answer with. */
function ask(details, owner) {
  const id = nextId++;
  return new Promise((resolve) => {
    const entry = { details: { ...details, id }, owner, windowId: null };
    entry.finish = (outcome) => {
      if (!waiting.delete(id)) return;
      clearTimeout(entry.timer);
      if (entry.windowId !== null) chrome.windows.remove(entry.windowId).catch(() => {});
      resolve(outcome);
    };
    const seconds = Math.round(details.timeoutMs / 1000);
    entry.timer = setTimeout(
      () => entry.finish(notApproved(details, `no answer within ${seconds} s`)),
      details.timeoutMs,
    );
    waiting.set(id, entry);
    chrome.windows
      .create({ ...WINDOW, url: chrome.runtime.getURL(`approval.html?id=${id}`) })
      .then((window) => {
        if (waiting.has(id)) entry.windowId = window.id;
        else chrome.windows.remove(window.id).catch(() => {});
      })
      .catch((error) => entry.finish(notApproved(details, `the approval window did not open (${error.message})`)));
  });
}

/** What the approval window shows; null once it is answered or gone. */
export function approvalDetails(id) {
  return waiting.get(id)?.details ?? null;
}

/** The person's answer from the approval window: "once", "always" or "deny". */
export function answerApproval(id, decision) {
  const entry = waiting.get(id);
  if (!entry) return;
  if (decision === "once" || decision === "always") entry.finish(decision);
  else entry.finish(notApproved(entry.details, "they denied it"));
}

/** chrome.windows.onRemoved: closing an approval window is a no. */
export function approvalWindowClosed(windowId) {
  for (const entry of waiting.values()) {
    if (entry.windowId === windowId) {
      entry.windowId = null;
      entry.finish(notApproved(entry.details, "they closed the approval window"));
    }
  }
}

/** Settle every waiting approval whose "port/sessionId" `match` picks with `error`, closing its window. */
export function cancelApprovals(match, error) {
  for (const entry of [...waiting.values()]) if (match(entry.owner)) entry.finish(error);
}
