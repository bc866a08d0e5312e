// What the person does to AI agents from the popup: pause them all in this browser, end an AI
// session, take a tab back. The pause is kept in chrome.storage.local, so a restarted worker (or
// browser) stays paused, and shows on the toolbar icon. Each act is told to the brokers
// concerned (protocol.js's PAUSE_CHANGED, PERSON_ENDED_SESSION, PERSON_RELEASED_TAB) and carried
// out here at once as well, so the browser obeys the person even where a broker is gone or does
// not know these messages; the broker's answers (`disconnect`, `tabReleased`) then change nothing.

import { PersonRefusal, ToBroker } from "../base/protocol.js";
import { releaseSessions, releaseTab } from "../actions/driver.js";
import { broadcast, joinedLinks, sendTo } from "../link/links.js";
import { forgetSessions, ownerOf, ungroupTab } from "../tabs/sessions.js";
import { showToolbar, toolbarState } from "./toolbar.js";

let paused = false;

export const pauseReady = chrome.storage.local
  .get("paused")
  .then(({ paused: stored }) => {
    paused = stored === true;
    showStanding();
  })
  .catch((error) => console.warn("browser-mcp: cannot read the pause", error));

export function isPaused() {
  return paused;
}

/** The error every call gets while paused, as the broker names it (`paused`). */
export function pausedError() {
  return {
    code: PersonRefusal.PAUSED,
    message:
      "the person paused AI agents in this browser: nothing reaches its pages until they resume them" +
      " from the browser-mcp popup",
  };
}

/** The toolbar icon for the pause and the links as they are now (toolbar.js). */
export function showStanding() {
  showToolbar(toolbarState({ paused, connected: joinedLinks().length > 0 }));
}

export async function setPaused(value) {
  paused = value === true;
  await chrome.storage.local.set({ paused });
  showStanding();
  broadcast({ type: ToBroker.PAUSE_CHANGED, paused });
}

/** End an AI session of the broker on `port`: its tabs leave its group and stay open. */
export async function endSession(port, sessionId) {
  sendTo(port, { type: ToBroker.PERSON_ENDED_SESSION, sessionId });
  const ended = (id) => id === sessionId;
  await Promise.all([forgetSessions(port, ended), releaseSessions(port, ended)]);
}

/** Take a tab back from the session holding it. */
export async function takeBack(tabId) {
  const owner = ownerOf(tabId);
  if (!owner) return;
  sendTo(owner.port, { type: ToBroker.PERSON_RELEASED_TAB, tabId });
  await Promise.all([ungroupTab(owner.port, owner.sessionId, tabId), releaseTab(tabId)]);
}
