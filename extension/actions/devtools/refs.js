// Refs: the `e12` names a snapshot gives elements, and what a tool's `target` points at.
//
// An element keeps its ref while it stays in its document, and any ref a snapshot gave there (to
// whichever client) is taken while its element is still connected, so a client's refs stay good
// for what is still on the page however many snapshots came since. Numbers are never reused in a
// tab, not even across its pages, so a ref from a page since left cannot name an element of the
// new one: it is refused as stale instead.
//
// The page's agent (page/snapshot.js) holds the refs it gave, in the tools' isolated world of its
// document, which lives as long as the document does (across the debugger's sessions too, as
// worlds are found again by name): it alone knows which refs are its. This side keeps, per tab,
// the last number handed out (ref_numbers.js, which a restarted worker reads back).
// A `target` that is not a ref is taken as a CSS selector, as Playwright MCP takes a selector.
// Refs of elements in frames (`f2e7`) are kept by frames.js, with the frames' worlds.

import { OBJECT_GROUP, send, utilityWorld } from "./debugger.js";
import { callAgent } from "./agent.js";
import { ActionError, Code, invalidArguments } from "../../base/errors.js";
import { frameOfRef, isFrameRef } from "./frames.js";
import { lastRefOf } from "../ref_numbers.js";

const REF = /^(f\d+)?e\d+$/;

/** The last ref number handed out in the tab; kept until the tab closes. */
function stale(target, why) {
  return new ActionError(
    Code.STALE_REF,
    `ref ${target} ${why}: take a new snapshot with browser_snapshot and use a ref from it`,
  );
}

/**
 * The element `target` names in the tab's current page, as {objectId, world, frame}: a handle in
 * the isolated world of its document, the page's or its frame's (`frame`, as frames.js gives it).
 */
export async function resolveTarget(tabId, target) {
  if (typeof target !== "string" || target.trim() === "") {
    throw invalidArguments("target must be a ref from browser_snapshot (like e12) or a CSS selector");
  }
  const world = await utilityWorld(tabId);
  if (!REF.test(target)) return { objectId: await querySelector(tabId, world, target), world };
  if (isFrameRef(target)) return inFrame(tabId, target);
  const where = { place: "the page", earlier: "is from an earlier page of this tab", given: lastRefOf(tabId) };
  return { objectId: await elementOf(tabId, world, target, where), world };
}

/**
 * The element of `ref` in `world` (of the tab, or of a frame's session `session`); `where` names
 * its document for messages ({place: "the page", earlier: why a ref the agent does not know was
 * refused}) and `given`, the last ref number given there (past it, a ref was never given).
 */
async function elementOf(session, world, ref, where) {
  const found = await callAgent(session, world, "element", [{ value: ref }], false);
  if (found?.objectId) return found.objectId;
  if (found === "gone") throw stale(ref, `points at an element that is no longer on ${where.place}`);
  const number = Number(/\d+$/.exec(ref)[0]);
  throw stale(ref, number <= where.given ? where.earlier : "was never given by a snapshot of this tab");
}

async function inFrame(tabId, target) {
  const frame = await frameOfRef(tabId, target);
  if (frame === "unknown") throw stale(target, "is not from a snapshot of the page this tab shows");
  if (frame === "gone") throw stale(target, "is in a frame that navigated or was removed since that snapshot");
  let objectId;
  try {
    objectId = await elementOf(frame.target, frame.world, target, {
      place: "its frame's page",
      earlier: "is from an earlier page of its frame",
      given: frame.lastRef,
    });
  } catch (error) {
    // Its world went with its document before the news of it came.
    if (!/context|session/i.test(error.message)) throw error;
    throw stale(target, "is in a frame that navigated or was removed since that snapshot");
  }
  return { objectId, world: frame.world, frame };
}

async function querySelector(tabId, world, selector) {
  const { result, exceptionDetails } = await send(tabId, "Runtime.evaluate", {
    expression: `document.querySelector(${JSON.stringify(selector)})`,
    contextId: world,
    objectGroup: OBJECT_GROUP,
  });
  if (exceptionDetails) throw invalidArguments(`"${selector}" is neither a ref like e12 nor a valid CSS selector`);
  if (result.subtype === "null") throw new ActionError(Code.ACTION_FAILED, `"${selector}" does not match any element`);
  return result.objectId;
}
