// The frames of a tab's page (iframes, and iframes inside them): an isolated world in each one's
// document, where an agent of its own snapshots it, and the prefix its refs carry (`f2e7`, as
// Playwright MCP names them), so that a ref names one element in one frame of the page.
//
// A frame keeps its number while it lives in the tab's page; its refs count while its document
// does, across the debugger's sessions too (a frame's world is found again by name once the tab
// is attached again). When it navigates or is removed its world goes, and its refs are refused as
// stale; its next document's refs go on numbering from its last, and the frames of the tab's next
// page get numbers of their own, so that no ref is ever reused in a tab.
//
// A frame of another site runs in a process of its own: a target of its own, which the tab's
// session attaches to and whose commands go through its session. Its elements' boxes are in its
// own viewport, so input for them is moved by the frame's place in the page (frameOffset).

import {
  WORLD_NAME,
  onSessionEvent,
  onTabAttached,
  onTabEvent,
  onTabForgotten,
  send,
  utilityWorld,
} from "./debugger.js";
import { saveNumbers, storedNumbers } from "../ref_numbers.js";

const FRAME_REF = /^f(\d+)e(\d+)$/;
const STILL_MS = 100;
// How long a visible page may take to draw twice (a busy machine's), before it is taken as drawn.
const DRAWN_WAIT_MS = 1_000;

/**
 * tab id -> {frames: frame id -> frame, byNumber: number -> frame, next}; a frame is
 * {id, number, world (null once its document went), reattach (whether world and target are of a
 * debugger session since ended, to be found again), first (its document's lowest ref number),
 * last, target (what commands for its document go to: the tab, or the session of the frame or
 * of the frame around it that is out of process), ownProcess (whether it is itself), owner (its
 * iframe element: {node, frame}, a backend node id in the document of the frame around it)}.
 */
const pages = new Map();

/**
 * The tab's frames; after a worker restart, with the numbers its frames had (ref_numbers.js), and
 * their earlier refs refused, as what became of their documents meanwhile is not known.
 */
function pageOf(tabId) {
  let page = pages.get(tabId);
  if (!page) {
    const stored = storedNumbers(tabId);
    page = { frames: new Map(), byNumber: new Map(), next: stored?.next ?? 1 };
    for (const [id, [number, last]] of Object.entries(stored?.frames ?? {})) {
      const frame = {
        id,
        number,
        world: null,
        reattach: false,
        first: last + 1,
        last,
        owner: { node: null, frame: null },
      };
      page.frames.set(id, frame);
      page.byNumber.set(number, frame);
    }
    pages.set(tabId, page);
  }
  return page;
}

/** Keep the numbers the tab's frames were given, for a worker that restarts. */
function saveFrameNumbers(tabId) {
  const page = pages.get(tabId);
  const frames = Object.fromEntries([...page.frames.values()].map((frame) => [frame.id, [frame.number, frame.last]]));
  saveNumbers(tabId, { next: page.next, frames });
}

/** The frame's document went (it navigated, or was removed), and with it the frames inside it. */
function documentGone(tabId, frameId) {
  const frames = pages.get(tabId)?.frames;
  const frame = frames?.get(frameId);
  if (!frame) return;
  frame.world = null;
  frame.reattach = false;
  frame.first = frame.last + 1;
  for (const inner of frames.values()) if (inner.owner?.frame?.id === frameId) documentGone(tabId, inner.id);
}

/**
 * tab id -> frame id -> session id: the out-of-process frames (another site's, in a process of
 * their own), each a target of its own that Chromium attaches to the tab's session and whose
 * commands go through its session (flat sessions, Chrome 125 on).
 */
const sessions = new Map();

const AUTO_ATTACH = { autoAttach: true, waitForDebuggerOnStart: false, flatten: true };
const sessionHandlers = [];

/** `handler(session)` when an out-of-process frame's session is attached, with that session as `send` takes it. */
export function onFrameSession(handler) {
  sessionHandlers.push(handler);
}

onTabAttached((tabId, command) => {
  sessions.set(tabId, new Map());
  return command("Target.setAutoAttach", AUTO_ATTACH);
});

function frameEvent(tabId, method, params) {
  if (method === "Page.frameNavigated") {
    if (params.frame.parentId || sessions.get(tabId)?.has(params.frame.id)) documentGone(tabId, params.frame.id);
    else forgetFrames(tabId); // a new page: its frames are new too
  } else if (method === "Page.frameDetached") {
    documentGone(tabId, params.frameId);
  } else if (method === "Target.attachedToTarget" && params.targetInfo.type === "iframe") {
    const { sessionId, targetInfo } = params;
    sessions.get(tabId)?.set(targetInfo.targetId, sessionId);
    const session = { tabId, sessionId };
    // Its frames' navigations, and frames of yet another site inside it.
    send(session, "Page.enable").catch(() => {});
    send(session, "Target.setAutoAttach", AUTO_ATTACH).catch(() => {});
    for (const handler of sessionHandlers) handler(session);
  } else if (method === "Target.detachedFromTarget") {
    for (const [frameId, sessionId] of sessions.get(tabId) ?? []) {
      if (sessionId !== params.sessionId) continue;
      sessions.get(tabId).delete(frameId);
      documentGone(tabId, frameId);
    }
  }
}

onTabEvent(frameEvent);
onSessionEvent((tabId, sessionId, method, params) => frameEvent(tabId, method, params));

/** Forget the page's frames, but not the numbers given, so that a ref of theirs names nothing new. */
function forgetFrames(tabId) {
  const page = pages.get(tabId);
  if (!page) return;
  page.frames.clear();
  page.byNumber.clear();
  saveFrameNumbers(tabId);
}

// The worlds' handles go with the debugger's session; the frames and their worlds stay.
onTabForgotten((tabId, closed) => {
  sessions.delete(tabId);
  if (closed) pages.delete(tabId);
  else for (const frame of pages.get(tabId)?.frames.values() ?? []) frame.reattach = true;
});

/**
 * The frame `frameId` of the tab's page, whose iframe element is `owner` (a backend node id in
 * the document of `parent`, the frame around it or null for the page), ready to snapshot:
 * {prefix, world, target, lastRef, update(last)}, or null when its document cannot be reached.
 */
export async function frameFor(tabId, frameId, owner, parent) {
  const page = pageOf(tabId);
  let frame = page.frames.get(frameId);
  if (!frame) {
    frame = { id: frameId, number: page.next++, world: null, first: 1, last: 0 };
    page.frames.set(frameId, frame);
    page.byNumber.set(frame.number, frame);
    saveFrameNumbers(tabId);
  }
  frame.owner = { node: owner, frame: parent };
  return (await reach(tabId, frame)) ? handleOf(tabId, frame) : null;
}

/**
 * Make the frame's world in its document (again, after the debugger attached again or the frame
 * moved to another process), and that of the frames around it: whether it could be reached.
 */
async function reach(tabId, frame) {
  const parent = frame.owner.frame && pages.get(tabId)?.frames.get(frame.owner.frame.id);
  if (parent && !(await reach(tabId, parent))) return false;
  const sessionId = sessions.get(tabId)?.get(frame.id);
  if (frame.world && !frame.reattach && frame.target?.sessionId === sessionId) return true;
  frame.reattach = false;
  frame.target = sessionId ? { tabId, sessionId } : (parent?.target ?? tabId);
  frame.ownProcess = Boolean(sessionId);
  try {
    const { executionContextId } = await send(frame.target, "Page.createIsolatedWorld", {
      frameId: frame.id,
      worldName: WORLD_NAME,
    });
    frame.world = executionContextId;
    return true;
  } catch {
    frame.world = null;
    return false;
  }
}

/** The frame as the actions use it; what a new session or document changes is read as it is now. */
function handleOf(tabId, frame) {
  return {
    id: frame.id,
    prefix: `f${frame.number}`,
    get world() {
      return frame.world;
    },
    get target() {
      return frame.target;
    },
    get ownProcess() {
      return frame.ownProcess;
    },
    owner: frame.owner,
    get lastRef() {
      return frame.last;
    },
    update(last) {
      if (last <= frame.last) return;
      frame.last = last;
      saveFrameNumbers(tabId);
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
export async function frameOfRef(tabId, ref) {
  const [, number, count] = FRAME_REF.exec(ref);
  const frame = pages.get(tabId)?.byNumber.get(Number(number));
  if (!frame) return "unknown";
  if ((!frame.world && !frame.reattach) || Number(count) < frame.first) return "gone";
  return (await reach(tabId, frame)) ? handleOf(tabId, frame) : "gone";
}

/**
 * Where the viewport of the frame's local root (the frame itself when it is out of process, else
 * the nearest such frame around it, or the page) sits in the tab's viewport: what to add to a
 * point of its elements' boxes for input sent to the tab.
 */
export async function frameOffset(frame) {
  if (!frame) return { x: 0, y: 0 };
  const { node, frame: parent } = frame.owner;
  const around = await frameOffset(parent);
  if (!frame.ownProcess) return around;
  const { model } = await send(parent?.target ?? frame.target.tabId, "DOM.getBoxModel", { backendNodeId: node });
  return { x: around.x + model.content[0], y: around.y + model.content[1] };
}

/** The sessions of the tab's out-of-process frames, as `send` takes them. */
export function frameSessions(tabId) {
  return [...(sessions.get(tabId)?.values() ?? [])].map((sessionId) => ({ tabId, sessionId }));
}

/**
 * Scroll the frame's iframe element (and those around it) into view in its page: done before an
 * element inside is scrolled to, as that scroll crosses into another process when the frame is
 * out of process, and lands after the frame's place has been read.
 */
export async function revealFrame(frame) {
  if (!frame) return;
  const { node, frame: parent } = frame.owner;
  await revealFrame(parent);
  await send(parent?.target ?? frame.target.tabId ?? frame.target, "DOM.scrollIntoViewIfNeeded", {
    backendNodeId: node,
  }).catch(() => {});
}

/**
 * After scrolling to an element in an out-of-process frame (or in a frame inside one): wait until
 * the frame's process and then the page have each drawn twice, by which time a scroll the frame
 * passed on to the page has landed, the page shows the frame as scrolled, and input is routed by
 * the new layout. A tab in the background draws nothing, and scrolls at once; it waits STILL_MS.
 */
export async function settleScroll(frame) {
  if (typeof frame?.target !== "object") return; // in the page's own process
  // Each in the tools' world: a timer set with the page's own setTimeout would pass for one the
  // input made the page set, and hold the input's answer for a navigation that never comes.
  if (frame.world) await drawnTwice(frame.target, frame.world);
  await drawnTwice(frame.target.tabId, await utilityWorld(frame.target.tabId).catch(() => undefined));
}

async function drawnTwice(target, contextId) {
  await send(target, "Runtime.evaluate", {
    contextId,
    expression: `new Promise((done) => {
      setTimeout(done, document.visibilityState === "visible" ? ${DRAWN_WAIT_MS} : ${STILL_MS});
      requestAnimationFrame(() => requestAnimationFrame(done));
    })`,
    awaitPromise: true,
  }).catch(() => {});
}

/** The documents of the frames the tab's snapshots went into, as {target, world}. */
export function frameWorlds(tabId) {
  const frames = [...(pages.get(tabId)?.frames.values() ?? [])];
  return frames
    .filter((frame) => frame.world && !frame.reattach)
    .map((frame) => ({ target: frame.target, world: frame.world }));
}
