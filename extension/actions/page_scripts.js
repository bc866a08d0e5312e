// A function run in one frame of a tab through chrome.scripting.executeScript, in the extension's
// isolated world or the page's own, for what runs in a page whatever the driver: the WebExtension
// driver's every call (webext/scripts.js), and the site storage of both drivers (storage.js). It
// never waits on a page that does not answer (a dialog holds it), and tells a closed tab, a frame
// that went and the page's own error apart.

import { ActionError, Code, withTimeout } from "../base/errors.js";

const SCRIPT_TIMEOUT_MS = 15_000;

async function gone(tabId) {
  return !(await chrome.tabs.get(tabId).catch(() => null));
}

/** The error of a script whose frame went before it answered: the tab closed, or the frame left. */
export async function pageLost(tabId) {
  if (await gone(tabId)) return new ActionError(Code.ACTION_FAILED, `tab ${tabId} closed during the action`);
  return new ActionError(Code.NAVIGATED, "the frame navigated away or was removed during the action");
}

/**
 * Run `func(...args)` in frame `frameId` of the tab, in `world` ("ISOLATED" or "MAIN"): what it
 * returns (JSON). A tab that closed, a frame that went or navigated, a page that does not answer
 * (a dialog holds it) each fail with their own error rather than waiting.
 */
export async function runIn(tabId, frameId, func, args = [], world = "ISOLATED") {
  let results;
  try {
    results = await withTimeout(
      chrome.scripting.executeScript({ target: { tabId, frameIds: [frameId] }, func, args, world }),
      SCRIPT_TIMEOUT_MS,
      "the page's script",
    );
  } catch (error) {
    const lost = await pageLost(tabId);
    if (lost.code === Code.ACTION_FAILED) throw lost; // the tab closed
    if (error instanceof ActionError) throw error;
    if (/frame/i.test(error.message)) throw lost;
    throw new ActionError(Code.ACTION_FAILED, `cannot run in tab ${tabId}: ${error.message}`);
  }
  const [first] = results ?? [];
  if (!first) throw new ActionError(Code.NAVIGATED, "the page navigated away during the action");
  if (first.error !== undefined) {
    const text = first.error?.message ?? String(first.error);
    throw Object.assign(new Error(text), { pageError: first.error });
  }
  return first.result;
}
