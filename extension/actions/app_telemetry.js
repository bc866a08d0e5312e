// What a web app did, as both drivers answer it: browser_performance's vitals and
// browser_a11y_audit's violations, from what page/app_telemetry.js read in the page, and the
// axe-core file the audit loads (actions/vendor/axe-core/, its README says which release).

import { textResult, sections } from "./results.js";

/** The vendored axe-core, as the extension's own file. */
export const AXE_FILE = "actions/vendor/axe-core/axe.min.js";
/** The elements an audit names of each rule it finds broken. */
export const AUDIT_NODES = 10;

// Good up to the first, poor from the second: web.dev's thresholds.
const THRESHOLDS = { LCP: [2500, 4000], INP: [200, 500], CLS: [0.1, 0.25], FCP: [1800, 3000], TTFB: [800, 1800] };

function rated(metric, value, unit = " ms") {
  const [good, poor] = THRESHOLDS[metric];
  const rating = value <= good ? "good" : value <= poor ? "needs improvement" : "poor";
  return `${value}${unit} (${rating})`;
}

const elementLine = (element) => (element ? `${element.description}${element.ref ? ` [ref=${element.ref}]` : ""}` : "");

/** A metric the browser gave no entries for, or none yet. */
function absent(value, browser, kind, none) {
  return value === "unsupported" ? `not given by ${browser} (no ${kind} entries)` : none;
}

/** browser_performance's answer for appTelemetry's `vitals`, in the browser named `browser`. */
export function vitalsAnswer(vitals, browser) {
  const { lcp, cls, inp, fcp, navigation } = vitals;
  const lines = [];
  if (lcp && typeof lcp === "object") {
    const parts = [rated("LCP", lcp.time), elementLine(lcp.element), lcp.url ?? ""].filter(Boolean);
    lines.push(`- LCP: ${parts.join(", ")}`);
  } else lines.push(`- LCP: ${absent(lcp, browser, "largest-contentful-paint", "none yet")}`);
  if (inp && typeof inp === "object") {
    const on = inp.element ? ` on ${elementLine(inp.element)}` : "";
    let line = `- INP: ${rated("INP", inp.value)}, ${inp.interactions} interaction(s); slowest: ${inp.type}${on}`;
    if (inp.eventsMissing) line += ` (the first input alone: ${browser} gives no event entries)`;
    lines.push(line);
  } else {
    lines.push(`- INP: ${absent(inp, browser, "event", "no interaction slow enough to be buffered (16 ms) yet")}`);
  }
  if (cls && typeof cls === "object") {
    let line = `- CLS: ${rated("CLS", cls.value, "")}, ${cls.shifts} shift(s)`;
    if (cls.largest) {
      const sources = cls.largest.sources.map(elementLine).join("; ");
      line += `; largest ${cls.largest.value} at ${cls.largest.time} ms${sources ? `: ${sources}` : ""}`;
    }
    lines.push(line);
  } else lines.push(`- CLS: ${absent(cls, browser, "layout-shift", "none yet")}`);
  lines.push(`- FCP: ${typeof fcp === "number" ? rated("FCP", fcp) : absent(fcp, browser, "paint", "none yet")}`);
  if (navigation) {
    const at = (value) => (value === null ? "not yet" : `${value} ms`);
    lines.push(`- TTFB: ${rated("TTFB", navigation.ttfb)}`);
    lines.push(`- DOMContentLoaded: ${at(navigation.domContentLoaded)}; load: ${at(navigation.load)}`);
  } else lines.push("- TTFB, DOMContentLoaded, load: no navigation timing for this page");
  lines.push("", "Times in ms from the navigation's start, from the page's own performance entries.");
  return textResult(sections(["Result", lines], ["Page", [`- Page URL: ${vitals.url}`]]));
}

/** browser_a11y_audit's answer for appTelemetry's `audit` of the page or the element `args` name. */
export function auditAnswer(audit, args) {
  let scope = "the page";
  if (args.target !== undefined) scope = args.element ? `${args.element} (${args.target})` : args.target;
  const lines = [`axe-core ${audit.version} found ${audit.rules} rule(s) broken in ${scope}.`];
  for (const rule of audit.violations) {
    lines.push("", `- ${rule.id} (${rule.impact}): ${rule.help} <${rule.helpUrl}>`);
    for (const node of rule.nodes) {
      const where = node.ref ? `[ref=${node.ref}] ${node.selector}` : node.selector;
      lines.push(`  - ${where}${node.summary ? `: ${node.summary}` : ""}`);
    }
    if (rule.count > rule.nodes.length) lines.push(`  - and ${rule.count - rule.nodes.length} more`);
  }
  return textResult(sections(["Result", lines]));
}
