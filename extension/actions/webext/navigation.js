// The WebExtension driver's navigation: which document each tab shows (a counter that moves when
// its top frame commits a new one, heard from chrome.webNavigation), moving a tab between pages
// through chrome.tabs (navigate, back, forward, reload), waiting for a page to be ready, and
// browser_wait_for. Ready means as in the DevTools driver (load_wait.js).

import { ActionError, Code, sleep } from "../../base/errors.js";
import { COMMIT_WAIT_MS, waitUntilReady } from "../load_wait.js";
import { checkedUrl } from "../addresses.js";
import { waitWith } from "../waiting.js";
import { runIn, withAgent, withLoadedAgent } from "./scripts.js";

// How long an input's answer waits for the frames it sent elsewhere to show their new pages.
const FRAME_LOAD_WAIT_MS = 5_000;

/** tab id -> {document, waiters: Set<{match, finish}>} */
const tabs = new Map();

function stateOf(tabId) {
  let state = tabs.get(tabId);
  if (!state) {
    state = { document: 0, waiters: new Set() };
    tabs.set(tabId, state);
  }
  return state;
}

/** The document the tab shows, as a number that changes whenever a new one commits. */
export const documentOf = (tabId) => tabs.get(tabId)?.document ?? 0;

/**
 * A webNavigation event (`kind`: committed, loaded, completed, moved, failed, starting) of a tab,
 * or a download its page began (`download`).
 */
export function heard(kind, details) {
  const state = tabs.get(details.tabId);
  if (!state) return;
  if (kind === "committed" && details.frameId === 0) state.document += 1;
  for (const waiter of [...state.waiters]) if (waiter.match(kind, details)) waiter.finish({ ...details, kind });
}

/** The tab closed: what was kept of it goes, and whoever waited for it stops waiting. */
export function forgetTab(tabId) {
  const state = tabs.get(tabId);
  tabs.delete(tabId);
  for (const waiter of [...(state?.waiters ?? [])]) waiter.finish(null);
}

/** The details of the tab's next event `match(kind, details)` takes, or null after `timeoutMs`. */
function nextEvent(tabId, match, timeoutMs) {
  const state = stateOf(tabId);
  let waiter;
  const promise = new Promise((resolve) => {
    const timer = setTimeout(() => waiter.finish(null), timeoutMs);
    waiter = {
      match,
      finish(value) {
        clearTimeout(timer);
        state.waiters.delete(waiter);
        resolve(value);
      },
    };
    state.waiters.add(waiter);
  });
  promise.cancel = () => waiter.finish(null);
  return promise;
}

const topFrame = (kinds) => (kind, details) => details.frameId === 0 && kinds.includes(kind);

async function readyState(tabId) {
  try {
    const loaded = await withLoadedAgent(tabId, 0, "readyState");
    return loaded ? loaded.value : await runIn(tabId, 0, () => document.readyState);
  } catch (error) {
    if (/closed/.test(error.message)) throw error;
    return "loading"; // between two documents
  }
}

/** Wait until the tab's document is parsed, then for its load event (load_wait.js). */
export function waitForReady(tabId) {
  return waitUntilReady(
    () => readyState(tabId),
    (ms) => nextEvent(tabId, topFrame(["loaded", "completed"]), ms),
  );
}

/** Run `start()`, which makes the tab navigate, and wait until the new page is ready. */
async function navigation(tabId, start) {
  // A load that another replaced reports its abort (NS_BINDING_ABORTED), which is no failure.
  const arrived = nextEvent(
    tabId,
    (kind, details) =>
      topFrame(["committed", "moved"])(kind, details) ||
      (topFrame(["failed"])(kind, details) && !/2152398850|ABORT/i.test(String(details.error))),
    COMMIT_WAIT_MS,
  );
  try {
    await start();
  } catch (error) {
    arrived.cancel();
    throw new ActionError(Code.ACTION_FAILED, error.message);
  }
  const details = await arrived;
  if (!details) throw new ActionError(Code.TIMEOUT, `the page did not navigate within ${COMMIT_WAIT_MS / 1000} s`);
  if (details.error) throw new ActionError(Code.ACTION_FAILED, `cannot open ${details.url}: ${details.error}`);
  await waitForReady(tabId);
}

function openable(url) {
  const href = checkedUrl(url);
  if (href.startsWith("data:")) {
    throw new ActionError(Code.NOT_SUPPORTED, "Firefox does not let an extension open data: addresses in a tab");
  }
  return href;
}

/** browser_navigate {url} */
export async function navigate(tabId, args) {
  const url = openable(args.url);
  await navigation(tabId, () => chrome.tabs.update(tabId, { url }));
}

async function historyStep(tabId, step) {
  const length = await runIn(tabId, 0, () => history.length).catch(() => 2);
  if (length < 2) {
    throw new ActionError(Code.ACTION_FAILED, `this tab has no ${step < 0 ? "previous" : "next"} page in its history`);
  }
  await navigation(tabId, () => (step < 0 ? chrome.tabs.goBack(tabId) : chrome.tabs.goForward(tabId)));
}

/** browser_navigate_back */
export const navigateBack = (tabId) => historyStep(tabId, -1);

/** browser_navigate_forward */
export const navigateForward = (tabId) => historyStep(tabId, 1);

/** browser_reload */
export const reload = (tabId) => navigation(tabId, () => chrome.tabs.reload(tabId));

/**
 * The frames of the tab that begin loading another page while `listening()`, until each has its
 * new document parsed or failed: `loaded()` waits for that, `FRAME_LOAD_WAIT_MS` at most.
 */
function watchFrameLoads(tabId, listening) {
  const loading = new Set();
  let allLoaded = null;
  const events = nextEvent(
    tabId,
    (kind, { frameId }) => {
      if (frameId === 0) return false;
      if (kind === "starting" && listening()) loading.add(frameId);
      else if (["loaded", "completed", "failed"].includes(kind) && loading.delete(frameId) && !loading.size)
        allLoaded?.();
      return false;
    },
    COMMIT_WAIT_MS + FRAME_LOAD_WAIT_MS,
  );
  return {
    async loaded() {
      if (loading.size)
        await Promise.race([new Promise((resolve) => (allLoaded = resolve)), sleep(FRAME_LOAD_WAIT_MS)]);
      events.cancel();
    },
    stop: () => events.cancel(),
  };
}

/**
 * Run `act()`, some input to the page, and if that set off a navigation of the tab (a link, a
 * form, a script), wait for the new page to be ready; or, for a while, for the new pages of the
 * frames it sent elsewhere.
 */
export async function withNavigationWatch(tabId, act) {
  const document = documentOf(tabId);
  const starting = nextEvent(tabId, topFrame(["starting", "moved"]), COMMIT_WAIT_MS);
  let listening = true;
  const frames = watchFrameLoads(tabId, () => listening);
  try {
    await act();
    // The page has handled the input once it answers one more script, and told of the navigation
    // it set off before that answer (a link's or a form's starts as the click is handled): the
    // start is heard by then, with no time to wait for on top.
    await readyState(tabId);
  } catch (error) {
    frames.stop();
    throw error;
  } finally {
    listening = false;
    starting.cancel();
  }
  const started = await starting;
  if (!started && documentOf(tabId) === document) {
    await frames.loaded();
    return;
  }
  frames.stop();
  if (started?.kind !== "moved") {
    // A load that becomes a download neither commits nor fails: the download is its end.
    const became = (kind, details) =>
      kind === "download" && Boolean(started) && [details.url, details.finalUrl].includes(started.url);
    const ended = await nextEvent(
      tabId,
      (kind, details) => topFrame(["committed", "failed"])(kind, details) || became(kind, details),
      COMMIT_WAIT_MS,
    );
    if (ended?.kind === "download") return;
  }
  await waitForReady(tabId);
}

/** browser_wait_for {time?, text?, textGone?}, the page's text read through scripting. */
export const waitFor = waitWith((tabId, needle) =>
  withAgent(tabId, 0, "showsText", null, needle).then(
    ({ value }) => value,
    () => false,
  ),
);
