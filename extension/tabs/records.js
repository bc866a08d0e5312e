// The person's own records, history and bookmarks, for a broker's browserRequest: searchHistory,
// searchBookmarks, createBookmark and bookmarkTree (deleting them is record_deletions.js's). They
// are the person's private record, so each request first
// asks whether the person shares them (the options page's switch, off until they turn it on);
// while they do not, it is refused with `consent_required`, saying where the switch is. Results
// are what a client needs to find a page again: title, URL and time (ISO 8601).
//
// The `history` and `bookmarks` permissions are in the manifest rather than requested when the
// switch is turned on (optional permissions): Chromium's permission prompt cannot be answered in
// headless tests, so the switch is what keeps them closed (docs/security.md).

import { ActionError, invalidArguments } from "../base/errors.js";
import { OPTIONS_PLACE } from "../base/build_advice.js";
import { PersonRefusal } from "../base/protocol.js";
import { settings, settingsReady } from "../base/settings.js";

export const SHARE_SWITCH = "Share history and bookmarks with AI agents";
const MAX_RESULTS = 200;
const DEFAULT_RESULTS = 20;

/** The error a request of the person's records gets while they do not share them; null while they do. */
export async function notShared() {
  await settingsReady;
  if (settings().shareRecords) return null;
  return {
    code: PersonRefusal.CONSENT_REQUIRED,
    message:
      `the person has not shared this browser's history and bookmarks with AI agents: they can turn on` +
      ` “${SHARE_SWITCH}” on the browser-mcp extension's options page` +
      ` (${OPTIONS_PLACE})`,
  };
}

/** Throws consent_required while the person does not share their records. */
export async function checkShared() {
  const refusal = await notShared();
  if (refusal) throw new ActionError(refusal.code, refusal.message);
}

const iso = (ms) => (Number.isFinite(ms) ? new Date(ms).toISOString() : null);

function count(value) {
  if (value === undefined) return DEFAULT_RESULTS;
  if (!Number.isInteger(value) || value < 1) throw invalidArguments("maxResults must be a whole number, 1 or more");
  return Math.min(value, MAX_RESULTS);
}

function text(value, name) {
  if (typeof value !== "string") throw invalidArguments(`${name} must be a string`);
  return value;
}

const bookmark = (node) => ({ title: node.title ?? "", url: node.url, time: iso(node.dateAdded), id: node.id });

// Firefox has separators (neither bookmark nor folder); Chromium tells a folder by its lack of url.
export const isSeparator = (node) => node.type === "separator";
export const isFolder = (node) => node.url === undefined && !isSeparator(node);

/** The node `id` names with all below it; record_not_found when the browser has none. */
export async function subTree(id) {
  try {
    const [node] = await chrome.bookmarks.getSubTree(id);
    if (node) return node;
  } catch {
    // Both browsers reject an id they do not have.
  }
  throw new ActionError(
    "record_not_found",
    `no bookmark or folder has id ${JSON.stringify(id)}: browser_bookmarks action=tree or search gives the ids`,
  );
}

const TREE = { default: 200, max: 1000 };

function treeCount(value) {
  if (value === undefined) return TREE.default;
  if (!Number.isInteger(value) || value < 1) throw invalidArguments("maxResults must be a whole number, 1 or more");
  return Math.min(value, TREE.max);
}

function treeEntry(node, depth) {
  const entry = { id: node.id, parentId: node.parentId ?? null, depth, title: node.title ?? "" };
  if (isFolder(node))
    return { ...entry, folder: true, children: (node.children ?? []).length, time: iso(node.dateAdded) };
  return { ...entry, url: node.url, time: iso(node.dateAdded) };
}

/**
 * The tree below `roots`, flat: level by level, so that when it is cut at `limit` the upper
 * levels are whole (every folder near the top, with its id to list it alone) rather than one
 * deep folder filling the answer.
 */
function flatten(roots, limit) {
  const results = [];
  let total = 0;
  let level = roots.map((node) => ({ node, depth: 0 }));
  while (level.length) {
    const next = [];
    for (const { node, depth } of level) {
      if (isSeparator(node)) continue;
      total += 1;
      if (results.length < limit) results.push(treeEntry(node, depth));
      for (const child of node.children ?? []) next.push({ node: child, depth: depth + 1 });
    }
    level = next;
  }
  return { results, total, truncated: total > results.length };
}

export const RECORD_REQUESTS = Object.freeze({
  async searchHistory(args) {
    await checkShared();
    const query = { text: text(args.query, "query"), maxResults: count(args.maxResults) };
    // Without a start chrome.history would look back only 24 hours; "the page I read last week"
    // is a search of all of it.
    query.startTime = args.startTime === undefined ? 0 : Number(args.startTime);
    const items = await chrome.history.search(query);
    return {
      results: items.map((item) => ({
        title: item.title ?? "",
        url: item.url ?? "",
        time: iso(item.lastVisitTime),
        visits: item.visitCount,
      })),
    };
  },
  async searchBookmarks(args) {
    await checkShared();
    const query = text(args.query, "query");
    const nodes = query ? await chrome.bookmarks.search(query) : await chrome.bookmarks.getRecent(DEFAULT_RESULTS);
    // Folders match a search too; only bookmarks have an address.
    return {
      results: nodes
        .filter((node) => node.url)
        .slice(0, MAX_RESULTS)
        .map(bookmark),
    };
  },
  async createBookmark(args) {
    await checkShared();
    const url = text(args.url, "url");
    const created = await chrome.bookmarks.create({
      url,
      title: args.title === undefined ? url : text(args.title, "title"),
    });
    return { bookmark: bookmark(created) };
  },
  async bookmarkTree(args) {
    await checkShared();
    const limit = treeCount(args.maxResults);
    // The whole tree starts below its unnamed root: the browser's own folders (bar, other, ...).
    const roots =
      args.id === undefined
        ? ((await chrome.bookmarks.getTree())[0]?.children ?? [])
        : [await subTree(text(args.id, "id"))];
    return flatten(roots, limit);
  },
});
