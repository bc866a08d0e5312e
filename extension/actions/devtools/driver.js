// The DevTools page driver: the built-in tools over chrome.debugger (the DevTools protocol), as
// Chromium offers it to extensions. Each tool's module beside this one does its part through
// debugger.js, in a function named after the tool (contract.js), which this finds there; the
// driver's own members it gathers by hand, under the names the contract gives every driver.

import { toolMembers } from "../contract.js";
import { toolsOf } from "../tools.js";
import {
  attach,
  debuggerDetached,
  debuggerEvent,
  ownTab,
  releaseSessions,
  releaseTab,
  send,
  serialized,
  tabGone,
} from "./debugger.js";
import * as dialogs from "../dialogs.js";
import { watchingDownloads } from "../downloads.js";
import { elementFor, releaseHandles } from "./elements.js";
import * as evaluate from "./evaluate.js";
import * as fileChooser from "./file_chooser.js";
import * as click from "./click.js";
import * as captureFiles from "./capture_files.js";
import * as input from "./input.js";
import * as keyboard from "./keyboard.js";
import * as navigation from "./navigation.js";
import * as networkRoutes from "./network_routes.js";
import * as pageEffects from "./page_effects.js";
import * as pointer from "./pointer.js";
import { pageReport } from "./report.js";
import * as screenshot from "./screenshot.js";
import * as storage from "../storage.js";
import * as telemetry from "./telemetry.js";
import * as testing from "./testing.js";
import * as wait from "./wait.js";
import * as video from "./video.js";
import * as recording from "./recording.js";
import * as annotate from "./annotate.js";
import * as dom from "./dom.js";
import * as appTelemetry from "./app_telemetry.js";
import * as personScripts from "./person_scripts.js";

const NAME = "devtools";
/** The modules that hold its tools' members. */
const TOOL_MODULES = [
  click,
  dialogs,
  evaluate,
  fileChooser,
  input,
  keyboard,
  navigation,
  networkRoutes,
  pageEffects,
  pointer,
  screenshot,
  storage,
  telemetry,
  wait,
  captureFiles,
  testing,
  video,
  annotate,
  recording,
  dom,
  appTelemetry,
  personScripts,
];

/** @type {import("../contract.js").PageDriver} */
export const devtoolsDriver = Object.freeze({
  name: NAME,
  actions: toolsOf(NAME),
  browser: "Chromium",
  /** Hear the browser's events for the tabs the tools act on (the worker's first turn). */
  listen() {
    chrome.debugger.onEvent.addListener(debuggerEvent);
    chrome.debugger.onDetach.addListener(debuggerDetached);
  },
  tabGone,
  releaseTab,
  releaseSessions,
  prepare: attach,
  ownTab,
  serialized,
  stopLoading: (tabId) => send(tabId, "Page.stopLoading"),
  afterAction: releaseHandles,
  /** Its input is trusted, as a person's: nothing to say of it. */
  inputNote: null,
  pageReport,
  waitForReady: navigation.waitForReady,
  withNavigationWatch: navigation.withNavigationWatch,
  watchingDownloads,
  elementFor,
  fileChooserLines: fileChooser.fileChooserLines,
  ...dialogs.dialogSeam,
  ...toolMembers(NAME, TOOL_MODULES),
});
