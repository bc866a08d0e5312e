// Downloads a tab's page starts: which action started each, and how it ended (name, where the
// browser saved it, size, finished or failed), for that action's result and for
// browser_network_requests. The browser saves them where it saves the person's downloads: nothing
// here changes where, or asks.
//
// chrome.downloads knows the file but not the tab; the DevTools protocol knows the tab
// (Page.downloadWillBegin, on a tab the tools are attached to) but not the file. A download is the
// tab's when the protocol said the tab began one at its address, or, failing that, when it was
// created while an action ran in the tab and names the tab's page as its referrer.

import { mainFrameOf, onTabEvent, onTabForgotten, send, utilityWorld } from "./devtools/debugger.js";
import { sleep } from "../base/errors.js";

// How long an action's result waits for its downloads to end; a longer one is reported under way.
const FINISH_WAIT_MS = 5_000;
// How long it waits for a download the page asked for (a `download` link) to begin: the server's
// answer comes after the click has been handled.
const BEGIN_WAIT_MS = 5_000;
const MAX_KEPT = 100;
// A download created this long before a tab said it began one at its address is another's.
const RECENT_MS = 10_000;

/**
 * tab id -> {tabId, watching: number of actions running, loading: pages requested meanwhile
 * (request id -> url) that may yet turn out downloads, begun: [{url, name}], items: [download ids],
 * arrived: called when one is kept or a page loads}
 */
const tabs = new Map();
/** Downloads created before any tab said it began them (the two events come in either order). */
const unplaced = [];
/** download id -> the name the page gave it (the file saved may be named otherwise: "report (1).csv"). */
const names = new Map();
/** Called with (tab id, download item) as a tab's page is found to have begun a download. */
const beganListeners = new Set();

/** Hear each download a tab's page began, as it is placed with its tab. */
export function onDownloadBegan(listener) {
  beganListeners.add(listener);
}

function stateOf(tabId) {
  let state = tabs.get(tabId);
  if (!state) {
    state = { tabId, watching: 0, loading: new Map(), begun: [], items: [], arrived: null };
    tabs.set(tabId, state);
  }
  return state;
}

onTabEvent((tabId, method, params) => {
  const state = tabs.get(tabId);
  switch (method) {
    // A page the tab loads during an action may turn out to be a download: the action waits to
    // see it become a page, fail, or begin a download.
    case "Network.requestWillBeSent":
      if (state?.watching && params.type === "Document" && params.frameId === mainFrameOf(tabId)) {
        state.loading.set(params.requestId, params.request.url);
      }
      break;
    case "Page.frameNavigated":
      // A new page: whatever the tab was loading before was that page, or was left for it.
      if (!params.frame.parentId) state?.loading.clear();
      break;
    case "Network.loadingFailed":
      // A download cancels the page's request: only another failure ends the wait.
      if (!params.canceled) state?.loading.delete(params.requestId);
      break;
    case "Page.downloadWillBegin":
      downloadBegan(stateOf(tabId), params);
      break;
  }
});

function downloadBegan(state, { url, suggestedFilename }) {
  for (const [id, loading] of state.loading) if (loading === url) state.loading.delete(id);
  const created = unplaced.findIndex(
    (item) => (item.url === url || item.finalUrl === url) && Date.now() - Date.parse(item.startTime) < RECENT_MS,
  );
  if (created >= 0) {
    keep(state, unplaced.splice(created, 1)[0], suggestedFilename);
    return;
  }
  state.begun.push({ url, name: suggestedFilename });
  state.begun.splice(0, state.begun.length - MAX_KEPT);
}

onTabForgotten((tabId, closed) => {
  if (closed) forgetDownloadsOf(tabId);
});

/** The tab closed: its downloads are no one's to report any more (the browser keeps its own list). */
export function forgetDownloadsOf(tabId) {
  for (const id of tabs.get(tabId)?.items ?? []) names.delete(id);
  tabs.delete(tabId);
}

/** chrome.downloads.onCreated: the tab whose page began it keeps it. */
export async function downloadCreated(item) {
  for (const state of tabs.values()) {
    const begun = state.begun.findIndex((entry) => entry.url === item.url || entry.url === item.finalUrl);
    if (begun >= 0) {
      keep(state, item, state.begun.splice(begun, 1)[0].name);
      return;
    }
  }
  for (const [tabId, state] of tabs) {
    if (!state.watching) continue;
    const tab = await chrome.tabs.get(tabId).catch(() => null);
    if (tab && item.referrer && item.referrer === tab.url) {
      keep(state, item);
      return;
    }
  }
  unplaced.push(item);
  unplaced.splice(0, unplaced.length - MAX_KEPT);
}

function keep(state, item, name) {
  state.items.push(item.id);
  state.arrived?.();
  for (const gone of state.items.splice(0, state.items.length - MAX_KEPT)) names.delete(gone);
  if (name) names.set(item.id, name);
  for (const listener of beganListeners) listener(state.tabId, item);
}

/**
 * Run `task()`, an action in `tabId`; its result, and the downloads its page began meanwhile,
 * waited for (a while) until each finished or failed. `clicked`: the action clicked (or pressed a
 * key on) an element, which may have been a `download` link: that starts a download with no sign
 * in the tab until the server answers. `downloadLinkFocused(tabId)` says whether it was; a driver
 * without the DevTools protocol gives its own.
 */
export async function watchingDownloads(tabId, task, { clicked = false, downloadLinkFocused = onDownloadLink } = {}) {
  const state = stateOf(tabId);
  const before = new Set(state.items);
  state.watching += 1;
  try {
    const result = await task();
    const started = () => state.items.some((id) => !before.has(id));
    const expected = clicked && (await downloadLinkFocused(tabId));
    const deadline = Date.now() + BEGIN_WAIT_MS;
    while ((state.loading.size || (expected && !started())) && Date.now() < deadline) {
      await new Promise((resolve) => {
        state.arrived = resolve;
        setTimeout(resolve, Math.min(deadline - Date.now(), 100));
      });
    }
    state.loading.clear();
    const ids = state.items.filter((id) => !before.has(id));
    return { result, downloads: ids.length ? await finished(ids) : [] };
  } finally {
    state.watching -= 1;
    state.arrived = null;
  }
}

/** Whether the element in focus, which a click leaves on the link it clicked, is a `download` link. */
async function onDownloadLink(tabId) {
  try {
    const { result } = await send(tabId, "Runtime.evaluate", {
      expression: "Boolean(document.activeElement?.closest?.('a[download]'))",
      contextId: await utilityWorld(tabId),
      returnByValue: true,
    });
    return result.value === true;
  } catch {
    return false; // a page gone meanwhile began no download worth waiting for
  }
}

async function finished(ids) {
  const deadline = Date.now() + FINISH_WAIT_MS;
  for (;;) {
    const items = (await Promise.all(ids.map((id) => chrome.downloads.search({ id })))).flat();
    if (items.every((item) => item.state !== "in_progress") || Date.now() > deadline) return items;
    await sleep(100);
  }
}

/** A download as the results say it: its name, how it ended, its size and where it was saved. */
export function describeDownload(item) {
  const name =
    names.get(item.id) ||
    (item.filename ? item.filename.split(/[\\/]/).pop() : new URL(item.finalUrl || item.url).pathname);
  const where = item.filename ? `, saved to ${item.filename}` : "";
  if (item.state === "complete") return `- ${name}: finished, ${item.fileSize} bytes${where} (from ${item.url})`;
  if (item.state === "interrupted") return `- ${name}: failed (${item.error ?? "interrupted"}) (from ${item.url})`;
  const total = item.totalBytes > 0 ? ` of ${item.totalBytes}` : "";
  return `- ${name}: still downloading, ${item.bytesReceived}${total} bytes so far${where} (from ${item.url})`;
}

/** The tab's downloads, as browser_network_requests lists them after the requests. */
export async function downloadsOf(tabId) {
  const ids = tabs.get(tabId)?.items ?? [];
  if (!ids.length) return [];
  const items = (await Promise.all(ids.map((id) => chrome.downloads.search({ id })))).flat();
  return items.map(describeDownload);
}
