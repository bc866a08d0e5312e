// Loaded beside background.js in a copy of the extension by tests/firefox/test_firefox_dialogs.py: lets the
// test's extension page run browser actions through the actions layer (run.js, on the WebExtension
// driver) one at a time, as a broker's browserAction would, and read each answer.
import { releaseTab } from "./actions/driver.js";
import { runBrowserAction } from "./actions/run.js";
import { callTool } from "./page_tools/tool_calls.js";
import { TOOL_CALL_GUARDS } from "./broker_requests.js";

let calls = 0;

globalThis.probeAction = async (tabId, action, args = {}) => {
  const message = { type: "browserAction", callId: `c${++calls}`, tabId, action, args, sessionId: "s" };
  const answer = await runBrowserAction(1, message, null, null);
  return JSON.stringify({ error: answer.error, result: answer.result, page: answer.page });
};

/** The client lets go of the tab, as when the broker releases it. */
globalThis.probeRelease = (tabId) => releaseTab(tabId);

/** A broker's call of the page's own tool `toolName`: the toolResult's error, or null. */
globalThis.probePageTool = async (tabId, toolName) => {
  const message = { type: "callTool", callId: `c${++calls}`, tabId, toolName, args: {}, sessionId: "s" };
  return JSON.stringify((await callTool(message, null, null, TOOL_CALL_GUARDS)).error ?? null);
};
