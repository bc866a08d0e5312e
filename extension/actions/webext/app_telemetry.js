// browser_performance and browser_a11y_audit in the WebExtension driver: page/app_telemetry.js run
// through scripting in the extension's isolated world of the page (or of the frame a target is
// in), beside the snapshot's agent and its refs; axe-core is injected there as the extension's
// file, never into the page's own world, whose `axe` and PerformanceObserver Firefox's Xray views
// keep from the add-on's code.

import { ActionError, Code } from "../../base/errors.js";
import { AUDIT_NODES, AXE_FILE, auditAnswer, vitalsAnswer } from "../app_telemetry.js";
import { appTelemetry } from "../page/app_telemetry.js";
import { refsFor } from "../ref_numbers.js";
import { locate, missing } from "./snapshot.js";
import { runIn } from "./scripts.js";

/** `func(...args)` in frame `frameId` of the tab's isolated world; the page's error as action_failed. */
async function inPage(tabId, frameId, func, args) {
  try {
    return await runIn(tabId, frameId, func, args);
  } catch (error) {
    if (!error.pageError) throw error;
    throw new ActionError(Code.ACTION_FAILED, `the page's audit code failed: ${error.message.split("\n")[0]}`);
  }
}

/** browser_performance {}: the page's web vitals and load timings, as far as Firefox gives them. */
export async function performance(tabId) {
  const options = { prefix: "", lastRef: refsFor(tabId).lastRef };
  const vitals = await inPage(tabId, 0, appTelemetry, ["vitals", null, null, options]);
  return vitalsAnswer(vitals, "Firefox");
}

/** Page-side: whether axe-core is loaded in this world; once it is, kept under the tools' name. */
function axeLoaded() {
  if (typeof globalThis.__browserMcpAxe?.run === "function") return true;
  // The add-on's own, set by its file in this world: the page's `axe` is no property it sees.
  if (typeof window.axe?.run !== "function") return false;
  globalThis.__browserMcpAxe = window.axe;
  window.axe.configure({ allowedOrigins: [] });
  return true;
}

async function loadAxe(tabId, frameId) {
  if (await inPage(tabId, frameId, axeLoaded, [])) return;
  await chrome.scripting.executeScript({ target: { tabId, frameIds: [frameId] }, files: [AXE_FILE] });
  if (!(await inPage(tabId, frameId, axeLoaded, []))) {
    throw new ActionError(Code.ACTION_FAILED, "axe-core did not load in the page");
  }
}

/** browser_a11y_audit {target?, element?}: axe-core's violations in the page, or in one element. */
export async function a11yAudit(tabId, args) {
  const where =
    args.target === undefined
      ? { frameId: 0, target: null, given: refsFor(tabId).lastRef }
      : locate(tabId, args.target);
  await loadAxe(tabId, where.frameId);
  const prefix = /^f\d+/.exec(args.target ?? "")?.[0] ?? "";
  const lastRef = where.frameId === 0 ? refsFor(tabId).lastRef : where.given;
  const options = { prefix, lastRef, maxNodes: AUDIT_NODES };
  const audit = await inPage(tabId, where.frameId, appTelemetry, ["audit", null, where.target, options]);
  if (audit.missing) throw missing(where.target, audit.missing, where.given);
  return auditAnswer(audit, args);
}
