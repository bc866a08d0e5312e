// The broker's ownership rule, kept by this browser too: whatever a broker asks, a page tool call
// (callTool), a built-in browser tool (browserAction), focusing or closing a tab, or focusing,
// resizing or closing a window, acts only in tabs the asking session holds, as the broker told this browser
// (sessions.js: the tabs it opened for the session and those it said the session claimed, which
// the person sees in the session's tab group). Anything else is refused before it reaches a page,
// so a broker that forgets its rule, or a server that is not the person's broker, still cannot
// act unseen in the person's own tabs. Listing a tab's tools, opening tabs, listing windows and
// the person's records (their own switch) are not about a tab a session holds.
//
// What it reads is rebuilt after a worker restart (rebuild.js), so it waits for that first.

import { FromBroker, Refusal } from "../base/protocol.js";
import { ready } from "./rebuild.js";
import { holds, sessionName } from "./sessions.js";

/**
 * The frames that act in tabs a session holds (link/frames.js).
 * @typedef {import("../link/frames.js").CallToolFrame | import("../link/frames.js").BrowserActionFrame
 *   | import("../link/frames.js").BrowserRequestFrame | import("../link/frames.js").TabFrame} AdmittedFrame
 */

/**
 * A window's tabs a window request must hold: all of them, but those a closeWindow did not name.
 * @param {import("../link/frames.js").BrowserRequestFrame} frame
 */
async function windowTabs({ request, args }) {
  // A request without a proper window is answered by the request itself, which says what is wrong.
  if (!Number.isInteger(args.windowId)) return [];
  const tabs = await chrome.tabs.query({ windowId: args.windowId }).catch(() => []);
  // A tab that came into the window after the broker checked it keeps the window open anyway
  // (browser_wide.js answers window_changed), so it is that check's to name.
  const named = request === "closeWindow" && Array.isArray(args.tabIds) ? args.tabIds : null;
  return tabs.map((tab) => tab.id).filter((id) => named === null || named.includes(id));
}

/**
 * The tabs `frame` acts in; empty when it acts in none a session must hold.
 * @param {AdmittedFrame} frame
 */
async function tabsOf(frame) {
  switch (frame.type) {
    case FromBroker.CALL_TOOL:
    case FromBroker.BROWSER_ACTION:
    case FromBroker.CLOSE_TAB:
    case FromBroker.FOCUS_TAB:
      return [frame.tabId];
    case FromBroker.BROWSER_REQUEST:
      return ["focusWindow", "closeWindow", "resizeWindow"].includes(frame.request) ? windowTabs(frame) : [];
    default:
      return [];
  }
}

/**
 * null when every tab `frame` (from the broker on `link`) acts in is held by its session,
 * else the error {code, message} to refuse it with.
 * @param {AdmittedFrame} frame
 */
export async function unclaimed(link, frame) {
  await ready;
  const foreign = (await tabsOf(frame)).filter((tabId) => !holds(link.port, frame.sessionId, tabId));
  if (!foreign.length) return null;
  const who = frame.sessionId ? `session ${JSON.stringify(sessionName(link.port, frame.sessionId))}` : "no session";
  return {
    code: Refusal.TAB_NOT_CLAIMED,
    message:
      `tab ${foreign.join(", ")} is not held by ${who} in this browser: a tab of the person's is claimed` +
      " first (tabs action=claim), which shows it in the session's tab group",
  };
}
