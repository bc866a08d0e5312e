// The DevTools driver's browser_annotate: actions/annotate.js with this driver's screenshot
// (Page.captureScreenshot) and page report.

import { annotateTab } from "../annotate.js";
import { pageReport } from "./report.js";
import { takeScreenshot } from "./screenshot.js";

/** browser_annotate {}: the person's boxes and notes on the tab's page. */
export function annotate(tabId, args, signal) {
  return annotateTab(tabId, signal, { screenshot: takeScreenshot, report: pageReport });
}
