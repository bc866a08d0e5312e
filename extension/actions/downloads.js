// Downloads a tab's page starts: which action started each, and how it ended (name, where the
// browser saved it, size, finished or failed), for that action's result and for
// browser_network_requests. The browser saves them where it saves the person's downloads: nothing
// here changes where, or asks.
//
// chrome.downloads knows the file but not the tab; the DevTools protocol knows the tab
// (Page.downloadWillBegin, on a tab the tools are attached to) but not the file. A download is the
// tab's when the protocol said the tab began one at its address, or, failing that, when it was
// created while an action ran in the tab and names the tab's page as its referrer.

import { onTabEvent, onTabForgotten } from "./debugger.js";
import { sleep } from "./errors.js";

// How long an action's result waits for its downloads to end; a longer one is reported under way.
const FINISH_WAIT_MS = 5_000;
const MAX_KEPT = 100;

/** tab id -> {watching: number of actions running, begun: [{url, name}], items: [download ids]} */
const tabs = new Map();
/** Downloads created before any tab said it began them (the two events come in either order). */
const unplaced = [];

function stateOf(tabId) {
  let state = tabs.get(tabId);
  if (!state) {
    state = { watching: 0, begun: [], items: [] };
    tabs.set(tabId, state);
  }
  return state;
}

onTabEvent((tabId, method, params) => {
  if (method !== "Page.downloadWillBegin") return;
  const state = stateOf(tabId);
  const created = unplaced.findIndex((item) => item.url === params.url || item.finalUrl === params.url);
  if (created >= 0) {
    keep(state, unplaced.splice(created, 1)[0].id, params.suggestedFilename);
    return;
  }
  state.begun.push({ url: params.url, name: params.suggestedFilename });
  state.begun.splice(0, state.begun.length - MAX_KEPT);
});

onTabForgotten((tabId, closed) => {
  if (closed) tabs.delete(tabId);
});

/** chrome.downloads.onCreated: the tab whose page began it keeps it. */
export async function downloadCreated(item) {
  for (const state of tabs.values()) {
    const begun = state.begun.findIndex((entry) => entry.url === item.url || entry.url === item.finalUrl);
    if (begun >= 0) {
      keep(state, item.id, state.begun.splice(begun, 1)[0].name);
      return;
    }
  }
  for (const [tabId, state] of tabs) {
    if (!state.watching) continue;
    const tab = await chrome.tabs.get(tabId).catch(() => null);
    if (tab && item.referrer && item.referrer === tab.url) {
      keep(state, item.id);
      return;
    }
  }
  unplaced.push(item);
  unplaced.splice(0, unplaced.length - MAX_KEPT);
}

/** download id -> the name the page gave it (the file saved may be named otherwise: "report (1).csv"). */
const names = new Map();

function keep(state, id, name) {
  state.items.push(id);
  for (const gone of state.items.splice(0, state.items.length - MAX_KEPT)) names.delete(gone);
  if (name) names.set(id, name);
}

/**
 * Run `task()`, an action in `tabId`; its result, and the downloads its page began meanwhile,
 * waited for (a while) until each finished or failed.
 */
export async function watchingDownloads(tabId, task) {
  const state = stateOf(tabId);
  const before = new Set(state.items);
  state.watching += 1;
  try {
    const result = await task();
    const ids = state.items.filter((id) => !before.has(id));
    return { result, downloads: ids.length ? await finished(ids) : [] };
  } finally {
    state.watching -= 1;
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
