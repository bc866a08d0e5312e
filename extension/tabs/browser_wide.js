// A broker's browserRequest: what it asks of the browser itself rather than of a page, its windows
// and the person's records (records.js, record_deletions.js), answered with one toolResult whatever happens. The broker
// has already decided what the session may ask (a window to focus or close holds only its tabs);
// this module carries it out, after the person's say: nothing while they paused agents.

import { ToBroker } from "../base/protocol.js";
import { ActionError, invalidArguments } from "../base/errors.js";
import { reply } from "../link/links.js";
import { RECORD_REQUESTS } from "./records.js";
import { DELETION_REQUESTS } from "./record_deletions.js";

function windowId(args) {
  if (!Number.isInteger(args.windowId)) throw invalidArguments("windowId must be a window's id");
  return args.windowId;
}

// The broker checks a size too (broker/core/browser_wide.py); these bounds are the same.
const WINDOW_SIZE = { min: 200, max: 10_000 };

function size(args, name) {
  const value = args[name];
  if (!Number.isInteger(value) || value < WINDOW_SIZE.min || value > WINDOW_SIZE.max) {
    throw invalidArguments(
      `${name} must be a whole number of CSS pixels from ${WINDOW_SIZE.min} to ${WINDOW_SIZE.max}`,
    );
  }
  return value;
}

const WINDOW_REQUESTS = Object.freeze({
  async listWindows() {
    const windows = await chrome.windows.getAll({ populate: true });
    return {
      windows: windows.map((window) => ({
        id: window.id,
        focused: window.focused,
        state: window.state,
        type: window.type,
        incognito: window.incognito,
        tabs: (window.tabs ?? []).map((tab) => tab.id),
      })),
    };
  },
  async focusWindow(args) {
    await chrome.windows.update(windowId(args), { focused: true });
    return { windowId: args.windowId };
  },
  async resizeWindow(args) {
    const id = windowId(args);
    const wanted = { width: size(args, "width"), height: size(args, "height") };
    // A maximized, minimized or full-screen window takes no size until it is a normal one again.
    if ((await chrome.windows.get(id)).state !== "normal") await chrome.windows.update(id, { state: "normal" });
    const window = await chrome.windows.update(id, wanted);
    return { windowId: id, width: window.width, height: window.height };
  },
  async closeWindow(args) {
    const id = windowId(args);
    // The broker checked that these tabs are all the session's; one that arrived since (the
    // person's, say) is not closed with them.
    if (Array.isArray(args.tabIds)) {
      const arrived = (await chrome.tabs.query({ windowId: id })).filter((tab) => !args.tabIds.includes(tab.id));
      if (arrived.length) {
        throw new ActionError(
          "window_changed",
          `window ${id} was not closed: tab ${arrived.map((tab) => tab.id).join(", ")} opened in it` +
            " after the broker checked it; list the windows again",
        );
      }
    }
    await chrome.windows.remove(id);
    return { windowId: args.windowId };
  },
});

const REQUESTS = { ...WINDOW_REQUESTS, ...RECORD_REQUESTS, ...DELETION_REQUESTS };

/** Whether a browserRequest of that name is one this browser carries out (link/frames.js asks). */
export const isBrowserRequest = (request) => Object.hasOwn(REQUESTS, request);

/**
 * Carry out a broker's browserRequest; the toolResult to send back. `approved`: what the person
 * approved of it, when they were asked (a deletion runs only if that is still what it deletes).
 * The pause, and a request of no name this browser knows (the record's `invalid`), are the
 * caller's to answer first (broker_requests.js).
 * @param {import("../link/frames.js").BrowserRequestFrame} frame
 */
export async function runBrowserRequest(frame, approved) {
  const answer = reply(ToBroker.TOOL_RESULT, frame, { callId: frame.callId });
  try {
    return { ...answer, result: await REQUESTS[frame.request](frame.args, approved), error: null };
  } catch (error) {
    const code = error instanceof ActionError ? error.code : "request_failed";
    return { ...answer, error: { code, message: String(error?.message ?? error) } };
  }
}
