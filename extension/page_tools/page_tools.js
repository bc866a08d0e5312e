// Page tools: each tab's tools as its documents' bridges last reported them (the top document's,
// and its frames' through frame_tools.js), told to the brokers as they change. A bridge reports
// its document's tools and every change after it; a document without tools (most of them) says
// nothing: one that has not reported has none. The bridges are put in, and asked where the worker
// cannot know, by page_bridges.js; a broker's call of a tool runs through tool_calls.js.

import { Bridge, ToBroker } from "../base/protocol.js";
import { broadcast } from "../link/links.js";
import { askTools, cleanTools, forgetWakes } from "./page_bridges.js";
import { forgetFrames, frameLeft, frameReported, frameToolsOf, pruneFrames } from "./frame_tools.js";
import { listedTopName } from "./page_tool_names.js";

/** tab id -> that tab's page tools as the brokers know them: its top document's, then its frames'. */
const toolsByTab = new Map();
/** tab id -> the tools its top document's bridge last reported, and that document's id. */
const topTools = new Map();

export function toolsOf(tabId) {
  return toolsByTab.get(tabId) ?? [];
}

/** The id of the tab's top document whose tools are listed; undefined when none was named. */
export function topDocumentOf(tabId) {
  return topTools.get(tabId)?.documentId;
}

export function forgetTools(tabId) {
  toolsByTab.delete(tabId);
  forgetWakes(tabId);
  topTools.delete(tabId);
  forgetFrames(tabId);
}

function listed(tabId) {
  const top = (topTools.get(tabId)?.tools ?? []).map((tool) => ({ ...tool, name: listedTopName(tool.name) }));
  return [...top, ...frameToolsOf(tabId)];
}

/** Tell the brokers the tab's tools, if they changed. */
function publish(tabId) {
  const tools = listed(tabId);
  const before = toolsByTab.get(tabId);
  toolsByTab.set(tabId, tools);
  if (JSON.stringify(before ?? []) !== JSON.stringify(tools)) {
    broadcast({ type: ToBroker.TOOLS_CHANGED, tabId, tools });
  }
}

/** Ask every open tab, for a worker that starts without knowing any tab's tools. */
export async function restoreTools() {
  const tabs = await chrome.tabs.query({});
  await Promise.all(
    tabs
      .filter((tab) => tab.id >= 0)
      .map(async (tab) => {
        const asked = await askTools(tab.id);
        // A bridge that reported meanwhile knows at least as much.
        if (!topTools.has(tab.id)) topTools.set(tab.id, asked);
        if (!toolsByTab.has(tab.id)) toolsByTab.set(tab.id, listed(tab.id));
      }),
  );
}

/** Ask the tab's bridge and keep the answer without telling the brokers: the caller reports the tab. */
export async function learnTools(tabId) {
  topTools.set(tabId, await askTools(tabId));
  toolsByTab.set(tabId, listed(tabId));
  return toolsByTab.get(tabId);
}

/** The tab's top document's tools are `tools`; its frames' stay. */
export function setTools(tabId, tools) {
  topTools.set(tabId, { tools, documentId: topTools.get(tabId)?.documentId ?? null });
  publish(tabId);
}

/**
 * The tab is loading or has loaded: report any change in its tools. The document it shows has the
 * tools its bridge reported, or none while it said nothing (it reports its first tool as it
 * comes, before or after this). Only where Chromium cannot name the document is its bridge asked.
 */
export async function refreshTools(tabId) {
  // A tab closed meanwhile must not come back as a ghost.
  if (!(await chrome.tabs.get(tabId).catch(() => null))) return;
  // The frames of a document before this one, or removed without a last word, are found out here.
  await pruneFrames(tabId);
  // Read last, with nothing awaited between it and publishing: a report that arrived meanwhile
  // is not undone.
  const shown = await chrome.webNavigation.getFrame({ tabId, frameId: 0 }).catch(() => null);
  if (!shown?.documentId) {
    const asked = await askTools(tabId);
    if (!(await chrome.tabs.get(tabId).catch(() => null))) return;
    topTools.set(tabId, asked);
  } else if (topTools.get(tabId)?.documentId !== shown.documentId) {
    topTools.set(tabId, { tools: [], documentId: shown.documentId });
  }
  publish(tabId);
}

/** A bridge's report of its document's tools: the top document's, or a frame's. */
export function toolsReported(sender, tools) {
  const tabId = sender.tab?.id;
  if (!(tabId >= 0)) return;
  if (sender.frameId !== 0) {
    if (frameReported(tabId, sender, cleanTools(tools))) publish(tabId);
    return;
  }
  const documentId = sender.documentId ?? null;
  const newDocument = documentId !== (topTools.get(tabId)?.documentId ?? null);
  topTools.set(tabId, { tools: cleanTools(tools), documentId });
  // A new top document: the frames of the one before went with it (its own may have reported
  // already, a top document telling its first tool only once it has one).
  if (newDocument) pruneFrames(tabId).then(() => publish(tabId));
  else publish(tabId);
}

/**
 * chrome.runtime.onConnect: a frame's bridge holds a port (Bridge.FRAME_PORT) whose closing says
 * its document went; Firefox often drops the message a removed frame sends at pagehide.
 */
export function framePortOpened(port) {
  const sender = port.sender;
  if (port.name !== Bridge.FRAME_PORT || !(sender?.tab?.id >= 0) || !(sender.frameId > 0)) return;
  port.onDisconnect.addListener(async () => {
    // A closed tab's frames go with it (forgetTools), and must not come back as a ghost.
    if (!(await chrome.tabs.get(sender.tab.id).catch(() => null))) return;
    if (frameLeft(sender)) publish(sender.tab.id);
  });
}
