// The frames of a tab's page (iframes, and iframes inside them): an isolated world in each one's
// document, where an agent of its own snapshots it, and the prefix its refs carry (`f2e7`, as
// Playwright MCP names them), so that a ref names one element in one frame of the page.
//
// A frame keeps its number while it lives in the tab's page; its refs count while its document
// does. When it navigates or is removed its world goes, and its refs are refused as stale; its
// next document's refs go on numbering from its last, and the frames of the tab's next page get
// numbers of their own, so that no ref is ever reused in a tab.

import { WORLD_NAME, onTabEvent, onTabForgotten, send } from "./debugger.js";

const FRAME_REF = /^f(\d+)e(\d+)$/;

/**
 * tab id -> {frames: frame id -> frame, byNumber: number -> frame, next}; a frame is
 * {id, number, world (null once its document went), first (its document's lowest ref number), last}.
 */
const pages = new Map();

function pageOf(tabId) {
  let page = pages.get(tabId);
  if (!page) {
    page = { frames: new Map(), byNumber: new Map(), next: 1 };
    pages.set(tabId, page);
  }
  return page;
}

function documentGone(tabId, frameId) {
  const frame = pages.get(tabId)?.frames.get(frameId);
  if (!frame) return;
  frame.world = null;
  frame.first = frame.last + 1;
}

onTabEvent((tabId, method, params) => {
  if (method === "Page.frameNavigated") {
    if (params.frame.parentId) documentGone(tabId, params.frame.id);
    else forgetFrames(tabId); // a new page: its frames are new too
  } else if (method === "Page.frameDetached") {
    documentGone(tabId, params.frameId);
  }
});

/** Forget the page's frames, but not the numbers given, so that a ref of theirs names nothing new. */
function forgetFrames(tabId) {
  const page = pages.get(tabId);
  if (!page) return;
  page.frames.clear();
  page.byNumber.clear();
}

// The worlds go with the debugger's session.
onTabForgotten((tabId, closed) => (closed ? pages.delete(tabId) : forgetFrames(tabId)));

/**
 * The frame `frameId` of the tab's page, ready to snapshot: {prefix, world, lastRef,
 * update(last)}, or null when its document cannot be reached from the tab's session.
 */
export async function frameFor(tabId, frameId) {
  const page = pageOf(tabId);
  let frame = page.frames.get(frameId);
  if (!frame) {
    frame = { id: frameId, number: page.next++, world: null, first: 1, last: 0 };
    page.frames.set(frameId, frame);
    page.byNumber.set(frame.number, frame);
  }
  if (!frame.world) {
    try {
      const { executionContextId } = await send(tabId, "Page.createIsolatedWorld", { frameId, worldName: WORLD_NAME });
      frame.world = executionContextId;
    } catch {
      return null;
    }
  }
  return handleOf(frame);
}

function handleOf(frame) {
  return {
    prefix: `f${frame.number}`,
    world: frame.world,
    lastRef: frame.last,
    update(last) {
      frame.last = Math.max(frame.last, last);
    },
  };
}

/** Whether `ref` names an element in a frame (`f2e7`) rather than in the page itself (`e7`). */
export const isFrameRef = (ref) => FRAME_REF.test(ref);

/**
 * The frame that `ref` (`f2e7`) belongs to, as frameFor gives it, or why there is none:
 * "unknown" (no frame of this page has that number) or "gone" (the frame navigated or was
 * removed since the ref was given, or the ref is from its earlier document).
 */
export function frameOfRef(tabId, ref) {
  const [, number, count] = FRAME_REF.exec(ref);
  const frame = pages.get(tabId)?.byNumber.get(Number(number));
  if (!frame) return "unknown";
  if (!frame.world || Number(count) < frame.first) return "gone";
  return handleOf(frame);
}
