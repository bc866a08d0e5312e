// The WebExtension driver's snapshot and refs: the same agent as the DevTools driver's
// (page/snapshot.js), run through scripting in the isolated world of each frame's document, so a
// page's snapshot, its refs and their rules are the same in both. A frame's iframe element is
// matched to its frame by runtime.getFrameId in the frame around it; its refs carry its number
// (`f2e7`), given per tab and never reused, as frames.js gives them.
//
// What the agent cannot see from its world, the drawings' script-added pointer handlers, Firefox
// does not tell extensions: such shapes show by their looks alone.

import { documentIn } from "../../tabs/documents.js";
import { NO_LIMIT, cut, depthOfLine, navigated, underFrameLine } from "../snapshot_text.js";
import { ActionError, Code, invalidArguments } from "../../base/errors.js";
import { refsFor, saveNumbers, storedNumbers } from "../ref_numbers.js";
import { PAGE_LIMIT, reportOf } from "../results.js";
import { documentOf } from "./navigation.js";
import { withAgent } from "./scripts.js";

const REF = /^(?:f(\d+))?e(\d+)$/;

/** tab id -> {next, byFrame: frame id -> {number, last}, byNumber: number -> frame id} */
const pages = new Map();

function pageOf(tabId) {
  let page = pages.get(tabId);
  if (!page) {
    page = { next: storedNumbers(tabId)?.next ?? 1, byFrame: new Map(), byNumber: new Map() };
    pages.set(tabId, page);
  }
  return page;
}

function frameNumbers(tabId, frameId) {
  const page = pageOf(tabId);
  let frame = page.byFrame.get(frameId);
  if (!frame) {
    frame = { number: page.next++, last: 0 };
    page.byFrame.set(frameId, frame);
    page.byNumber.set(frame.number, frameId);
    saveNumbers(tabId, { next: page.next });
  }
  return frame;
}

/** The tab closed: its frames' numbers go. */
export function forgetFrames(tabId) {
  pages.delete(tabId);
}

async function snapshotIn(tabId, frameId, target, options) {
  const answer = await withAgent(tabId, frameId, "snapshot", target, options);
  if (answer.missing) throw missing(target, answer.missing, options.lastRef);
  if (answer.value.error) throw new ActionError(Code.ACTION_FAILED, answer.value.error);
  return answer.value;
}

/** The snapshot's yaml with each frame's content under its iframe line, and theirs under theirs. */
async function withFrames(tabId, snapshot, depth, boxes = false) {
  let { yaml } = snapshot;
  const inners = await Promise.all(
    snapshot.frames.map((ref, index) => {
      const frameId = snapshot.frameIds[index];
      const inner = depth === undefined ? undefined : depth - depthOfLine(yaml, ref) - 1;
      if (frameId < 0 || inner < 0) return null;
      return frameSnapshot(tabId, frameId, inner, boxes).catch(() => null);
    }),
  );
  for (const [index, ref] of snapshot.frames.entries()) {
    const inner = inners[index];
    if (!inner) continue;
    const label = inner.origin !== snapshot.origin && inner.origin !== "null" ? inner.origin : "";
    yaml = underFrameLine(yaml, ref, label, inner.yaml);
  }
  return yaml;
}

async function frameSnapshot(tabId, frameId, depth, boxes) {
  const frame = frameNumbers(tabId, frameId);
  const options = { depth, boxes, limit: NO_LIMIT, lastRef: frame.last, prefix: `f${frame.number}` };
  const inner = await snapshotIn(tabId, frameId, null, options);
  frame.last = Math.max(frame.last, inner.lastRef);
  return { ...inner, yaml: await withFrames(tabId, inner, depth, boxes) };
}

/**
 * Where `target` (a ref or a CSS selector) is: {frameId, target: {ref} | {selector}}. A frame
 * ref's frame must be one a snapshot of this page showed.
 */
export function locate(tabId, target) {
  if (typeof target !== "string" || target.trim() === "") {
    throw invalidArguments("target must be a ref from browser_snapshot (like e12) or a CSS selector");
  }
  const match = REF.exec(target);
  if (!match) return { frameId: 0, target: { selector: target }, given: 0 };
  if (match[1] === undefined) return { frameId: 0, target: { ref: target }, given: refsFor(tabId).lastRef };
  const frameId = pages.get(tabId)?.byNumber.get(Number(match[1]));
  if (frameId === undefined) throw stale(target, "is not from a snapshot of the page this tab shows");
  return { frameId, target: { ref: target }, given: pageOf(tabId).byFrame.get(frameId).last };
}

function stale(target, why) {
  return new ActionError(
    Code.STALE_REF,
    `ref ${target} ${why}: take a new snapshot with browser_snapshot and use a ref from it`,
  );
}

/** The error for a target the page did not find (`why`, as the page-side lookup says it). */
export function missing(target, why, given = 0) {
  if (why === "bad selector")
    return invalidArguments(`"${target.selector}" is neither a ref like e12 nor a valid CSS selector`);
  if (why === "no match") return new ActionError(Code.ACTION_FAILED, `"${target.selector}" does not match any element`);
  if (why === "gone") return stale(target.ref, "points at an element that is no longer on the page");
  const number = Number(/\d+$/.exec(target.ref)[0]);
  return stale(
    target.ref,
    number <= given ? "is from an earlier page of this tab" : "was never given by a snapshot of this tab",
  );
}

/** Run page-side `task(element, ...args)` (the agent as `this`) on the element `target` names. */
export async function onElement(tabId, target, task, ...args) {
  const where = locate(tabId, target);
  const answer = await withAgent(tabId, where.frameId, task, where.target, ...args);
  if (answer.missing) throw missing(where.target, answer.missing, where.given);
  return answer.value;
}

/** The page now, as results.js reports it; of the element `target` names and what is inside it. */
export async function pageReport(tabId, { target, depth, boxes = false, result = [] } = {}) {
  const shown = documentOf(tabId);
  const where = target === undefined ? { frameId: 0, target: null, given: 0 } : locate(tabId, target);
  const refs = where.frameId === 0 ? refsFor(tabId) : null;
  const frame = refs ? null : pageOf(tabId).byFrame.get(where.frameId);
  const options = {
    depth,
    boxes,
    limit: PAGE_LIMIT,
    lastRef: refs?.lastRef ?? frame.last,
    prefix: frame ? `f${frame.number}` : "",
  };
  // The tab's document as the browser names it is asked for beside the page's script: a document
  // that commits meanwhile moves documentOf, and the report is refused below.
  const named = documentIn(tabId);
  let snapshot;
  try {
    snapshot = await snapshotIn(tabId, where.frameId, where.target, options);
  } catch (error) {
    if (documentOf(tabId) !== shown) throw navigated();
    throw error;
  }
  if (refs) refs.update(snapshot.lastRef);
  else frame.last = Math.max(frame.last, snapshot.lastRef);
  const yaml = await withFrames(tabId, snapshot, depth, boxes);
  const found = await named;
  if (documentOf(tabId) !== shown) throw navigated();
  const whole = cut({ ...snapshot, yaml }, PAGE_LIMIT, snapshot.length - snapshot.yaml.length);
  return reportOf(whole, found, "", { target, depth, result });
}
