// Moving a tab between pages (navigate, back, forward, reload) and waiting for a page to be ready
// to use (load_wait.js: its document parsed, and its load event for a while more). Also what every input action waits
// for: a navigation it set off (a link, a form, a script a moment later) to arrive before the
// result describes the page, and only then; no fixed pause.

import {
  OBJECT_GROUP,
  attach,
  documentOf,
  mainFrameOf,
  onTabEvent,
  onTabForgotten,
  send,
  utilityWorld,
  waitForEvent,
} from "./debugger.js";
import { ActionError, Code, sleep, withTimeout } from "../../base/errors.js";
import { eventMarker } from "./event_marker.js";
import { checkedUrl } from "../addresses.js";
import { COMMIT_WAIT_MS, waitUntilReady } from "../load_wait.js";

// How long the page may take to catch up with an input before the result is taken anyway.
const CATCH_UP_MS = 1_000;
// How long after an input whose handling set a timer a navigation may still start and be reported
// as the input's (a "Signing you in..." page that moves on after 300 ms). Chromium runs the timers
// of a tab in the background about once a second, so the window is a second long.
const SETTLE_MS = 1_000;
// How long the fetches an input started, and the pages it sent frames to, may take to end before
// the answer is given anyway.
const FETCH_SETTLE_MS = 5_000;

async function readyState(tabId) {
  try {
    const { result } = await send(tabId, "Runtime.evaluate", {
      expression: "document.readyState",
      returnByValue: true,
    });
    return result.value;
  } catch {
    return "loading"; // the old document's context is gone and the new one not there yet
  }
}

const isLoadStep = (method) => method === "Page.domContentEventFired" || method === "Page.loadEventFired";

/** Wait until the tab's document is parsed, then for its load event (load_wait.js). */
export function waitForReady(tabId) {
  return waitUntilReady(
    () => readyState(tabId),
    (ms) => waitForEvent(tabId, isLoadStep, ms),
  );
}

function isTopFrameNavigation(tabId) {
  return (method, params) =>
    (method === "Page.frameNavigated" && !params.frame.parentId) ||
    (method === "Page.navigatedWithinDocument" && params.frameId === mainFrameOf(tabId));
}

/**
 * Run `start()`, which makes the tab navigate, and wait until the new page is ready; `start()`
 * returns false when it knows no new page will come (a download).
 */
async function navigation(tabId, start) {
  const committed = waitForEvent(tabId, isTopFrameNavigation(tabId), COMMIT_WAIT_MS);
  let coming;
  try {
    coming = await start();
  } catch (error) {
    committed.cancel();
    throw error;
  }
  if (coming === false) {
    committed.cancel();
    return;
  }
  if (!(await committed))
    throw new ActionError(Code.TIMEOUT, `the page did not navigate within ${COMMIT_WAIT_MS / 1000} s`);
  await waitForReady(tabId);
}

/** browser_navigate {url} */
export async function navigate(tabId, args) {
  const url = checkedUrl(args.url);
  await navigation(tabId, async () => {
    const { errorText } = await send(tabId, "Page.navigate", { url });
    // A download or a 204 leaves the page as it was.
    if (errorText === "net::ERR_ABORTED") return false;
    if (errorText) throw new ActionError(Code.ACTION_FAILED, `cannot open ${url}: ${errorText}`);
    return true;
  });
}

async function history(tabId, step) {
  const { currentIndex, entries } = await send(tabId, "Page.getNavigationHistory");
  const entry = entries[currentIndex + step];
  if (!entry)
    throw new ActionError(Code.ACTION_FAILED, `this tab has no ${step < 0 ? "previous" : "next"} page in its history`);
  await navigation(tabId, () => send(tabId, "Page.navigateToHistoryEntry", { entryId: entry.id }));
}

/** browser_navigate_back */
export const navigateBack = (tabId) => history(tabId, -1);

/** browser_navigate_forward */
export const navigateForward = (tabId) => history(tabId, 1);

/** browser_reload */
export async function reload(tabId) {
  await navigation(tabId, () => send(tabId, "Page.reload", {}));
}

/**
 * Resolve once the page has run its tasks queued until now (a form's submission is one), and the
 * events it sent meanwhile (a fetch it started, a navigation it asked for) have been heard.
 */
async function pageCaughtUp(tabId) {
  const marker = eventMarker(tabId, CATCH_UP_MS);
  // A posted message, not a timer: Chromium holds back timers in a background tab, not messages;
  // in the tools' world, where the page cannot have replaced MessageChannel.
  const caughtUp = utilityWorld(tabId)
    .then((contextId) =>
      send(tabId, "Runtime.evaluate", {
        contextId,
        expression: `new Promise((done) => {
          const channel = new MessageChannel();
          channel.port1.onmessage = () => done((${marker.send})());
          channel.port2.postMessage(null);
        })`,
        awaitPromise: true,
        returnByValue: true,
      }),
    )
    .then(({ result }) => (result.value === true ? marker.heard : null));
  // A page that never gets there (a script in a loop, a document going away) is let be.
  await withTimeout(caughtUp, CATCH_UP_MS, "the page").catch(() => {});
  marker.heard.cancel();
}

/** tab id -> what an input's watch has seen: {breakpointId, timerSet, fetches, onFetchesDone}. */
const watches = new Map();
const FETCH_TYPES = new Set(["Fetch", "XHR"]);
// A frame of the page loading another page: the answer shows the new one, as it shows the tab's.
const isFrameLoad = (tabId, params) => params.type === "Document" && params.frameId !== mainFrameOf(tabId);

onTabEvent((tabId, method, params) => {
  const watch = watches.get(tabId);
  if (!watch) return;
  if (method === "Debugger.paused") {
    if (params.hitBreakpoints?.includes(watch.breakpointId)) watch.timerSet = true;
    // Nothing else may keep the page stopped: a `debugger` statement runs on, as with no debugger.
    send(tabId, "Debugger.resume").catch(() => {});
  } else if (
    method === "Network.requestWillBeSent" &&
    (FETCH_TYPES.has(params.type) || isFrameLoad(tabId, params)) &&
    watch.listening
  ) {
    watch.fetches.add(params.requestId);
  } else if (method === "Network.loadingFinished" || method === "Network.loadingFailed") {
    if (watch.fetches.delete(params.requestId) && !watch.fetches.size) watch.onFetchesDone?.();
  }
});

/** The tabs whose Debugger domain is on, since their debugger attached. */
const debuggerOn = new Set();
onTabForgotten((tabId) => debuggerOn.delete(tabId));

/**
 * Turn the Debugger domain on, once per attaching: turning it on makes Chromium send a message
 * for every script of the page, which on a page of many scripts takes longer than a click. Off a
 * watch it skips every pause, so the page's `debugger` statements and breakpoints stop nothing.
 */
async function debuggerDomain(tabId) {
  if (debuggerOn.has(tabId)) return;
  await send(tabId, "Debugger.enable");
  await send(tabId, "Debugger.setSkipAllPauses", { skip: true });
  debuggerOn.add(tabId);
}

/**
 * Watch what the page does in answer to an input that may lead it elsewhere a moment later: the
 * fetches it starts and the frames it sends elsewhere, and whether it sets a timer due within
 * SETTLE_MS. The debugger stops the page at each such setTimeout call, resumed at once, only until
 * stopTimers(): the page runs at full speed otherwise. (Chromium keeps its timer instrumentation
 * breakpoints from extensions; a breakpoint on the function is allowed.) end() forgets the watch.
 */
async function watchPage(tabId) {
  const watch = { breakpointId: null, timerSet: false, fetches: new Set(), listening: true, onFetchesDone: null };
  watches.set(tabId, watch);
  try {
    await debuggerDomain(tabId);
    const [{ result }] = await Promise.all([
      send(tabId, "Runtime.evaluate", { expression: "setTimeout", objectGroup: OBJECT_GROUP }),
      send(tabId, "Debugger.setSkipAllPauses", { skip: false }),
    ]);
    if (result.type === "function") {
      ({ breakpointId: watch.breakpointId } = await send(tabId, "Debugger.setBreakpointOnFunctionCall", {
        objectId: result.objectId,
        // Only timers due within SETTLE_MS: the condition sees setTimeout's own arguments.
        condition: `!(arguments[1] > ${SETTLE_MS})`,
      }));
    }
  } catch (error) {
    // Not watched, the input still goes; its answer then waits for no timer.
    console.warn("browser-mcp: cannot watch the page's timers", error);
  }
  return {
    /** Stop watching for timers and new fetches; whether the page set a timer. */
    async stopTimers() {
      watch.listening = false;
      // A page that went away took its breakpoint along.
      await Promise.all([
        watch.breakpointId && send(tabId, "Debugger.removeBreakpoint", { breakpointId: watch.breakpointId }),
        send(tabId, "Debugger.setSkipAllPauses", { skip: true }),
      ]).catch(() => {});
      return watch.timerSet;
    },
    /** Wait for the fetches the page started to end, for up to `ms`; whether there were any. */
    async fetchesDone(ms) {
      if (!watch.fetches.size) return false;
      await Promise.race([new Promise((resolve) => (watch.onFetchesDone = resolve)), sleep(ms)]);
      return true;
    },
    end() {
      if (watches.get(tabId) === watch) watches.delete(tabId);
    },
  };
}

/**
 * Run `act()`, some input to the page, let the page handle it, and if that set off a navigation
 * of the tab (a link, a submitted form, a script that changed location), wait for the new page to
 * be ready. Input that navigates nowhere returns as soon as the page has caught up with it: the
 * protocol tells of a navigation as the page asks for it, before the page answers the next call.
 */
export async function withNavigationWatch(tabId, act) {
  await attach(tabId); // the top frame's id is known from then on
  const document = documentOf(tabId);
  const frame = mainFrameOf(tabId);
  const starting = waitForEvent(
    tabId,
    (method, params) =>
      params.frameId === frame &&
      ((method === "Page.frameRequestedNavigation" && ["currentTab", undefined].includes(params.disposition)) ||
        method === "Page.frameStartedLoading"),
    COMMIT_WAIT_MS,
  );
  // Heard from the start too: a same-document navigation (a #link, pushState) arrives at once. A
  // load that ends without a new page (a download, a 204) stops instead.
  const navigated = isTopFrameNavigation(tabId);
  const arriving = waitForEvent(
    tabId,
    (method, params) =>
      navigated(method, params) || (method === "Page.frameStoppedLoading" && params.frameId === frame),
    COMMIT_WAIT_MS,
  );
  let started = null;
  starting.then((params) => (started = params));
  const stays = () => !started && documentOf(tabId) === document;
  let watch;
  try {
    watch = await watchPage(tabId);
    await act();
    await pageCaughtUp(tabId);
    const timerSet = await watch.stopTimers();
    // A fetch started in answer to the input may lead elsewhere once answered (a sign-in), and
    // a timer a moment later: the first gets FETCH_SETTLE_MS to end, the second SETTLE_MS to start.
    if (stays() && (await watch.fetchesDone(FETCH_SETTLE_MS))) await pageCaughtUp(tabId);
    if (stays() && timerSet) await Promise.race([starting, sleep(SETTLE_MS)]);
  } catch (error) {
    await watch?.stopTimers();
    arriving.cancel();
    throw error;
  } finally {
    watch?.end();
    starting.cancel();
  }
  if (!started && documentOf(tabId) === document) {
    arriving.cancel();
    return;
  }
  await arriving;
  await waitForReady(tabId);
}
