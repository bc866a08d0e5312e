// The person's actions recorded in Firefox (actions/recording.js owns the recording): the recorder
// (page/recorder.js) imported into the extension's content-script world of every frame of the tab
// (chrome.scripting, the page's scripts cannot reach it), reporting each step over a runtime port
// of its own, and put again into each document the tab loads while it records. A step in a frame
// names the frame's iframe, found by the recorder of the document around (runtime.getFrameId).

import { runIn } from "../page_scripts.js";
import { endRecording, isRecording, openRecording, recordStep, startedAnswer } from "../recording.js";

export { stopRecording } from "../recording.js";

const PORT = "browser-mcp/recorder";
const MODULES = ["page/recorder.js", "page/locators.js", "page/roles.js", "page/names.js"].map((path) =>
  chrome.runtime.getURL(`actions/${path}`),
);

/** tab id -> {ports: Set, queue: Promise} of its running recorder. */
const recorders = new Map();

/** Page-side: the recorder in this document, reporting over a port of ours. */
async function bootRecorder(modules, portName) {
  if (globalThis.__browserMcpRecorder) return;
  const [{ recorder }, { locatorEngine }, { ariaRules }, { accessibleNames }] = await Promise.all(
    modules.map((url) => import(url)),
  );
  if (globalThis.__browserMcpRecorder) return;
  const port = chrome.runtime.connect({ name: portName });
  const handle = recorder(locatorEngine, ariaRules, accessibleNames, (step) => port.postMessage(step));
  port.onDisconnect.addListener(() => handle.stop());
}

/** Page-side: the locator of this document's iframe whose frame is `frameId`. */
function iframeLocator(frameId) {
  const iframe = [...document.querySelectorAll("iframe, frame")].find((element) => {
    try {
      return globalThis.browser.runtime.getFrameId(element) === frameId;
    } catch {
      return false;
    }
  });
  return iframe ? (globalThis.__browserMcpRecorder?.locatorFor(iframe) ?? null) : null;
}

/** The locators of the iframes around frame `frameId`, outermost first; null when one is not found. */
async function framesOf(tabId, frameId) {
  const path = [];
  while (frameId > 0) {
    const frame = await chrome.webNavigation.getFrame({ tabId, frameId }).catch(() => null);
    if (!frame || frame.parentFrameId < 0) return null;
    const outer = await runIn(tabId, frame.parentFrameId, iframeLocator, [frameId]).catch(() => null);
    if (typeof outer !== "string") return null;
    path.unshift(outer);
    frameId = frame.parentFrameId;
  }
  return path;
}

function inject(tabId, target) {
  return chrome.scripting.executeScript({ target: { tabId, ...target }, func: bootRecorder, args: [MODULES, PORT] });
}

function recorderConnected(port) {
  const { sender } = port;
  if (port.name !== PORT) return;
  const tabId = sender?.tab?.id;
  const running = recorders.get(tabId);
  if (sender.id !== chrome.runtime.id || !running || !isRecording(tabId)) {
    port.disconnect();
    return;
  }
  running.ports.add(port);
  port.onDisconnect.addListener(() => running.ports.delete(port));
  port.onMessage.addListener((step) => {
    // In the order they came, each with its frame's iframes found first.
    running.queue = running.queue
      .then(() => (sender.frameId > 0 ? framesOf(tabId, sender.frameId) : []))
      .then((frames) => recordStep(tabId, step, frames))
      .catch(() => {});
  });
}

/** A document of a recorded tab loaded: the recorder goes into it too. */
function documentLoaded(details) {
  if (recorders.has(details.tabId) && isRecording(details.tabId)) {
    inject(details.tabId, { frameIds: [details.frameId] }).catch(() => {});
  }
}

function removeRecorder(tabId) {
  const running = recorders.get(tabId);
  recorders.delete(tabId);
  for (const port of running?.ports ?? []) port.disconnect();
}

chrome.runtime.onConnect.addListener(recorderConnected);
chrome.webNavigation.onDOMContentLoaded.addListener(documentLoaded);

/** browser_start_recording {}: the person agreed (person/approvals.js). */
export async function startRecording(tabId) {
  await openRecording(tabId, () => removeRecorder(tabId));
  recorders.set(tabId, { ports: new Set(), queue: Promise.resolve() });
  try {
    await inject(tabId, { allFrames: true });
  } catch (error) {
    endRecording(tabId, null);
    throw error;
  }
  return startedAnswer(tabId);
}
