// The WebExtension driver's way into a page: the tools' page-side functions run in one frame of a
// tab through chrome.scripting.executeScript, in the extension's isolated world (the snapshot's
// agent, the refs it gave) or in the page's own (a client's browser_evaluate).
//
// The page-side code is page_agent.js, which the isolated world imports (a module lives once per
// world, so each document has one agent); a client's browser_evaluate runs in the page's world.

import { ActionError, Code } from "../../base/errors.js";
import { runIn } from "../page_scripts.js";

export { runIn };

const AGENT_URL = chrome.runtime.getURL("actions/webext/page_agent.js");

/**
 * Page-side: the task `name` of page_agent.js run on the element of `target` ({ref}, {selector}
 * or null for none): {value}, or {missing: "gone" | "unknown" | "no match" | "bad selector"}.
 */
async function onElementInPage(agentUrl, name, target, args) {
  const { agent, tasks } = await import(agentUrl);
  let found = null;
  if (target?.selector !== undefined) {
    try {
      found = document.querySelector(target.selector) ?? "no match";
    } catch {
      found = "bad selector";
    }
  } else if (target?.ref !== undefined) {
    found = agent.element(target.ref);
  }
  if (typeof found === "string") return { missing: found };
  return { value: await tasks[name](found, ...args) };
}

/**
 * The task `name` of page_agent.js run by the agent of frame `frameId` on the element of `target`
 * (null: none), in the isolated world: {value} or {missing}.
 */
export function withAgent(tabId, frameId, name, target = null, ...args) {
  return runIn(tabId, frameId, onElementInPage, [AGENT_URL, name, target, args]).catch((error) => {
    if (!error.pageError) throw error;
    throw new ActionError(Code.ACTION_FAILED, `the page's snapshot code failed: ${error.message.split("\n")[0]}`);
  });
}
