// browser_annotate for both page drivers: the person draws boxes with a note on each over the
// client's tab, in a layer of ours (page/annotate_layer.js, in the closed shadow root of
// browser_highlight's overlay host, page/page_effects.js) that the page's scripts can neither read
// nor work; the answer is the page's screenshot with the boxes drawn, its snapshot and the notes.
// The answer is the result's lines, the image, the page and its whole snapshot, then the notes:
// each box in CSS pixels of the viewport, its note and the refs of the snapshot's elements under it.
//
// The tab is brought to the front first. The call waits for the person as long as tools.js's
// `waitsForPerson` says (run.js tells the broker, which holds the deadline back as for an
// approval); a client's cancel, the session's end (the broker calls the call off) and that time
// running out all take the layer away. The screenshot is taken with the layer showing the
// numbered boxes and without the toolbar and note fields, so it is each driver's own screenshot of
// what the person saw. Each driver hands in its screenshot and its page report.

import { ActionError, Code, calledOff } from "../base/errors.js";
import { runIn } from "./page_scripts.js";
import { sections } from "./results.js";
import { toolNamed } from "./tools.js";
import { annotateInPage } from "./page/annotate_layer.js";
import { highlightInPage } from "./page/page_effects.js";

// Each wait is one page script, well under runIn's 15 s.
const WAIT_STEP_MS = 5_000;
// The refs listed under one box at most.
const MAX_REFS = 12;

/** A promise that rejects as the call is called off (never, without a signal). */
function calledOffBy(signal) {
  return new Promise((_, reject) => {
    if (signal?.aborted) reject(calledOff());
    signal?.addEventListener("abort", () => reject(calledOff()), { once: true });
  });
}

/** The snapshot's elements of the top document with their boxes: [{ref, what, x, y, width, height}]. */
export function boxedElements(yaml) {
  const found = [];
  for (const line of yaml.split("\n")) {
    const match = /^\s*- '?(.*?) \[ref=(e\d+)\].*? \[box=(-?[\d.]+),(-?[\d.]+),([\d.]+),([\d.]+)\]/.exec(line);
    if (!match) continue;
    const [, what, ref, x, y, width, height] = match;
    found.push({ ref, what: what.replace(/ \[[^\]]*\]/g, ""), x: +x, y: +y, width: +width, height: +height });
  }
  return found;
}

/**
 * The elements under a drawn `box`: those at least half of whose own box it covers, else the
 * smallest one holding its middle.
 */
export function elementsUnder(box, elements) {
  const overlap = (a) =>
    Math.max(0, Math.min(a.x + a.width, box.x + box.width) - Math.max(a.x, box.x)) *
    Math.max(0, Math.min(a.y + a.height, box.y + box.height) - Math.max(a.y, box.y));
  const covered = elements.filter(
    (element) => element.width * element.height > 0 && overlap(element) * 2 >= element.width * element.height,
  );
  if (covered.length) return covered;
  const [mx, my] = [box.x + box.width / 2, box.y + box.height / 2];
  const holding = elements.filter(
    (e) => e.x <= mx && mx <= e.x + e.width && e.y <= my && my <= e.y + e.height && e.width * e.height > 0,
  );
  holding.sort((a, b) => a.width * a.height - b.width * b.height);
  return holding.slice(0, 1);
}

/** The notes section's lines: each box, its note and the snapshot's elements under it. */
function noteLines(boxes, elements) {
  return boxes.flatMap((box, index) => {
    const under = elementsUnder(box, elements);
    const shown = under.slice(0, MAX_REFS).map(({ ref, what }) => `${ref} ${what}`);
    if (under.length > MAX_REFS) shown.push(`and ${under.length - MAX_REFS} more`);
    const at = [box.x, box.y, box.width, box.height].map(Math.round).join(",");
    return [
      `- Box ${index + 1} [box=${at}]: ${box.note ? JSON.stringify(box.note) : "(no note)"}`,
      `  - Under it: ${shown.length ? shown.join("; ") : "no element of the snapshot"}`,
    ];
  });
}

/** What the page did to the layer meanwhile, said to the client. */
function pageLines(state) {
  const lines = [];
  if (state.reattached) {
    const times = state.reattached === 1 ? "once" : `${state.reattached} times`;
    lines.push(`- The page removed the annotation layer ${times}: it was put back each time`);
  }
  if (state.replaced) {
    lines.push("- The page replaced its content during the annotation: the boxes were drawn over what it showed then");
  }
  return lines;
}

/**
 * browser_annotate in tab `tabId`, with the driver's `screenshot(tabId, args)` and
 * `report(tabId, options)`: the marked screenshot, the snapshot and the notes, or a plain
 * result saying the person cancelled.
 */
export async function annotateTab(tabId, signal, { screenshot, report }) {
  const waitMs = toolNamed("annotate").waitsForPerson;
  const tab = await chrome.tabs.get(tabId);
  await chrome.tabs.update(tabId, { active: true });
  await chrome.windows.update(tab.windowId, { focused: true }).catch(() => {});
  const front = `tab ${tabId} was brought to the front for the person`;
  const layer = (request) => runIn(tabId, 0, annotateInPage, [request]);
  const stop = calledOffBy(signal);
  stop.catch(() => {});
  let state;
  let shot = null;
  try {
    await runIn(tabId, 0, highlightInPage, [null, { overlay: true }]);
    state = await layer({ start: true });
    if (!state.ok) throw new ActionError(Code.ACTION_FAILED, `cannot annotate the page: ${state.message}`);
    const deadline = Date.now() + waitMs - WAIT_STEP_MS;
    while (state.state === "drawing") {
      if (Date.now() > deadline) {
        throw new ActionError(Code.TIMEOUT, `the person neither pressed Done nor Cancel within ${waitMs / 1000} s`);
      }
      state = await Promise.race([layer({ wait: WAIT_STEP_MS }), stop]);
    }
    if (state.state === "done") {
      state = await Promise.race([layer({ shoot: true }), stop]);
      shot = await screenshot(tabId, { type: "png", scale: "css" });
    }
  } finally {
    await layer({ end: true }).catch(() => {});
    await runIn(tabId, 0, highlightInPage, [null, { overlay: false }]).catch(() => {});
  }
  if (state.state !== "done") {
    const why = state.why ?? "the layer went from the page";
    return {
      content: [
        {
          type: "text",
          text: sections(["Result", [`- The person cancelled the annotation: ${why}; ${front}`, ...pageLines(state)]]),
        },
      ],
    };
  }
  const count = state.boxes.length;
  const said = [
    `- The person drew ${count} box${count === 1 ? "" : "es"} and pressed Done; ${front}`,
    "- The screenshot shows the page with the numbered boxes, as the person saw it; boxes in CSS pixels of the viewport",
    ...pageLines(state),
  ];
  // The snapshot as browser_snapshot's whole one reads (with no `page` for the broker, which would
  // answer an action's with what changed since the client's last look).
  const page = await report(tabId, { boxes: true });
  const boxed = page.page?.yaml ?? "";
  const yaml = boxed.replace(/ \[box=[^\]]*\]/g, "");
  const shown = `${page.content[0]?.text ?? ""}\n${sections(["Snapshot", ["```yaml", yaml, "```"]])}`;
  return {
    content: [
      { type: "text", text: sections(["Result", said]) },
      ...shot.content.filter((item) => item.type === "image"),
      { type: "text", text: shown.trim() },
      { type: "text", text: sections(["Annotations", noteLines(state.boxes, boxedElements(boxed))]) },
    ],
  };
}
