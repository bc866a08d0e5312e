// The DevTools page driver: the built-in tools over chrome.debugger (the DevTools protocol), as
// Chromium offers it to extensions. Each tool's module beside this one does its part through
// debugger.js; this gathers them under the names the actions layer (run.js) calls, the same names
// the WebExtension driver (webext_driver.js) answers to.

import { BROWSER_ACTIONS } from "../../base/protocol.js";
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
import { dialogSeam } from "../dialogs.js";
import { watchingDownloads } from "../downloads.js";
import { elementFor, releaseHandles } from "./elements.js";
import { evaluate } from "./evaluate.js";
import { fileChooserLines, uploadFiles } from "./file_chooser.js";
import { click } from "./click.js";
import { fillForm, hover, selectOption, type } from "./input.js";
import { pressKey } from "./keyboard.js";
import { navigate, navigateBack, navigateForward, reload, waitForReady, withNavigationWatch } from "./navigation.js";
import { drag, mouseClickXy, mouseDown, mouseDragXy, mouseMoveXy, mouseUp, mouseWheel } from "./pointer.js";
import { pageReport } from "../results.js";
import { takeScreenshot } from "./screenshot.js";
import { consoleMessages, networkRequests } from "./telemetry.js";
import { waitFor } from "./wait.js";

export const devtoolsDriver = Object.freeze({
  name: "devtools",
  actions: BROWSER_ACTIONS,
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
  /** Nothing it cannot do. */
  refusal: () => null,
  pageReport,
  waitForReady,
  withNavigationWatch,
  watchingDownloads,
  elementFor,
  click,
  hover,
  type,
  fillForm,
  selectOption,
  pressKey: (tabId, args) => pressKey(tabId, args.key),
  waitFor,
  navigate,
  navigateBack,
  navigateForward,
  reload,
  takeScreenshot,
  consoleMessages,
  networkRequests,
  evaluate,
  drag,
  mouseClickXy,
  mouseMoveXy,
  mouseDragXy,
  mouseDown,
  mouseUp,
  mouseWheel,
  uploadFiles,
  fileChooserLines,
  ...dialogSeam,
});
