// browser_evaluate: a client's function run in the page's own world, where the page's globals
// are, with the element as its argument when a target is given; its JSON result as text.
//
// The source is compiled by the DevTools protocol, not by eval in the page, so a page whose
// Content Security Policy forbids eval still runs it. A result that JSON cannot hold (a DOM node,
// a function) comes back as what JSON makes of it, as in Playwright MCP.

import { OBJECT_GROUP, documentOf, send } from "./debugger.js";
import { elementFor } from "./elements.js";
import { ActionError, Code, invalidArguments } from "../../base/errors.js";
import { sections, textResult } from "../results.js";

function failure(exceptionDetails) {
  const text = exceptionDetails.exception?.description ?? exceptionDetails.text ?? "the function threw";
  return new ActionError(Code.EVALUATE_FAILED, text);
}

/** browser_evaluate {function, element?, target?} */
export async function evaluate(tabId, args) {
  const source = args.function;
  if (typeof source !== "string" || source.trim() === "") {
    throw invalidArguments("function must be JavaScript source like () => document.title");
  }
  const document = documentOf(tabId);
  // A function is called (with the element, when there is one); any other value is its own result.
  const body = (argument) => `const value = (${source}\n);
    return typeof value === "function" ? await value(${argument}) : await value;`;
  let answer;
  try {
    if (args.target !== undefined) {
      const element = await elementFor(tabId, args.target);
      // elementFor gave a handle in the tools' world; the page's world needs its own.
      const { object } = await send(element.session, "DOM.resolveNode", {
        backendNodeId: element.node,
        objectGroup: OBJECT_GROUP,
      });
      answer = await send(element.session, "Runtime.callFunctionOn", {
        objectId: object.objectId,
        functionDeclaration: `async function () { ${body("this")} }`,
        returnByValue: true,
        awaitPromise: true,
        userGesture: true,
      });
    } else {
      answer = await send(tabId, "Runtime.evaluate", {
        expression: `(async () => { ${body("")} })()`,
        returnByValue: true,
        awaitPromise: true,
        userGesture: true,
      });
    }
  } catch (error) {
    if (documentOf(tabId) !== document) {
      throw new ActionError(Code.NAVIGATED, "the page navigated away before the function returned");
    }
    throw error;
  }
  if (answer.exceptionDetails) throw failure(answer.exceptionDetails);
  const { result } = answer;
  let text;
  if (result.unserializableValue !== undefined)
    text = result.unserializableValue; // NaN, Infinity, 10n
  else text = JSON.stringify(result.value, null, 2) ?? "undefined";
  return textResult(sections(["Result", [text]]));
}
