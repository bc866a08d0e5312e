// Tabs: what the brokers hear as this browser's tabs open, change, move, take focus and close,
// each with its page tools and its place (window, index, pinned), and a broker's requests to open,
// focus or close a tab.

import { CloseRefusal, ToBroker } from "../base/protocol.js";
import { broadcast, reply } from "../link/links.js";
import { forgetTools, learnTools, refreshTools, setTools, toolsOf } from "../page_tools/page_tools.js";
import { isScriptable } from "../page_tools/page_bridges.js";
import { forgetOwner, groupTab } from "./sessions.js";
import { bornOf, newTabGone } from "./new_tabs.js";
import { expectFirstPage, firstPageGone } from "./first_pages.js";

/** tab id -> its place as the brokers last heard it; rebuilt by the snapshot after a restart. */
const places = new Map();
const placeOf = (tab) => `${tab.windowId}/${tab.index}/${tab.pinned}`;

/** A tab as the broker's messages carry it. */
export function tabInfo(tab) {
  places.set(tab.id, placeOf(tab));
  return {
    id: tab.id,
    title: tab.title ?? "",
    url: tab.url || tab.pendingUrl || "",
    windowId: tab.windowId,
    index: tab.index,
    pinned: tab.pinned,
    active: tab.active,
    tools: toolsOf(tab.id),
  };
}

/**
 * Report again the tabs of a window whose place changed. Chromium tells of the tab that moved,
 * opened or closed, not of the tabs beside it whose index shifted with it.
 */
export async function windowChanged(windowId) {
  if (!(windowId >= 0)) return;
  const tabs = await chrome.tabs.query({ windowId }).catch(() => []);
  for (const tab of tabs) {
    if (places.has(tab.id) && places.get(tab.id) !== placeOf(tab)) {
      broadcast({ type: ToBroker.TAB_UPDATED, tab: tabInfo(tab) });
    }
  }
}

export function tabCreated(tab) {
  if (tab.id < 0) return;
  broadcast({ type: ToBroker.TAB_CREATED, tab: tabInfo(tab) });
  windowChanged(tab.windowId);
}

/**
 * webNavigation.onCreatedNavigationTarget: a page opened a tab (window.open, a link or form with a
 * target, noopener or not), reported again with its opener; a broker gives it an owner only while
 * it has none. chrome.tabs' own openerTabId is not taken: Chromium sets it for tabs the person
 * opens from the tab strip while another tab is in front, which that tab's page did not open.
 */
export async function navigationTargetCreated({ sourceTabId, tabId }) {
  if (!(tabId >= 0) || !(sourceTabId >= 0) || sourceTabId === tabId) return;
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (!tab) return;
  broadcast({ type: ToBroker.TAB_CREATED, tab: tabInfo(tab), openerTabId: sourceTabId });
  bornOf(tab, sourceTabId);
}

export function tabUpdated(tabId, change, tab) {
  if (change.url !== undefined && !isScriptable(change.url)) setTools(tabId, []);
  if (change.url !== undefined || change.title !== undefined || change.status !== undefined) {
    broadcast({ type: ToBroker.TAB_UPDATED, tab: tabInfo(tab) });
  }
  // Pinning moves the tab to the pinned ones at the left, and the others along.
  if (change.pinned !== undefined) windowChanged(tab.windowId);
  // A new document has no tools until its bridge reports one: the previous page's go as soon as
  // it is replaced, and a page that loaded without a bridge (an error page, a restricted site)
  // never has any. A tab without tools (most of them) has nothing to clear: its loads cost the
  // worker nothing more.
  if (change.status !== undefined && toolsOf(tabId).length) refreshTools(tabId);
}

export function tabRemoved(tabId, { windowId, isWindowClosing } = {}) {
  forgetTools(tabId);
  forgetOwner(tabId);
  newTabGone(tabId);
  firstPageGone(tabId);
  places.delete(tabId);
  broadcast({ type: ToBroker.TAB_CLOSED, tabId });
  if (!isWindowClosing) windowChanged(windowId);
}

/** chrome.tabs.onMoved, onAttached and onDetached: a tab changed place, and its neighbours with it. */
export function tabMoved(tabId, move) {
  for (const windowId of new Set([move.windowId, move.newWindowId, move.oldWindowId])) windowChanged(windowId);
}

export async function tabReplaced(addedId, removedId) {
  forgetTools(removedId);
  broadcast({ type: ToBroker.TAB_CLOSED, tabId: removedId });
  const tab = await chrome.tabs.get(addedId).catch(() => null);
  if (tab) {
    await learnTools(addedId);
    broadcast({ type: ToBroker.TAB_CREATED, tab: tabInfo(tab) });
  }
}

export function tabActivated({ tabId }) {
  broadcast({ type: ToBroker.TAB_FOCUSED, tabId, tools: toolsOf(tabId) });
}

/**
 * Open the tab a broker's openTab asks for, as its session's, answering its `requestId`.
 * @param {import("../link/frames.js").OpenTabFrame} frame
 */
export async function openTab(link, frame) {
  const { focus } = frame;
  let tab;
  try {
    if (frame.newWindow) {
      // A window of the agent's own leaves the person's window in front.
      tab = (await chrome.windows.create({ url: frame.url, focused: false })).tabs[0];
    } else {
      const where = frame.windowId === null ? {} : { windowId: frame.windowId };
      tab = await chrome.tabs.create({ url: frame.url, active: focus, pinned: frame.pinned, ...where });
    }
  } catch (error) {
    // The protocol has no failure answer to openTab yet; a broker that accepts toolResult for
    // the requestId reports it at once, others let the request time out.
    link.send(
      reply(ToBroker.TOOL_RESULT, frame, {
        callId: frame.requestId,
        error: { code: "open_failed", message: `cannot open ${frame.url}: ${error.message}` },
      }),
    );
    return;
  }
  expectFirstPage(tab.id, frame.url);
  if (focus && !frame.newWindow) await chrome.windows.update(tab.windowId, { focused: true }).catch(() => {});
  try {
    await groupTab(link.port, frame.sessionId, tab.id);
    tab = await chrome.tabs.get(tab.id);
  } catch (error) {
    console.warn("browser-mcp: cannot group the tab", error);
  }
  link.send(reply(ToBroker.TAB_CREATED, frame, { requestId: frame.requestId, tab: tabInfo(tab) }));
}

/**
 * Bring the tab a broker's focusTab names to the front, answering with tabFocused.
 * @param {import("../link/frames.js").TabFrame} frame
 */
export async function focusTab(link, frame) {
  let tab;
  try {
    tab = await chrome.tabs.update(frame.tabId, { active: true });
  } catch {
    link.send({ type: ToBroker.TAB_CLOSED, tabId: frame.tabId });
    return;
  }
  await chrome.windows.update(tab.windowId, { focused: true }).catch(() => {});
  link.send(reply(ToBroker.TAB_FOCUSED, frame, { tabId: tab.id, tools: toolsOf(tab.id) }));
}

/**
 * How long a closing tab may take before its page is taken to hold it. Chromium 156 (headless,
 * tried) settles chrome.tabs.remove within milliseconds for a page that lets go, even one with a
 * beforeunload handler but no user activation (no dialog then); while the page's beforeunload
 * dialog is open it stays pending, after "Stay" for good, after "Leave" it resolves as the tab goes.
 */
const CLOSE_HELD_AFTER_MS = 1000;

/**
 * Close the tab a broker's closeTab names, answering the request (`requestId`): `tabClosed` once
 * it is gone (onRemoved also tells every broker), or `error` `close_held` while its page asks the
 * person whether to leave; if they then leave, onRemoved reports it as for any tab.
 * @param {import("../link/frames.js").TabFrame} frame
 */
export async function closeTab(link, frame) {
  const removal = chrome.tabs.remove(frame.tabId).then(
    () => "closed",
    () => "gone",
  );
  let timer;
  const waited = new Promise((resolve) => {
    timer = setTimeout(() => resolve("held"), CLOSE_HELD_AFTER_MS);
  });
  const outcome = await Promise.race([removal, waited]);
  clearTimeout(timer);
  const held = outcome === "held" && (await tabExists(frame.tabId));
  if (frame.requestId === undefined) {
    // A broker of the original protocol: only a tab already gone needs saying (onRemoved says the rest).
    if (outcome === "gone") link.send({ type: ToBroker.TAB_CLOSED, tabId: frame.tabId });
    return;
  }
  // A tab gone already (the broker's list was behind) counts as closed: it is not there.
  const answer = held
    ? {
        type: ToBroker.ERROR,
        code: CloseRefusal.CLOSE_HELD,
        message:
          "its page asks whether to leave it (a beforeunload dialog): the tab stays open unless the person" +
          " chooses to leave (or a client acting in the tab answers it with browser_handle_dialog)",
      }
    : { type: ToBroker.TAB_CLOSED, tabId: frame.tabId };
  const { type, ...fields } = answer;
  link.send(reply(type, frame, { ...fields, requestId: frame.requestId }));
}

function tabExists(tabId) {
  return chrome.tabs.get(tabId).then(
    () => true,
    () => false,
  );
}
