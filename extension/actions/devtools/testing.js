// The testing tools in Chromium: page/checks.js run in the tools' isolated world of each document
// they read (the page's, and each visible frame's, found as the snapshot finds them, frames.js),
// where the page's own scripts can neither see nor change it. What the answers mean is
// actions/testing.js's.

import { OBJECT_GROUP, send, utilityWorld } from "./debugger.js";
import { ActionError, Code } from "../../base/errors.js";
import { callOn, elementFor } from "./elements.js";
import { frameFor } from "./frames.js";
import { testingChecks } from "../page/checks.js";
import { locatorEngine } from "../page/locators.js";
import { accessibleNames } from "../page/names.js";
import { ariaRules } from "../page/roles.js";
import * as testing from "../testing.js";

// Sent with every call, as the world may be new; the page parses it only when it makes the checks.
const CHECKS = `(globalThis.__browserMcpChecks ??= (${testingChecks})(${ariaRules}, ${accessibleNames}, ${locatorEngine}))`;
/** Frames inside frames, at most this deep. */
const DEEPEST = 6;

async function inDocument(session, world, method, args) {
  const { result, exceptionDetails } = await send(session, "Runtime.callFunctionOn", {
    functionDeclaration: `function (method, ...args) { return ${CHECKS}[method](null, ...args); }`,
    executionContextId: world,
    arguments: [method, ...args].map((value) => ({ value })),
    returnByValue: true,
  });
  if (exceptionDetails) {
    const reason = exceptionDetails.exception?.description ?? exceptionDetails.text;
    throw new ActionError(Code.ACTION_FAILED, `the page's testing code failed: ${reason.split("\n")[0]}`);
  }
  return result.value;
}

const onElement = (element, method, ...args) =>
  callOn(element, `function (method, ...args) { return ${CHECKS}[method](this, ...args); }`, method, ...args);

/** The visible iframe elements of a document, as handles in its world. */
async function frameElements(session, world) {
  const { result } = await send(session, "Runtime.callFunctionOn", {
    functionDeclaration: `function () { return ${CHECKS}.frames(); }`,
    executionContextId: world,
    objectGroup: OBJECT_GROUP,
  });
  if (!result.objectId) return [];
  const { result: entries } = await send(session, "Runtime.getProperties", {
    objectId: result.objectId,
    ownProperties: true,
  });
  return entries.filter((entry) => /^\d+$/.test(entry.name) && entry.value?.objectId).map((entry) => entry.value);
}

/** `method`'s answer in the page's document and in each visible frame's, frames inside frames too. */
async function inEachDocument(tabId, method, ...args) {
  const answers = [];
  const visit = async (session, world, parent, depth) => {
    answers.push(await inDocument(session, world, method, args));
    if (depth >= DEEPEST) return;
    for (const iframe of await frameElements(session, world)) {
      const { node } = await send(session, "DOM.describeNode", { objectId: iframe.objectId });
      if (!node.frameId) continue;
      // A frame navigating, or out of reach, has nothing to show yet.
      const frame = await frameFor(tabId, node.frameId, node.backendNodeId, parent).catch(() => null);
      if (frame?.world) await visit(frame.target, frame.world, frame, depth + 1).catch(() => {});
    }
  };
  await visit(tabId, await utilityWorld(tabId), null, 0);
  return answers;
}

/** browser_verify_element_visible {role, accessibleName} */
export async function verifyElementVisible(tabId, args) {
  const wanted = testing.roleArgs(args);
  return testing.elementAnswer(wanted, await inEachDocument(tabId, "role", wanted.role, wanted.name));
}

/** browser_verify_text_visible {text} */
export async function verifyTextVisible(tabId, args) {
  const wanted = testing.textArgs(args);
  return testing.textAnswer(wanted, await inEachDocument(tabId, "text", wanted.text));
}

/** browser_verify_list_visible {element, target, items} */
export async function verifyListVisible(tabId, args) {
  const wanted = testing.listArgs(args);
  const list = await elementFor(tabId, args.target);
  return testing.listAnswer(wanted, await onElement(list, "list", wanted.items));
}

/** browser_verify_value {type, element, target, value} */
export async function verifyValue(tabId, args) {
  const wanted = testing.valueArgs(args);
  const element = await elementFor(tabId, args.target);
  return testing.valueAnswer(wanted, await onElement(element, "value", wanted.type));
}

/**
 * browser_generate_locator {element?, target}: the element's locator in its document, and for an
 * element in a frame, its iframe's locator in the document around, up to the page's.
 */
export async function generateLocator(tabId, args) {
  const element = await elementFor(tabId, args.target);
  let locator = await onElement(element, "locator");
  for (let frame = element.frame; frame && locator; frame = frame.owner.frame) {
    const { node, frame: parent } = frame.owner;
    const session = parent?.target ?? tabId;
    const world = parent?.world ?? (await utilityWorld(tabId));
    const { object } = await send(session, "DOM.resolveNode", {
      backendNodeId: node,
      executionContextId: world,
      objectGroup: OBJECT_GROUP,
    });
    const outer = await onElement({ session, objectId: object.objectId }, "locator");
    locator = outer && `${outer}.contentFrame().${locator}`;
  }
  return testing.locatorAnswer(locator);
}
