// The testing tools in Firefox: page/checks.js run through scripting in the isolated world of each
// document they read (the page's, and each visible frame's, matched to its frame by
// runtime.getFrameId as the snapshot matches them), beside the snapshot's agent and its refs. What
// the answers mean is actions/testing.js's.

import { ActionError, Code } from "../../base/errors.js";
import { locate, missing } from "./snapshot.js";
import { runIn } from "./scripts.js";
import * as testing from "../testing.js";

/** The page-side modules, as the isolated world imports them. */
const MODULES = ["webext/page_agent.js", "page/roles.js", "page/names.js", "page/locators.js", "page/checks.js"].map(
  (path) => chrome.runtime.getURL(`actions/${path}`),
);
/** Frames inside frames, at most this deep. */
const DEEPEST = 6;

/**
 * Page-side: the checks' `method` on the element `target` names ({ref}, {selector}; {frame: id},
 * the iframe element of that frame; null: the document): {value, frames} (`frames`: the frame ids
 * of the visible iframes, for a document's answer), or {missing}.
 */
async function checksInPage(modules, target, method, args) {
  const [{ agent }, { ariaRules }, { accessibleNames }, { locatorEngine }, { testingChecks }] = await Promise.all(
    modules.map((url) => import(url)),
  );
  const checks = (globalThis.__browserMcpChecks ??= testingChecks(ariaRules, accessibleNames, locatorEngine));
  const frameOf = (element) => {
    try {
      return globalThis.browser.runtime.getFrameId(element);
    } catch {
      return -1;
    }
  };
  let element = null;
  if (target?.selector !== undefined) {
    try {
      element = document.querySelector(target.selector) ?? "no match";
    } catch {
      element = "bad selector";
    }
  } else if (target?.ref !== undefined) {
    element = agent.element(target.ref);
  } else if (target?.frame !== undefined) {
    element = checks.frames().find((iframe) => frameOf(iframe) === target.frame) ?? "gone";
  }
  if (typeof element === "string") return { missing: element };
  const value = checks[method](element, ...args);
  return { value, frames: target ? [] : checks.frames().map(frameOf) };
}

async function inFrame(tabId, frameId, target, method, ...args) {
  try {
    return await runIn(tabId, frameId, checksInPage, [MODULES, target, method, args]);
  } catch (error) {
    if (!error.pageError) throw error;
    throw new ActionError(Code.ACTION_FAILED, `the page's testing code failed: ${error.message.split("\n")[0]}`);
  }
}

/** `method`'s answer in the page's document and in each visible frame's, frames inside frames too. */
async function inEachDocument(tabId, method, ...args) {
  const answers = [];
  const visit = async (frameId, depth) => {
    const { value, frames } = await inFrame(tabId, frameId, null, method, ...args);
    answers.push(value);
    if (depth >= DEEPEST) return;
    // A frame navigating, or out of reach, has nothing to show yet.
    for (const inner of frames) if (inner >= 0) await visit(inner, depth + 1).catch(() => {});
  };
  await visit(0, 0);
  return answers;
}

/** The checks' `method` on the element `target` (a ref or a selector) names. */
async function onTarget(tabId, target, method, ...args) {
  const where = locate(tabId, target);
  const answer = await inFrame(tabId, where.frameId, where.target, method, ...args);
  if (answer.missing) throw missing(where.target, answer.missing, where.given);
  return { value: answer.value, frameId: where.frameId };
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
  return testing.listAnswer(wanted, (await onTarget(tabId, args.target, "list", wanted.items)).value);
}

/** browser_verify_value {type, element, target, value} */
export async function verifyValue(tabId, args) {
  const wanted = testing.valueArgs(args);
  return testing.valueAnswer(wanted, (await onTarget(tabId, args.target, "value", wanted.type)).value);
}

/**
 * browser_generate_locator {element?, target}: the element's locator in its document, and for an
 * element in a frame, its iframe's locator in the document around, up to the page's.
 */
export async function generateLocator(tabId, args) {
  let { value: locator, frameId } = await onTarget(tabId, args.target, "locator");
  while (frameId !== 0 && locator) {
    const frame = await chrome.webNavigation.getFrame({ tabId, frameId });
    if (!frame || frame.parentFrameId < 0) break;
    const answer = await inFrame(tabId, frame.parentFrameId, { frame: frameId }, "locator");
    if (answer.missing) throw new ActionError(Code.NAVIGATED, "the element's frame left the page during the call");
    locator = answer.value && `${answer.value}.contentFrame().${locator}`;
    frameId = frame.parentFrameId;
  }
  return testing.locatorAnswer(locator);
}
