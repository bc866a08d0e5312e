// The WebExtension page driver, for browsers whose extensions have no DevTools protocol
// (Firefox): the built-in tools through chrome.scripting in the page and its frames (snapshot,
// refs, evaluate), chrome.tabs (navigation, screenshots), chrome.webNavigation (which document a
// tab shows, when a page is ready) and chrome.webRequest (network; the dialogs and console its page
// hooks hear, dialogs.js). Input there is synthetic, made by page-side functions: each input's
// answer says so. Each tool's member is the function named after it (contract.js) in one of the
// modules beside this one; a tool the declaration (tools.js) does not give it has none, and the
// actions layer answers it not_supported, naming Firefox: nothing is pretended.

import { toolMembers } from "../contract.js";
import { toolsOf } from "../tools.js";
import * as dialogs from "../dialogs.js";
import { forgetDownloadsOf, onDownloadBegan, watchingDownloads } from "../downloads.js";
import * as capture from "./capture.js";
import * as input from "./input.js";
import * as navigation from "./navigation.js";
import * as networkRoutes from "./network_routes.js";
import * as pageEffects from "./page_effects.js";
import { forgetFrames, locate, pageReport } from "./snapshot.js";
import { saveNumbers } from "../ref_numbers.js";
import { runIn, withAgent } from "./scripts.js";
import { listenForAgents } from "./agent_port.js";
import { forgetTabDialogs, hookTab, listenForDialogs, unhookTab } from "./dialogs.js";
import * as telemetry from "./telemetry.js";
import * as testing from "./testing.js";
import * as storage from "../storage.js";
import * as video from "./video.js";
import * as recording from "./recording.js";
import * as annotate from "./annotate.js";
import * as dom from "./dom.js";
import * as appTelemetry from "./app_telemetry.js";
import { sessionOf } from "../../base/owner_key.js";
import * as personScripts from "./person_scripts.js";

const NAME = "webextension";
/** The modules that hold its tools' members. */
const TOOL_MODULES = [
  capture,
  dialogs,
  input,
  navigation,
  telemetry,
  networkRoutes,
  pageEffects,
  storage,
  testing,
  annotate,
  recording,
  dom,
  appTelemetry,
  video,
  personScripts,
];

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

function tabGone(tabId) {
  tabs.delete(tabId);
  navigation.forgetTab(tabId);
  forgetFrames(tabId);
  telemetry.forgetRequests(tabId);
  input.forgetChooser(tabId);
  forgetTabDialogs(tabId);
  forgetDownloadsOf(tabId);
  saveNumbers(tabId, null);
}

/** Whether the element in focus, where a click leaves it, is a `download` link (no sign in the tab
 * comes of one until the server answers). */
function downloadLinkFocused(tabId) {
  return withAgent(tabId, 0, "downloadLinkFocused").then(
    ({ value }) => value === true,
    () => false,
  );
}

/** @type {import("../contract.js").PageDriver} */
export const webExtensionDriver = Object.freeze({
  name: NAME,
  actions: toolsOf(NAME),
  browser: "Firefox",
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
      chrome.webNavigation[event].addListener((details) => navigation.heard(kind, details));
    }
    // A page load that turned into a download ends there: Firefox tells webNavigation no more of it.
    onDownloadBegan((tabId, item) =>
      navigation.heard("download", { tabId, frameId: 0, url: item.url, finalUrl: item.finalUrl }),
    );
    // A page's file chooser goes with it.
    chrome.webNavigation.onCommitted.addListener(
      (details) => details.frameId === 0 && input.forgetChooser(details.tabId),
    );
    telemetry.listenForRequests();
    listenForDialogs();
    listenForAgents();
  },
  tabGone,
  async releaseTab(tabId) {
    const state = tabs.get(tabId);
    if (state) state.owner = null;
    unhookTab(tabId);
  },
  async releaseSessions(port, ended) {
    for (const [tabId, state] of tabs) {
      const sessionId = sessionOf(state.owner, port);
      if (sessionId === null || !ended(sessionId)) continue;
      state.owner = null;
      unhookTab(tabId);
    }
  },
  /** Nothing to attach: the tab's requests are kept from its first action on. */
  async prepare(tabId) {
    telemetry.watchRequests(tabId);
  },
  ownTab(tabId, owner) {
    stateOf(tabId).owner = owner;
    telemetry.watchRequests(tabId);
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
  pageReport,
  waitForReady: navigation.waitForReady,
  withNavigationWatch: navigation.withNavigationWatch,
  watchingDownloads: (tabId, task, { clicked = false } = {}) =>
    watchingDownloads(tabId, task, { clicked, downloadLinkFocused }),
  /** The element `target` names, checked to be there; a snapshot's root. */
  async elementFor(tabId, target) {
    locate(tabId, target);
  },
  fileChooserLines: input.fileChooserLines,
  ...dialogs.dialogSeam,
  ...toolMembers(NAME, TOOL_MODULES),
});
