// What both page drivers share of browser_emulate_media, browser_drop and browser_highlight: their
// arguments checked, and the lines they answer with. The page-side code is page/page_effects.js.

import { ActionError, Code, invalidArguments } from "../base/errors.js";
import { checkedPaths, filesWithBytes, uploadedFiles } from "./uploads.js";

/** browser_emulate_media's features: the DevTools protocol's name of each, and the values it takes. */
export const MEDIA_FEATURES = Object.freeze({
  colorScheme: { feature: "prefers-color-scheme", values: ["light", "dark"] },
  reducedMotion: { feature: "prefers-reduced-motion", values: ["reduce", "no-preference"] },
  forcedColors: { feature: "forced-colors", values: ["active", "none"] },
  contrast: { feature: "prefers-contrast", values: ["more", "no-preference"] },
  media: { feature: null, values: ["screen", "print"] },
});

/** The overrides `args` set (a value) or clear (null), as [name, value]; checked. */
export function mediaChanges(args) {
  const changes = [];
  for (const [name, { values }] of Object.entries(MEDIA_FEATURES)) {
    if (!(name in args)) continue;
    const value = args[name];
    if (value !== null && !values.includes(value)) {
      throw invalidArguments(`${name} must be ${values.join(", ")} or null (clears it)`);
    }
    changes.push([name, value]);
  }
  return changes;
}

/** The lines saying what a tab's overrides now are. */
export function mediaLines(overrides) {
  const set = Object.entries(overrides);
  if (!set.length) return ["- No media features emulated in this tab: it shows the browser's own"];
  return [`- Emulated in this tab alone: ${set.map(([name, value]) => `${name} ${value}`).join(", ")}`];
}

/**
 * browser_drop's files (from the broker, with their bytes, as browser_file_upload's) and data,
 * checked: at least one of them.
 */
export function dropped(args) {
  const paths = checkedPaths(args);
  const data = args.data ?? {};
  if (typeof data !== "object" || Array.isArray(data) || !Object.values(data).every((v) => typeof v === "string")) {
    throw invalidArguments('data must map MIME types to text, such as {"text/plain": "hello"}');
  }
  if (!paths.length && !Object.keys(data).length) {
    throw invalidArguments("browser_drop needs paths (files to drop) or data (MIME type to text), or both");
  }
  const files = paths.length ? filesWithBytes(args) : [];
  if (files === null) throw invalidArguments("the broker sent the files without their bytes: update it");
  return { files, data };
}

/** The line a drop answers with; action_failed when the element did not take it. */
export function dropLine(args, element, accepted) {
  const what = [];
  const files = uploadedFiles(args);
  if (files.length)
    what.push(
      `${files.length} file${files.length === 1 ? "" : "s"} (${files.map((f) => `${f.name}, ${f.size}`).join("; ")})`,
    );
  const types = Object.keys(args.data ?? {});
  if (types.length) what.push(`data of type ${types.join(", ")}`);
  if (!accepted) {
    throw new ActionError(
      Code.ACTION_FAILED,
      `${element} did not take the drop of ${what.join(" and ")}: the page cancelled no dragover there`,
    );
  }
  return `Dropped ${what.join(" and ")} onto ${element} (events dispatched by script: isTrusted false)`;
}

/** The line browser_highlight and browser_hide_highlight answer with. */
export function highlightLine(answer, args, request) {
  const named = args.target ? `${answer.element} (${args.target})` : answer.element;
  if (request.show !== undefined) return `Highlighted ${named}: the box follows it until browser_hide_highlight`;
  return answer.shown ? `Removed the highlight of ${named}` : `${named} had no highlight`;
}
