// The WebExtension driver's browser_annotate: actions/annotate.js with this driver's screenshot
// (tabs.captureTab) and page report.

import { annotateTab } from "../annotate.js";
import { takeScreenshot } from "./capture.js";
import { pageReport } from "./snapshot.js";

/** browser_annotate {}: the person's boxes and notes on the tab's page. */
export function annotate(tabId, args, signal) {
  return annotateTab(tabId, signal, { screenshot: takeScreenshot, report: pageReport });
}
