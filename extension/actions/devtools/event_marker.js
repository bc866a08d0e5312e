// Knowing that every event a page sent until now has been heard. Chromium hands the extension a
// command's answer and the tab's protocol events by separate ways, and under load an answer may
// overtake an event sent before it: an action that heard the page catch up with its input has not
// yet heard, say, the fetch the input started. A marker is an event the page itself sends (a call
// to a binding only the tools' world of each page has: Runtime.bindingCalled); once it is heard,
// so is every event the page sent before it.

import { WORLD_NAME, onTabAttached, waitForEvent } from "./debugger.js";

const MARKER_BINDING = "browserMcpMarker";
let markers = 0;

onTabAttached((tabId, command) =>
  command("Runtime.addBinding", { name: MARKER_BINDING, executionContextName: WORLD_NAME }),
);

/**
 * A new marker of the tab: `send`, the text of a function that sends it when run in the tools'
 * world of the page and returns whether it could; `heard`, a promise of its event, null after
 * `timeoutMs` (cancel() ends the wait).
 */
export function eventMarker(tabId, timeoutMs) {
  const payload = `${Date.now()}:${(markers += 1)}`;
  const heard = waitForEvent(
    tabId,
    (method, params) =>
      method === "Runtime.bindingCalled" && params.name === MARKER_BINDING && params.payload === payload,
    timeoutMs,
  );
  const send = `() => typeof ${MARKER_BINDING} === "function" && (${MARKER_BINDING}(${JSON.stringify(payload)}), true)`;
  return { send, heard };
}
