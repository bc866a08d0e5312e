// The person's actions recorded in Chromium (actions/recording.js owns the recording): the
// recorder (page/recorder.js) put into an isolated world of its own in every document of the tab
// (Page.addScriptToEvaluateOnNewDocument with a worldName, run at once in the documents there and
// again in each new one, so it survives navigations), reporting through a binding that only that
// world has (Runtime.addBinding with executionContextName): the page's own scripts can neither see
// it nor call it. A step in a frame of the page's site names its iframes, found by the recorder of
// the document around; a frame of another site, in a process of its own, is not recorded.
// It ends with the debugger's session too (the tab let go, the debugging bar cancelled).

import { onTabEvent, onTabForgotten, send } from "./debugger.js";
import { locatorEngine } from "../page/locators.js";
import { accessibleNames } from "../page/names.js";
import { recorder } from "../page/recorder.js";
import { ariaRules } from "../page/roles.js";
import { endRecording, openRecording, recordStep, startedAnswer } from "../recording.js";

const WORLD = "browser-mcp-recorder";
const BINDING = "__browserMcpRecorded";
const SOURCE = `(() => {
  const framePath = () => {
    const path = [];
    for (let here = window; here !== here.top; here = here.parent) {
      let outer = null;
      try {
        outer = here.frameElement && here.parent.__browserMcpRecorder?.locatorFor(here.frameElement);
      } catch {}
      if (!outer) return null;
      path.unshift(outer);
    }
    return path;
  };
  (${recorder})(${locatorEngine}, ${ariaRules}, ${accessibleNames}, (step) => {
    const report = globalThis[${JSON.stringify(BINDING)}];
    if (typeof report === "function") report(JSON.stringify({ step, frames: framePath() }));
  });
})();`;

/** tab id -> {script, contexts: Set} of its running recorder. */
const recorders = new Map();

onTabEvent((tabId, method, params) => {
  const running = recorders.get(tabId);
  if (!running) return;
  if (method === "Runtime.executionContextCreated" && params.context.name === WORLD) {
    running.contexts.add(params.context.id);
  } else if (
    method === "Runtime.bindingCalled" &&
    params.name === BINDING &&
    running.contexts.has(params.executionContextId)
  ) {
    let said;
    try {
      said = JSON.parse(params.payload);
    } catch {
      return;
    }
    recordStep(tabId, said?.step, said?.frames);
  }
});
onTabForgotten((tabId) => {
  recorders.delete(tabId);
  endRecording(tabId, null);
});

async function removeRecorder(tabId) {
  const running = recorders.get(tabId);
  if (!running) return;
  recorders.delete(tabId);
  await send(tabId, "Runtime.removeBinding", { name: BINDING }).catch(() => {});
  await send(tabId, "Page.removeScriptToEvaluateOnNewDocument", { identifier: running.script }).catch(() => {});
  const stop = "globalThis.__browserMcpRecorder?.stop()";
  for (const contextId of running.contexts)
    await send(tabId, "Runtime.evaluate", { expression: stop, contextId }).catch(() => {});
}

/** browser_start_recording {}: the person agreed (person/approvals.js). */
export async function startRecording(tabId) {
  await openRecording(tabId, () => removeRecorder(tabId));
  const running = { script: null, contexts: new Set() };
  recorders.set(tabId, running);
  try {
    await send(tabId, "Runtime.addBinding", { name: BINDING, executionContextName: WORLD });
    const { identifier } = await send(tabId, "Page.addScriptToEvaluateOnNewDocument", {
      source: SOURCE,
      worldName: WORLD,
      runImmediately: true,
    });
    running.script = identifier;
  } catch (error) {
    endRecording(tabId, null);
    throw error;
  }
  return startedAnswer(tabId);
}

export { stopRecording } from "../recording.js";
