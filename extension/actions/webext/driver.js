// The WebExtension page driver, for browsers whose extensions have no DevTools protocol
// (Firefox): the built-in tools through chrome.scripting in the page and its frames (snapshot,
// refs, evaluate), chrome.tabs (navigation, screenshots), chrome.webNavigation (which document a
// tab shows, when a page is ready) and chrome.webRequest (network; the dialogs and console its page
// hooks hear, webext_dialogs.js). Input there is synthetic, made by page-side functions: each
// input's answer says so. What it cannot do is answered with not_supported, naming Firefox;
// nothing is pretended.

import { dialogSeam } from "../dialogs.js";
import { BROWSER_ACTIONS } from "../../base/protocol.js";
import { ActionError, Code } from "../../base/errors.js";
import { forgetDownloadsOf, onDownloadBegan, watchingDownloads } from "../downloads.js";
import { evaluate, takeScreenshot } from "./capture.js";
import {
  click,
  drag,
  fileChooserLines,
  fillForm,
  forgetChooser,
  hover,
  mouseClickXy,
  mouseDragXy,
  mouseMoveXy,
  pressKey,
  selectOption,
  type,
  uploadFiles,
} from "./input.js";
import {
  forgetTab,
  heard,
  navigate,
  navigateBack,
  navigateForward,
  reload,
  waitFor,
  waitForReady,
  withNavigationWatch,
} from "./navigation.js";
import { forgetFrames, locate, pageReport } from "./snapshot.js";
import { saveNumbers } from "../ref_numbers.js";
import { runIn } from "./scripts.js";
import { forgetTabDialogs, hookTab, listenForDialogs, unhookTab } from "./dialogs.js";
import { consoleMessages, forgetRequests, listenForRequests, networkRequests, watchRequests } from "./telemetry.js";

/** The browser actions this driver does not carry out yet (the mouse button pressed or released
 * alone, the wheel): it answers them not_supported, naming Firefox. */
const REFUSED = new Set(["mouse_down", "mouse_up", "mouse_wheel"]);
/** What this driver carries out. */
const ACTIONS = BROWSER_ACTIONS.filter((action) => !REFUSED.has(action));

/** tab id -> {queue, owner} */
const tabs = new Map();

function stateOf(tabId) {
  let state = tabs.get(tabId);
  if (!state) {
    state = { queue: Promise.resolve(), owner: null };
    tabs.set(tabId, state);
  }
  return state;
}

const unsupported = (what) => new ActionError(Code.NOT_SUPPORTED, `Firefox's extension cannot ${what} yet`);
const refuse = (what) => () => Promise.reject(unsupported(what));

function tabGone(tabId) {
  tabs.delete(tabId);
  forgetTab(tabId);
  forgetFrames(tabId);
  forgetRequests(tabId);
  forgetChooser(tabId);
  forgetTabDialogs(tabId);
  forgetDownloadsOf(tabId);
  saveNumbers(tabId, null);
}

/** Whether the element in focus, where a click leaves it, is a `download` link (no sign in the tab
 * comes of one until the server answers). */
async function downloadLinkFocused(tabId) {
  const focused = () => Boolean(document.activeElement?.closest?.("a[download]"));
  return (await runIn(tabId, 0, focused).catch(() => false)) === true;
}

export const webExtensionDriver = Object.freeze({
  name: "webextension",
  actions: ACTIONS,
  listen() {
    const events = {
      onBeforeNavigate: "starting",
      onCommitted: "committed",
      onDOMContentLoaded: "loaded",
      onCompleted: "completed",
      onHistoryStateUpdated: "moved",
      onReferenceFragmentUpdated: "moved",
      onErrorOccurred: "failed",
    };
    for (const [event, kind] of Object.entries(events)) {
      chrome.webNavigation[event].addListener((details) => heard(kind, details));
    }
    // A page load that turned into a download ends there: Firefox tells webNavigation no more of it.
    onDownloadBegan((tabId, item) => heard("download", { tabId, frameId: 0, url: item.url, finalUrl: item.finalUrl }));
    // A page's file chooser goes with it.
    chrome.webNavigation.onCommitted.addListener((details) => details.frameId === 0 && forgetChooser(details.tabId));
    listenForRequests();
    listenForDialogs();
  },
  tabGone,
  async releaseTab(tabId) {
    const state = tabs.get(tabId);
    if (state) state.owner = null;
    unhookTab(tabId);
  },
  async releaseSessions(port, ended) {
    const prefix = `${port}/`;
    for (const [tabId, state] of tabs) {
      if (!state.owner?.startsWith(prefix) || !ended(state.owner.slice(prefix.length))) continue;
      state.owner = null;
      unhookTab(tabId);
    }
  },
  /** Nothing to attach: the tab's requests are kept from its first action on. */
  async prepare(tabId) {
    watchRequests(tabId);
  },
  ownTab(tabId, owner) {
    stateOf(tabId).owner = owner;
    watchRequests(tabId);
  },
  /** Each action in its turn, the page hooks put first in the frames that lack them. */
  serialized(tabId, task) {
    const state = stateOf(tabId);
    const run = state.queue.then(() => hookTab(tabId)).then(task, task);
    state.queue = run.catch(() => {});
    return run;
  },
  stopLoading: (tabId) => runIn(tabId, 0, () => window.stop()),
  afterAction: async () => {},
  inputNote: "- Input was synthetic (isTrusted false): a page that checks isTrusted ignores it",
  refusal: (action) => (ACTIONS.includes(action) ? null : unsupported(`do browser_${action}`)),
  pageReport,
  waitForReady,
  withNavigationWatch,
  watchingDownloads: (tabId, task, { clicked = false } = {}) =>
    watchingDownloads(tabId, task, { clicked, downloadLinkFocused }),
  /** The element `target` names, checked to be there; a snapshot's root. */
  async elementFor(tabId, target) {
    locate(tabId, target);
  },
  waitFor,
  navigate,
  navigateBack,
  navigateForward,
  reload,
  takeScreenshot,
  networkRequests,
  evaluate,
  consoleMessages,
  click,
  hover,
  type,
  fillForm,
  selectOption,
  pressKey,
  drag,
  mouseClickXy,
  mouseMoveXy,
  mouseDragXy,
  mouseDown: refuse("press the mouse button"),
  mouseUp: refuse("release the mouse button"),
  mouseWheel: refuse("scroll the mouse wheel"),
  uploadFiles,
  fileChooserLines,
  ...dialogSeam,
});
