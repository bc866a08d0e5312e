// The numbers refs are made of, per tab, mirrored in chrome.storage.session so that a worker that
// restarts never hands out a number it gave before: a ref a client holds from an earlier page (or
// an earlier document of a frame) must not come to name an element of the next one. Per tab: the
// page's last ref number (refs.js), and the next frame number and each frame's number and last ref
// number (frames.js). What the agents in the pages keep needs no copy: their worlds outlive the
// worker.

import { onTabForgotten } from "./devtools/debugger.js";

const KEY = "refNumbers";

/** tab id -> {last, next, frames: {frame id: [number, last]}}, as last saved or restored. */
let stored = {};

onTabForgotten((tabId, closed) => {
  if (closed) saveNumbers(tabId, null);
});

export async function restoreRefNumbers() {
  const found = await chrome.storage.session.get(KEY).catch(() => ({}));
  // Tabs closed while no worker ran are forgotten now.
  const open = new Set((await chrome.tabs.query({}).catch(() => [])).map((tab) => String(tab.id)));
  stored = Object.fromEntries(Object.entries(found[KEY] ?? {}).filter(([tabId]) => open.has(tabId)));
}

/** The tab's numbers as last saved (by this worker or one before it), or null. */
export function storedNumbers(tabId) {
  return stored[tabId] ?? null;
}

/** Remember `change` (some of {last, next, frames}) for the tab, or forget the tab (null). */
export function saveNumbers(tabId, change) {
  if (change === null) delete stored[tabId];
  else stored[tabId] = { ...stored[tabId], ...change };
  chrome.storage.session.set({ [KEY]: stored }).catch((error) => console.warn("browser-mcp: cannot save", error));
}

/** The last ref number the tab's page gave. */
export const lastRefOf = (tabId) => storedNumbers(tabId)?.last ?? 0;

/**
 * The ref numbering for a snapshot of the tab's page: `lastRef`, the number the page goes on
 * from, and `update(last)` with the last it gave.
 */
export function refsFor(tabId) {
  return {
    lastRef: lastRefOf(tabId),
    update(last) {
      if (last > lastRefOf(tabId)) saveNumbers(tabId, { last });
    },
  };
}
