// Which document a tab shows, so that an approved call runs only in the document the person
// approved: Chromium's documentId for the tab's top frame (chrome.webNavigation.getFrame), which
// changes with every new document and never with a same-document move (a hash, pushState); the
// URL where Chromium gives no id. Read when the approval window opens, and again right before the
// approved call runs.

import { originOf } from "../base/origin.js";
import { PersonRefusal } from "../base/protocol.js";

/**
 * The tab's document, or its frame `frameId`'s: {tabId, frameId, documentId, url, origin, title};
 * null when there is no such tab, or no such frame.
 */
export async function documentIn(tabId, frameId = 0) {
  if (!Number.isInteger(tabId)) return null;
  const [tab, frame] = await Promise.all([
    chrome.tabs.get(tabId).catch(() => null),
    chrome.webNavigation.getFrame({ tabId, frameId }).catch(() => null),
  ]);
  if (!tab || (frameId !== 0 && !frame)) return null;
  const url = frame?.url || (frameId === 0 ? tab.url || tab.pendingUrl : "") || "";
  return { tabId, frameId, documentId: frame?.documentId ?? null, url, origin: originOf(url), title: tab.title ?? "" };
}

function same(approved, now) {
  if (!now) return false;
  // A document known by its id must still be found by it: a frame Chromium cannot name now is not it.
  if (approved.documentId) return approved.documentId === now.documentId;
  return approved.url === now.url;
}

/**
 * Null while the tab shows the document the person approved `approved.tool` in; else the
 * not_approved error to answer the call with, which then does not run.
 */
export async function pageChanged(approved) {
  const now = await documentIn(approved.tabId, approved.frameId ?? 0);
  if (same(approved, now)) return null;
  const since = now ? `it showed ${approved.url} and now shows ${now.url}` : "the tab closed";
  return {
    code: PersonRefusal.NOT_APPROVED,
    message:
      `the person did not approve ${approved.tool} on this page: the page changed after they approved it` +
      ` (${since}); the call did not run`,
  };
}
