// What a built-in tool answers: an MCP CallToolResult whose text has Playwright MCP's sections
// ("### Result", "### Page", "### Modal state" ...), so a client used to those reads these the
// same way.
//
// A tool that reports the page sends its whole snapshot beside the result, as `page`; the broker
// adds the "### Snapshot" section each client is to read of it: the page folded to a budget, or
// what changed since that client's last snapshot of the tab (broker/core/snapshots.py).

import { captureSnapshot, navigated } from "./devtools/aria_snapshot.js";
import { documentOf } from "./devtools/debugger.js";
import { documentIn } from "../tabs/documents.js";
import { consoleSummary } from "./devtools/telemetry.js";

/** More than any page a person reads; past it the broker gets the first part and folds it. */
export const PAGE_LIMIT = 2_000_000;

export function textResult(text) {
  return { content: [{ type: "text", text }] };
}

/** Sections joined as Playwright MCP joins them: a "### Title" line, then its lines. */
export function sections(...parts) {
  return parts
    .filter(([, lines]) => lines.length)
    .map(([title, lines]) => [`### ${title}`, ...lines].join("\n"))
    .join("\n");
}

/** The page's address and title, and its console trouble. */
function pageSections(console, snapshot) {
  const page = [`- Page URL: ${snapshot.url}`];
  if (snapshot.title) page.push(`- Page Title: ${snapshot.title}`);
  if (console) page.push(`- Console: ${console}`);
  return [["Page", page]];
}

/**
 * The page now: a result with its sections, and the page's snapshot as `page` (of `root` and what
 * is inside it, `target` being its ref; to `depth` levels) for the broker to show.
 */
export async function pageReport(tabId, { root, target, depth, result = [] } = {}) {
  const shown = documentOf(tabId);
  const snapshot = await captureSnapshot(tabId, { root, depth, limit: PAGE_LIMIT });
  // Chromium's id of the document, which a client's baseline of the page belongs to.
  const found = await documentIn(tabId);
  if (documentOf(tabId) !== shown) {
    throw navigated();
  }
  return reportOf(snapshot, found, consoleSummary(tabId), { target, depth, result });
}

/**
 * The report of a page's `snapshot` ({url, title, yaml}), `found` being its document as
 * documents.js finds it and `console` its console trouble in a few words ("" when none).
 */
export function reportOf(snapshot, found, console, { target, depth, result = [] }) {
  const document = found?.documentId ?? found?.url ?? snapshot.url;
  return {
    ...textResult(sections(["Result", result], ...pageSections(console, snapshot))),
    page: {
      document,
      url: snapshot.url,
      title: snapshot.title ?? "",
      yaml: snapshot.yaml,
      target: target ?? null,
      depth: depth ?? null,
    },
  };
}
