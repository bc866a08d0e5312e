// The WebExtension driver's way into a page: the tools' page-side functions run in one frame of a
// tab through chrome.scripting.executeScript, in the extension's isolated world (the snapshot's
// agent, the refs it gave) or in the page's own (a client's browser_evaluate).
//
// The page-side code is page_agent.js, which the isolated world imports (a module lives once per
// world, so each document has one agent); a client's browser_evaluate runs in the page's world.
// Once a document has its agent, the agent's calls go through its port (agent_port.js).

import { ActionError, Code } from "../../base/errors.js";
import { runIn } from "../page_scripts.js";
import { AGENT_PORT, askAgent } from "./agent_port.js";

export { runIn };

const AGENT_URL = chrome.runtime.getURL("actions/webext/page_agent.js");

/**
 * Page-side: the task `name` of page_agent.js run on the element of `target` ({ref}, {selector}
 * or null for none): {value}, or {missing: "gone" | "unknown" | "no match" | "bad selector"}. The
 * agent, loaded, opens its port, through which the next calls go.
 */
async function onElementInPage(agentUrl, portName, name, target, args) {
  const { openPort, runTask } = await import(agentUrl);
  openPort(portName);
  return runTask(name, target, args);
}

/** The error the client is told: the page-side code's own, as the snapshot code failing. */
function pageCodeError(error) {
  if (!error.pageError) return error;
  return new ActionError(Code.ACTION_FAILED, `the page's snapshot code failed: ${error.message.split("\n")[0]}`);
}

/**
 * The task `name` of page_agent.js run by the agent of frame `frameId` on the element of `target`
 * (null: none), in the isolated world: {value} or {missing}. Through the agent's port where the
 * frame's document has one, else through scripting.
 */
export async function withAgent(tabId, frameId, name, target = null, ...args) {
  try {
    return (
      (await askAgent(tabId, frameId, { task: name, target, args })) ??
      (await runIn(tabId, frameId, onElementInPage, [AGENT_URL, AGENT_PORT, name, target, args]))
    );
  } catch (error) {
    throw pageCodeError(error);
  }
}

/**
 * The task `name` of an agent the frame's document has loaded already: {value} or {missing}, or
 * undefined where it has none (a page still loading, which the caller asks another way).
 */
export async function withLoadedAgent(tabId, frameId, name, target = null, ...args) {
  try {
    return await askAgent(tabId, frameId, { task: name, target, args });
  } catch (error) {
    throw pageCodeError(error);
  }
}
