// The DevTools driver's report of the page a tool answers with (results.js's reportOf): its
// snapshot (aria_snapshot.js), the document it was taken in, and its console trouble.

import { documentIn } from "../../tabs/documents.js";
import { PAGE_LIMIT, reportOf } from "../results.js";
import { navigated } from "../snapshot_text.js";
import { captureSnapshot } from "./aria_snapshot.js";
import { documentOf } from "./debugger.js";
import { consoleSummary } from "./telemetry.js";

/**
 * The page now: a result with its sections, and the page's snapshot as `page` (of `root` and what
 * is inside it, `target` being its ref; to `depth` levels) for the broker to show.
 */
export async function pageReport(tabId, { root, target, depth, boxes, result = [] } = {}) {
  const shown = documentOf(tabId);
  const snapshot = await captureSnapshot(tabId, { root, depth, boxes, limit: PAGE_LIMIT });
  // Chromium's id of the document, which a client's baseline of the page belongs to.
  const found = await documentIn(tabId);
  if (documentOf(tabId) !== shown) {
    throw navigated();
  }
  return reportOf(snapshot, found, consoleSummary(tabId), { target, depth, result });
}
