// The dom group in Chromium: page/dom.js run in the tools' isolated world of the element's document
// (the page's, or its frame's), where the page's own scripts can neither see it nor change what it
// reads. A query's matches get their refs from the snapshot's agent of the page's world
// (agent.js's), so browser_click takes them. What the answers mean is actions/dom.js's.

import { send, utilityWorld } from "./debugger.js";
import { ActionError, Code } from "../../base/errors.js";
import { callOn, elementFor } from "./elements.js";
import * as dom from "../dom.js";
import { pageDom } from "../page/dom.js";
import { pageItems } from "../page/items.js";
import { accessibleNames } from "../page/names.js";
import { ariaRules } from "../page/roles.js";
import { snapshotAgent } from "../page/snapshot.js";
import { yamlRenderer } from "../page/yaml.js";

// The world's agent as agent.js makes it (once per world), for the refs of a query's matches.
const AGENT = `(globalThis.__browserMcpAgent ??= (${snapshotAgent})(${pageItems}, ${ariaRules}, ${accessibleNames}, ${yamlRenderer}))`;
const run = (agent, element) =>
  `function (method, args) {
    const world = { agent: ${agent}, ariaRules: ${ariaRules}, accessibleNames: ${accessibleNames}, element: ${element} };
    return (${pageDom})(world, method, null, args);
  }`;

/** `method` of page/dom.js on the element `target` names, or on the page's document when none. */
async function inPage(tabId, target, method, args) {
  if (target !== undefined)
    return (await callOn(await elementFor(tabId, target), run("null", "this"), method, args)).value;
  const { result, exceptionDetails } = await send(tabId, "Runtime.callFunctionOn", {
    functionDeclaration: run(method === "query" ? AGENT : "null", "null"),
    executionContextId: await utilityWorld(tabId),
    arguments: [{ value: method }, { value: args }],
    returnByValue: true,
    awaitPromise: true,
  });
  if (exceptionDetails) {
    const reason = exceptionDetails.exception?.description ?? exceptionDetails.text;
    throw new ActionError(Code.ACTION_FAILED, `the page's DOM code failed: ${reason.split("\n")[0]}`);
  }
  return result.value.value;
}

export const { getText, getHtml, inspect, query } = dom.toolsOn(inPage);
