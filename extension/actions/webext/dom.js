// The dom group in Firefox: page/dom.js run through scripting in the isolated world of the
// element's frame (the page's when no element), which imports the snapshot's agent and rules there
// (page_agent.js, roles.js, names.js), so a query's matches get the refs browser_click takes. What
// the answers mean is actions/dom.js's.

import { ActionError, Code } from "../../base/errors.js";
import * as dom from "../dom.js";
import { pageDom } from "../page/dom.js";
import { locate, missing } from "./snapshot.js";
import { runIn } from "./scripts.js";

/** What page/dom.js imports in the isolated world. */
const MODULES = ["webext/page_agent.js", "page/roles.js", "page/names.js"].map((path) =>
  chrome.runtime.getURL(`actions/${path}`),
);

/** `method` of page/dom.js on the element `target` names, or on the page's document when none. */
async function inPage(tabId, target, method, args) {
  const where = target === undefined ? { frameId: 0, target: null, given: 0 } : locate(tabId, target);
  let answer;
  try {
    answer = await runIn(tabId, where.frameId, pageDom, [MODULES, method, where.target, args]);
  } catch (error) {
    if (!error.pageError) throw error;
    throw new ActionError(Code.ACTION_FAILED, `the page's DOM code failed: ${error.message.split("\n")[0]}`);
  }
  if (answer.missing) throw missing(where.target, answer.missing, where.given);
  return answer.value;
}

export const { getText, getHtml, inspect, query } = dom.toolsOn(inPage);
