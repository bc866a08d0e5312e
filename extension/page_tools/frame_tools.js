// The page tools that a tab's frames declare (iframes of the page's origin or another): each
// frame's bridge (put in once that frame has a tool: page_tools.wakeBridge) reports its
// own, and they are listed with the tab's as `f<frameId>_<name>`, so that two frames declaring
// one name stay two tools, with the frame's origin (`frameOrigin`): the site a tool belongs to is
// its frame's, not the top page's (a top document's tool never takes such a name:
// page_tool_names.js). A call goes to the document that declared the tool; a frame
// that goes away (removed, or navigated) takes its tools with it, and so does a new top document
// (pruneFrames).
//
// Bounded as a tab's tools are: a frame's first MAX_FRAME_TOOLS tools and the first MAX_FRAMES
// frames that declare any, the rest left out with a warning in the worker's console.

import { originOf } from "../base/origin.js";

const MAX_FRAME_TOOLS = 500;
const MAX_FRAMES = 20;
const FRAME_TOOL = /^f(\d+)_(.+)$/s;

/** tab id -> Map(frameId -> {documentId, origin, url, tools}) */
const framesByTab = new Map();

/**
 * A subframe's bridge reported `tools` (already cleaned): keep them as that frame's. False when
 * nothing changed.
 */
export function frameReported(tabId, sender, tools) {
  let frames = framesByTab.get(tabId);
  const known = frames?.get(sender.frameId);
  if (!tools.length) {
    if (!known) return false;
    frames.delete(sender.frameId);
    return true;
  }
  if (!frames) framesByTab.set(tabId, (frames = new Map()));
  if (!known && frames.size >= MAX_FRAMES) {
    console.warn(
      `browser-mcp: tab ${tabId} has ${MAX_FRAMES} frames with tools already; frame ${sender.frameId}'s are left out`,
    );
    return false;
  }
  if (tools.length > MAX_FRAME_TOOLS) {
    console.warn(
      `browser-mcp: frame ${sender.frameId} of tab ${tabId} declares ${tools.length} tools; the first ${MAX_FRAME_TOOLS} are kept`,
    );
  }
  const url = sender.url ?? "";
  frames.set(sender.frameId, {
    documentId: sender.documentId ?? null,
    origin: sender.origin && sender.origin !== "null" ? sender.origin : originOf(url),
    url,
    tools: tools.slice(0, MAX_FRAME_TOOLS),
  });
  return true;
}

/**
 * A frame's bridge closed its port, its document gone (removed, or navigated away): forget that
 * frame's tools, unless a newer document of the frame reported since. False when nothing changed.
 */
export function frameLeft(sender) {
  const known = framesByTab.get(sender.tab?.id)?.get(sender.frameId);
  if (!known) return false;
  if (known.documentId && sender.documentId && known.documentId !== sender.documentId) return false;
  framesByTab.get(sender.tab.id).delete(sender.frameId);
  return true;
}

/** The tab closed: its frames' tools are gone. */
export function forgetFrames(tabId) {
  framesByTab.delete(tabId);
}

/** The frames' tools as the tab lists them. */
export function frameToolsOf(tabId) {
  const listed = [];
  for (const [frameId, frame] of framesByTab.get(tabId) ?? []) {
    for (const tool of frame.tools)
      listed.push({ ...tool, name: `f${frameId}_${tool.name}`, frameOrigin: frame.origin });
  }
  return listed;
}

/** Whether a listed name is of the form a frame's tool is listed by (page_tool_names.js). */
export function isFrameTool(listedName) {
  return FRAME_TOOL.test(listedName ?? "");
}

/**
 * The frame a listed tool name belongs to: {frameId, documentId, origin, url, name} with the name
 * the frame declared; null for the top document's tools.
 */
export function frameOfTool(tabId, listedName) {
  const found = FRAME_TOOL.exec(listedName ?? "");
  if (!found) return null;
  const frame = framesByTab.get(tabId)?.get(Number(found[1]));
  if (!frame || !frame.tools.some((tool) => tool.name === found[2])) return null;
  return {
    frameId: Number(found[1]),
    documentId: frame.documentId,
    origin: frame.origin,
    url: frame.url,
    name: found[2],
  };
}

/**
 * Drop the frames Chromium no longer lists in the tab (removed without a last word), or whose
 * document is not the one that reported.
 */
export async function pruneFrames(tabId) {
  const frames = framesByTab.get(tabId);
  if (!frames?.size) return;
  const live = await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null);
  if (!live) return;
  const documents = new Map(live.map((frame) => [frame.frameId, frame.documentId]));
  for (const [frameId, frame] of frames) {
    const documentId = documents.get(frameId);
    if (documentId === undefined || (frame.documentId && documentId !== frame.documentId)) frames.delete(frameId);
  }
}
