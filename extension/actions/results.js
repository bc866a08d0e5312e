// What a built-in tool answers: an MCP CallToolResult whose text has Playwright MCP's sections
// ("### Result", "### Page", "### Modal state", "### Snapshot" with a ```yaml block), so a client
// used to those reads these the same way.
//
// Playwright MCP saves the snapshot after an action to a file beside the client; an extension has
// no such place, so a page's snapshot comes inline after an action when it is short enough to be
// worth reading every time (AFTER_ACTION_LIMIT) and is otherwise left to browser_snapshot.

import { captureSnapshot } from "./aria_snapshot.js";
import { consoleSummary } from "./telemetry.js";

export const SNAPSHOT_LIMIT = 100_000;
export const AFTER_ACTION_LIMIT = 25_000;

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
function pageSections(tabId, snapshot) {
  const page = [`- Page URL: ${snapshot.url}`];
  if (snapshot.title) page.push(`- Page Title: ${snapshot.title}`);
  const console = consoleSummary(tabId);
  if (console) page.push(`- Console: ${console}`);
  return [["Page", page]];
}

/**
 * The page now: its sections, and its snapshot when it fits in `limit` characters. Past that, a
 * full snapshot (browser_snapshot) is cut with a note, and one after an action is left out with a
 * note, so that no answer is larger than a client can use.
 */
export async function pageReport(tabId, { limit = SNAPSHOT_LIMIT, root, depth, result = [] } = {}) {
  const snapshot = await captureSnapshot(tabId, { root, depth, limit });
  const parts = [["Result", result], ...pageSections(tabId, snapshot)];
  if (snapshot.length > limit && limit < SNAPSHOT_LIMIT) {
    parts.push([
      "Snapshot",
      [
        `- The page's snapshot has ${snapshot.length} characters: call browser_snapshot to read it, with target for one part.`,
      ],
    ]);
    return textResult(sections(...parts));
  }
  parts.push(["Snapshot", ["```yaml", snapshot.yaml, "```"]]);
  const text = sections(...parts);
  if (snapshot.length <= limit) return textResult(text);
  return textResult([text, ...cutNote(snapshot, limit)].join("\n"));
}

/** How to read what a cut snapshot left out: the refs of the parts that go on past the cut. */
function cutNote(snapshot, limit) {
  const cut = `The snapshot was cut at ${limit} of its ${snapshot.length} characters.`;
  if (!snapshot.parts?.length) {
    return [
      `${cut} The page has no landmarks or headings past the cut: call browser_snapshot with target set to the ref of an element above whose content was cut, or with depth for its outline.`,
    ];
  }
  const lines = snapshot.parts.map((part) => {
    const line = `- ${part.role}${part.name ? ` ${JSON.stringify(part.name.slice(0, 80))}` : ""} [ref=${part.ref}]`;
    return part.heading === undefined
      ? line
      : `${line}, the part under heading ${JSON.stringify(part.heading.slice(0, 80))}`;
  });
  if (snapshot.partsLeft) {
    lines.push(
      `- and ${snapshot.partsLeft} more: browser_snapshot with depth set to 3 shows the page's outline with their refs`,
    );
  }
  return [`${cut} To read the rest, call browser_snapshot with target set to the ref of one of these parts:`, ...lines];
}
