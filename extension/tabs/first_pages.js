// Tabs a broker opened on an address, until the first document of that address commits. A new tab
// begins on a blank document, and Firefox announces it (and lets scripts run in it) before its
// navigation has even started, so a client's first action there (a snapshot, most often) would
// read the blank page and answer as if the address showed nothing. An action in such a tab waits
// for the commit, or its failure, for FIRST_COMMIT_MS at most; the page's load is the action's to
// wait for, as after any navigation. A question about its page's tools (discoverTools) waits besides
// for that first page to be parsed, when its scripts have declared them, PARSED_MS after the commit
// at most: one deadline for the tab, however many ask. Past it, or in any other tab, a question
// answers at once with what the page has declared so far: a page that never finishes loading
// would otherwise hold every question about it.

const FIRST_COMMIT_MS = 15_000;

/** tab id -> {promise, settle, timer} while its first page is on its way. */
const coming = new Map();

const isBlank = (url) => !url || url === "about:blank";

// How long, once its first page has come, a question about a just-opened tab's tools waits for the
// page to be parsed.
const PARSED_MS = 5_000;

/** tab id -> until when a question about its tools waits for its first page's parse. */
const parseDeadlines = new Map();

/** A broker just opened `tabId` on `url`: its actions wait for that page. */
export function expectFirstPage(tabId, url) {
  if (isBlank(url) || coming.has(tabId)) return;
  // Tabs nobody asked about leave their deadline behind: dropped here once past, so the map holds
  // only tabs opened moments ago.
  const now = Date.now();
  for (const [tab, deadline] of parseDeadlines) if (deadline <= now) parseDeadlines.delete(tab);
  parseDeadlines.set(tabId, now + FIRST_COMMIT_MS + PARSED_MS);
  let settle;
  const promise = new Promise((resolve) => (settle = resolve));
  const timer = setTimeout(() => arrived(tabId), FIRST_COMMIT_MS);
  coming.set(tabId, { promise, settle, timer });
  // The commit may have come before this was called: asked now, it is not missed.
  chrome.webNavigation
    .getFrame({ tabId, frameId: 0 })
    .then((frame) => frame && !isBlank(frame.url) && arrived(tabId))
    .catch(() => arrived(tabId));
}

function arrived(tabId) {
  const entry = coming.get(tabId);
  if (!entry) return;
  coming.delete(tabId);
  clearTimeout(entry.timer);
  if (parseDeadlines.has(tabId)) parseDeadlines.set(tabId, Date.now() + PARSED_MS);
  entry.settle();
}

/** webNavigation.onCommitted and onErrorOccurred: a top frame reached a page, or gave up on one. */
export function topFrameSettled({ tabId, frameId, url }) {
  if (frameId === 0 && !isBlank(url)) arrived(tabId);
}

/** chrome.tabs.onRemoved: nothing comes to a closed tab. */
export function firstPageGone(tabId) {
  arrived(tabId);
  parseDeadlines.delete(tabId);
}

/**
 * Wait for `tabId`'s first page if it is still coming, or until `signal` calls the action off;
 * true when there was something to wait for.
 */
export async function firstPageOf(tabId, signal) {
  const entry = coming.get(tabId);
  if (!entry) return false;
  let stop;
  const calledOff = new Promise((resolve) => {
    stop = resolve;
    signal?.addEventListener("abort", resolve, { once: true });
  });
  try {
    await Promise.race([entry.promise, calledOff]);
  } finally {
    signal?.removeEventListener("abort", stop);
  }
  return true;
}

/**
 * In a tab a broker has just opened, wait for its first page if it is still coming, then until
 * that page's top document has been parsed, until the tab's deadline at most: by then its scripts
 * have declared the tools they declare as the page loads, and asked for the extension's bridge.
 * In any other tab, nothing to wait for.
 */
export async function parsedPageOf(tabId) {
  if (!parseDeadlines.has(tabId)) return;
  await firstPageOf(tabId);
  const left = (parseDeadlines.get(tabId) ?? 0) - Date.now();
  if (!(left > 0)) {
    parseDeadlines.delete(tabId);
    return;
  }
  let parsed;
  const heard = new Promise((resolve) => (parsed = resolve));
  const loaded = (details) => details.tabId === tabId && details.frameId === 0 && parsed();
  chrome.webNavigation.onDOMContentLoaded.addListener(loaded);
  const timer = setTimeout(parsed, left);
  try {
    // Asked after listening, so a parse that ends in between is not missed.
    const readyState = () => document.readyState;
    chrome.scripting
      .executeScript({ target: { tabId, frameIds: [0] }, func: readyState, injectImmediately: true })
      .then(([state]) => state?.result !== "loading" && parsed())
      .catch(() => parsed()); // a page no script reaches (chrome://, a tab gone) declares no tools
    await heard;
    // Parsed, or out of time: the tab is no longer one just opened.
    parseDeadlines.delete(tabId);
  } finally {
    chrome.webNavigation.onDOMContentLoaded.removeListener(loaded);
    clearTimeout(timer);
  }
}
