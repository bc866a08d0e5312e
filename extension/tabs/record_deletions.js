// Deleting the person's records for a broker's browserRequest: deleteHistory (every visit of one
// address, or of a time range) and deleteBookmark (a bookmark, an empty folder, or with
// `recursive` a folder and all it holds). Nothing here can be undone, so each is the person's
// twice over: their switch that shares their records (records.js) and their approval of this one
// deletion (approvals.js, which asks every time: "Always allow" never covers one).
//
// What the approval window shows is read from the browser when it is asked (`deletionOf`): the
// bookmark's title and address, how many bookmarks and folders a folder takes with it, the visits
// of the address. The deletion then runs only if that is still so (`stillAsApproved`): a folder
// that gained a bookmark since is not deleted with it unseen.

import { ActionError, invalidArguments } from "../base/errors.js";
import { PersonRefusal } from "../base/protocol.js";
import { checkShared, isFolder, isSeparator, subTree } from "./records.js";

const NOT_FOUND = "record_not_found";
// What the window lists of a folder's contents by name; the count says the rest.
const LISTED = 20;
// A range's pages are counted up to this, to tell the person roughly how much goes.
const COUNTED = 1000;
// eslint-disable-next-line no-control-regex -- control characters are what it is for
const UNSEEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/gu;

/** A title or address a page chose, quoted on one line: no line of it can read as the window's own. */
function quoted(text) {
  const marked = String(text ?? "").replace(UNSEEN, (c) => `⟨U+${c.codePointAt(0).toString(16).toUpperCase()}⟩`);
  return `“${marked.length > 300 ? `${marked.slice(0, 300)}…` : marked}”`;
}

function moment(ms, name) {
  if (!Number.isFinite(ms) || ms < 0) throw invalidArguments(`${name} must be milliseconds since 1970`);
  return ms;
}

const shownTime = (ms) => `${new Date(ms).toLocaleString()} (${new Date(ms).toISOString()})`;

/** The browser's own folders (bar, other, mobile; Firefox's menu, toolbar, unfiled) and their root. */
async function checkRemovable(node) {
  if (node.unmodifiable) throw invalidArguments(`bookmark ${node.id} is managed by the browser's administrator`);
  // A root that cannot be read (Firefox's may not be) is a root all the same.
  const [parent] = node.parentId === undefined ? [] : await chrome.bookmarks.get(node.parentId).catch(() => []);
  if (!parent || parent.parentId === undefined) {
    throw invalidArguments(
      `${quoted(node.title)} (id ${node.id}) is one of the browser's own folders: it cannot be deleted`,
    );
  }
  return parent;
}

/** Every node below a folder (bookmarks and folders), depth first. */
function descendants(node) {
  const found = [];
  const stack = [...(node.children ?? [])].reverse();
  while (stack.length) {
    const next = stack.pop();
    if (isSeparator(next)) continue;
    found.push(next);
    stack.push(...[...(next.children ?? [])].reverse());
  }
  return found;
}

async function historyDeletion(args) {
  if (typeof args.url === "string") {
    const visits = await chrome.history.getVisits({ url: args.url });
    if (!visits.length) throw new ActionError(NOT_FOUND, `history holds no visit of ${args.url}: nothing to delete`);
    return {
      shown: `Every visit (${visits.length}) of this address, from the history:\n${quoted(args.url)}`,
      bound: { url: args.url },
      count: visits.length,
    };
  }
  const startTime = moment(args.startTime, "startTime");
  const endTime = moment(args.endTime, "endTime");
  if (endTime <= startTime) throw invalidArguments("endTime must be after startTime");
  const pages = await chrome.history.search({ text: "", startTime, endTime, maxResults: COUNTED + 1 });
  const count = pages.length > COUNTED ? `more than ${COUNTED}` : String(pages.length);
  return {
    shown:
      `Every visit between\n  ${shownTime(startTime)} and\n  ${shownTime(endTime)}\n` +
      `from the history: ${count} pages visited then, as history search finds them.`,
    bound: { startTime, endTime },
    count: pages.length > COUNTED ? null : pages.length,
  };
}

async function bookmarkDeletion(args) {
  if (typeof args.id !== "string") throw invalidArguments("id must be a bookmark's id");
  const node = await subTree(args.id);
  if (isSeparator(node)) throw invalidArguments(`id ${node.id} is a separator, not a bookmark or folder`);
  const parent = await checkRemovable(node);
  const where = `in the folder ${quoted(parent.title)}`;
  if (!isFolder(node)) {
    return {
      shown: `The bookmark ${quoted(node.title)}\n${quoted(node.url)}\n${where}`,
      bound: { id: node.id, url: node.url, ids: [node.id] },
      node,
      inside: [],
    };
  }
  const inside = descendants(node);
  if (inside.length && args.recursive !== true) {
    const folders = inside.filter(isFolder).length;
    throw new ActionError(
      "folder_not_empty",
      `folder ${node.id} holds ${inside.length - folders} bookmarks and ${folders} folders: nothing was deleted;` +
        " delete it with recursive: true to delete all it holds too (the person is shown what goes)",
    );
  }
  const ids = [node.id, ...inside.map((each) => each.id)].sort();
  const bound = { id: node.id, ids };
  if (!inside.length) return { shown: `The empty folder ${quoted(node.title)}\n${where}`, bound, node, inside };
  const folders = inside.filter(isFolder).length;
  const listed = inside.slice(0, LISTED).map((each) => `  ${isFolder(each) ? "folder " : ""}${quoted(each.title)}`);
  const more = inside.length > LISTED ? [`  … and ${inside.length - LISTED} more`] : [];
  return {
    shown: [
      `The folder ${quoted(node.title)} ${where}`,
      `AND EVERYTHING IN IT: ${inside.length - folders} bookmarks and ${folders} folders:`,
      ...listed,
      ...more,
    ].join("\n"),
    bound,
    node,
    inside,
  };
}

/**
 * What a deletion would delete, read now: `{shown}`, the lines the approval window shows,
 * `{bound}`, what the run checks is still so, and what the run deletes and reports. Throws (an ActionError the call is answered with,
 * nobody asked) while the person does not share their records, for an id or address the browser
 * has none of, a folder with something in it without `recursive`, and the browser's own folders.
 */
export async function deletionOf(request, args) {
  await checkShared();
  return request === "deleteHistory" ? historyDeletion(args) : bookmarkDeletion(args);
}

/** What the deletion deletes now, refused with not_approved when that is not what the person approved. */
async function checked(request, args, approved) {
  let now;
  try {
    now = await deletionOf(request, args);
  } catch (error) {
    if (!approved?.bound) throw error;
    throw changed(request, error.message);
  }
  if (approved?.bound && JSON.stringify(now.bound) !== JSON.stringify(approved.bound)) {
    throw changed(request, "more or other bookmarks would go with it than the person saw");
  }
  return now;
}

function changed(request, why) {
  const what = request === "deleteHistory" ? "the history" : "the bookmarks";
  return new ActionError(
    PersonRefusal.NOT_APPROVED,
    `nothing was deleted: ${what} changed after the person approved it (${why}); ask again`,
  );
}

export const DELETION_REQUESTS = Object.freeze({
  async deleteHistory(args, approved) {
    const { bound, count } = await checked("deleteHistory", args, approved);
    if (bound.url !== undefined) {
      await chrome.history.deleteUrl({ url: bound.url });
      return { deleted: { url: bound.url, visits: count } };
    }
    await chrome.history.deleteRange({ startTime: bound.startTime, endTime: bound.endTime });
    const [startTime, endTime] = [bound.startTime, bound.endTime].map((ms) => new Date(ms).toISOString());
    return { deleted: { startTime, endTime, pages: count } };
  },
  async deleteBookmark(args, approved) {
    const { node, inside } = await checked("deleteBookmark", args, approved);
    if (isFolder(node) && inside.length) await chrome.bookmarks.removeTree(node.id);
    else await chrome.bookmarks.remove(node.id);
    const deleted = { id: node.id, title: node.title ?? "" };
    if (!isFolder(node)) return { deleted: { ...deleted, url: node.url } };
    const folders = inside.filter(isFolder).length;
    return { deleted: { ...deleted, folder: true, bookmarks: inside.length - folders, folders } };
  },
});
