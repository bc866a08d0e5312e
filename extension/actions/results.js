// What a built-in tool answers: an MCP CallToolResult whose text has Playwright MCP's sections
// ("### Result", "### Page", "### Modal state" ...), so a client used to those reads these the
// same way.
//
// A tool that reports the page sends its whole snapshot beside the result, as `page`; the broker
// adds the "### Snapshot" section each client is to read of it: the page folded to a budget, or
// what changed since that client's last snapshot of the tab (broker/core/snapshots.py).

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
