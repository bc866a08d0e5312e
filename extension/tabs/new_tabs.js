// Tabs born of other tabs (window.open, a link or form with a target): which tab opened each, so
// the brokers can give a new tab its opener's owner from birth (tabCreated.openerTabId, from
// webNavigation.onCreatedNavigationTarget; see tabs.js), and what a built-in action that opened
// one should say and do about it.
//
// Focus: a tab opened while a client's action runs in its opener was opened by the client, not by
// the person, so it must not take the person's focus: if Chromium brings it to the front, the tab
// that was in front before goes back there, and a popup window it opened in gives the focus back
// to the window that had it. A tab the person opens from a client's tab (they clicked in it
// themselves, no action running) is theirs to look at, and is left in front. (Headless Chromium
// counts every window as focused, so the end-to-end tests see the tabs, not the windows.)

/** tab id -> the action watch running in it (actions/run.js): what it opened, while it runs. */
const watches = new Map();
/** window id -> its latest tabs in front, newest last (two: the new tab may be heard of first). */
const front = new Map();
/** Tabs opened by an action: if Chromium activates one, its window's tab before goes back in front. */
const quiet = new Set();
/** The latest focused windows, newest last: a popup window an action opened gives focus back. */
let focusedWindows = [];

const without = (ids, gone) => ids.filter((id) => id !== gone);

chrome.tabs
  .query({ active: true })
  .then((tabs) => tabs.forEach((tab) => front.set(tab.windowId, [tab.id])))
  .catch(() => {});
chrome.windows
  .getLastFocused()
  .then((window) => windowFocusChanged(window.id))
  .catch(() => {});

/**
 * Note what an action in `tabId` opens while `task()` runs; its result, and the new tabs as
 * [{id, url}] in the order they opened.
 */
export async function watchingNewTabs(tabId, task) {
  const watch = { opened: [] };
  watches.set(tabId, watch);
  try {
    const result = await task();
    const opened = await Promise.all(
      watch.opened.map(async (id) => {
        const tab = await chrome.tabs.get(id).catch(() => null);
        return tab ? { id, url: tab.url || tab.pendingUrl || "" } : null;
      }),
    );
    return { result, opened: opened.filter(Boolean) };
  } finally {
    if (watches.get(tabId) === watch) watches.delete(tabId);
  }
}

/** A tab was born of `openerId`: an action running there owns the news, and the focus stays put. */
export function bornOf(tab, openerId) {
  const watch = watches.get(openerId);
  if (!watch || watch.opened.includes(tab.id)) return;
  watch.opened.push(tab.id);
  quiet.add(tab.id);
  if (tab.active) restoreFront(tab.windowId, tab.id);
  restoreFocusedWindow(tab.windowId);
}

/** chrome.windows.onFocusChanged: remember the person's windows in focus. */
export function windowFocusChanged(windowId) {
  if (windowId === chrome.windows.WINDOW_ID_NONE) return;
  focusedWindows = [...without(focusedWindows, windowId), windowId].slice(-2);
}

/** A window an action's page opened (a popup: window.open with a size) gives focus back to the one before. */
async function restoreFocusedWindow(windowId) {
  const tabs = await chrome.tabs.query({ windowId }).catch(() => []);
  if (tabs.length !== 1) return;
  const before = without(focusedWindows, windowId).at(-1);
  if (before !== undefined) await chrome.windows.update(before, { focused: true }).catch(() => {});
}

/** chrome.tabs.onActivated: remember the front tab, and put it back if an action's new tab took it. */
export function frontChanged({ tabId, windowId }) {
  if (quiet.has(tabId)) {
    quiet.delete(tabId);
    restoreFront(windowId, tabId);
    return;
  }
  front.set(windowId, [...(front.get(windowId) ?? []), tabId].slice(-2));
}

function restoreFront(windowId, newTabId) {
  const before = without(front.get(windowId) ?? [], newTabId).at(-1);
  if (before !== undefined) chrome.tabs.update(before, { active: true }).catch(() => {});
}

/** A closed tab needs nothing more. */
export function newTabGone(tabId) {
  quiet.delete(tabId);
  for (const [windowId, ids] of front) front.set(windowId, without(ids, tabId));
}
