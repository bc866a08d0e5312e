// browser_performance and browser_a11y_audit in the DevTools driver: page/app_telemetry.js run in
// the tools' utility world of the tab's document (or of the frame a target is in), where the
// snapshot's refs live and the page's scripts cannot reach; axe-core is evaluated into that world
// once per document, never into the page's own.

import { send, utilityWorld } from "./debugger.js";
import { callOn, elementFor } from "./elements.js";
import { ActionError, Code } from "../../base/errors.js";
import { AUDIT_NODES, AXE_FILE, auditAnswer, vitalsAnswer } from "../app_telemetry.js";
import { appTelemetry } from "../page/app_telemetry.js";
import { lastRefOf } from "../ref_numbers.js";

let axeSource = null;

/** Run `source` (a function's) in `world` of `session` with `args`: its JSON value. */
async function inWorld(session, world, source, args) {
  const { result, exceptionDetails } = await send(session, "Runtime.callFunctionOn", {
    functionDeclaration: source,
    executionContextId: world,
    arguments: args.map((value) => ({ value })),
    returnByValue: true,
    awaitPromise: true,
  });
  if (exceptionDetails) {
    const reason = exceptionDetails.exception?.description ?? exceptionDetails.text;
    throw new ActionError(Code.ACTION_FAILED, `the page's audit code failed: ${reason.split("\n")[0]}`);
  }
  return result.value;
}

/** browser_performance {}: the page's web vitals and load timings. */
export async function performance(tabId) {
  const world = await utilityWorld(tabId);
  const options = { prefix: "", lastRef: lastRefOf(tabId) };
  const vitals = await inWorld(tabId, world, `${appTelemetry}`, ["vitals", null, null, options]);
  return vitalsAnswer(vitals, "Chromium");
}

/** axe-core in `world` of `session`, evaluated there unless it already is. */
async function loadAxe(session, world) {
  const loaded = `function () { return typeof globalThis.__browserMcpAxe?.run === "function"; }`;
  if (await inWorld(session, world, loaded, [])) return;
  axeSource ??= await (await fetch(chrome.runtime.getURL(AXE_FILE))).text();
  const { exceptionDetails } = await send(session, "Runtime.evaluate", {
    expression: `${axeSource}\n;globalThis.__browserMcpAxe = axe; axe.configure({ allowedOrigins: [] });`,
    contextId: world,
  });
  if (exceptionDetails) throw new ActionError(Code.ACTION_FAILED, "axe-core did not load in the page");
}

/** browser_a11y_audit {target?, element?}: axe-core's violations in the page, or in one element. */
export async function a11yAudit(tabId, args) {
  if (args.target === undefined) {
    const world = await utilityWorld(tabId);
    await loadAxe(tabId, world);
    const options = { prefix: "", lastRef: lastRefOf(tabId), maxNodes: AUDIT_NODES };
    return auditAnswer(await inWorld(tabId, world, `${appTelemetry}`, ["audit", null, null, options]), args);
  }
  const element = await elementFor(tabId, args.target);
  await loadAxe(element.session, element.world);
  const prefix = /^f\d+/.exec(args.target)?.[0] ?? "";
  const options = { prefix, lastRef: element.frame?.lastRef ?? lastRefOf(tabId), maxNodes: AUDIT_NODES };
  const audit = await callOn(
    element,
    `function (options) { return (${appTelemetry})("audit", this, null, options); }`,
    options,
  );
  return auditAnswer(audit, args);
}
