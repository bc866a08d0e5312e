// The person's own records, history and bookmarks, for a broker's browserRequest: searchHistory,
// searchBookmarks and createBookmark. They are the person's private record, so each request first
// asks whether the person shares them (the options page's switch, off until they turn it on);
// while they do not, it is refused with `consent_required`, saying where the switch is. Results
// are what a client needs to find a page again: title, URL and time (ISO 8601).
//
// The `history` and `bookmarks` permissions are in the manifest rather than requested when the
// switch is turned on (optional permissions): Chromium's permission prompt cannot be answered in
// headless tests, so the switch is what keeps them closed (docs/security.md).

import { ActionError, invalidArguments } from "./actions/errors.js";
import { PersonRefusal } from "./protocol.js";
import { settings, settingsReady } from "./settings.js";

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
      ` (chrome://extensions → browser-mcp → Details → Extension options)`,
  };
}

async function checkShared() {
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
});
