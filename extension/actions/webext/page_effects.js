// The WebExtension driver's page effects: browser_drop and browser_highlight through
// page/page_effects.js, in the element's frame: the highlight in the isolated world, finding the
// element by its ref (the snapshot's agent) or selector; the drop in the page's world (below). browser_emulate_media it lacks: Firefox gives
// extensions no way to emulate a media feature in one tab (docs/page-drivers.md).

import { ActionError, Code } from "../../base/errors.js";
import { sections, textResult } from "../results.js";
import { dropLine, dropped, highlightLine } from "../page_effects.js";
import { dropInPage, highlightInPage } from "../page/page_effects.js";
import { locate, missing, onElement } from "./snapshot.js";
import { runIn } from "./scripts.js";

/** `pageFunction(target, ...args)`'s answer in the frame of the element `target` names. */
async function onTarget(tabId, target, pageFunction, ...args) {
  const where = locate(tabId, target);
  let answer;
  try {
    answer = await runIn(tabId, where.frameId, pageFunction, [where.target, ...args]);
  } catch (error) {
    if (!error.pageError) throw error;
    throw new ActionError(Code.ACTION_FAILED, `the page's script failed: ${error.message.split("\n")[0]}`);
  }
  if (answer?.missing) throw missing(where.target, answer.missing, where.given);
  if (!answer?.ok) throw new ActionError(Code.ACTION_FAILED, answer?.message ?? "the page gave no answer");
  return answer;
}

/**
 * browser_drop {target, paths?, data?}: the line saying what the page took. Firefox hides from a
 * page the files a content script put in a DataTransfer (their principal is the extension's), so
 * the drop is built in the page's own world, on the element the isolated world found and marked:
 * a page that replaced DataTransfer there changes only what it tells itself of its own drop.
 */
export async function drop(tabId, args) {
  const { files, data } = dropped(args);
  const sent = files.map(({ name, type, modified, data: bytes }) => ({ name, type, modified, data: bytes }));
  const where = locate(tabId, args.target);
  const mark = crypto.randomUUID();
  await onElement(tabId, args.target, "mark", mark);
  let answer;
  try {
    answer = await runIn(tabId, where.frameId, dropInPage, [{ mark }, sent, data], "MAIN");
  } catch (error) {
    if (!error.pageError) throw error;
    throw new ActionError(Code.ACTION_FAILED, `the drop failed in the page: ${error.message.split("\n")[0]}`);
  }
  if (answer?.missing) throw missing(where.target, answer.missing, where.given);
  if (!answer?.ok) throw new ActionError(Code.ACTION_FAILED, answer?.message ?? "the page gave no answer");
  return dropLine(args, answer.element, answer.accepted);
}

/** browser_highlight {target, style?} */
export async function highlight(tabId, args) {
  const request = { show: typeof args.style === "string" ? args.style : "" };
  const answer = await onTarget(tabId, args.target, highlightInPage, request);
  return textResult(sections(["Result", [highlightLine(answer, args, request)]]));
}

/** browser_hide_highlight {target?}: the element's highlight, or (no target) every one in the tab. */
export async function hideHighlight(tabId, args) {
  if (args.target !== undefined) {
    const answer = await onTarget(tabId, args.target, highlightInPage, { hide: true });
    return textResult(sections(["Result", [highlightLine(answer, args, { hide: true })]]));
  }
  const results = await chrome.scripting
    .executeScript({ target: { tabId, allFrames: true }, func: highlightInPage, args: [null, { hideAll: true }] })
    .catch(() => []);
  const hidden = results.reduce((sum, { result }) => sum + (result?.hidden ?? 0), 0);
  return textResult(sections(["Result", [`Removed ${hidden} highlight${hidden === 1 ? "" : "s"}`]]));
}
