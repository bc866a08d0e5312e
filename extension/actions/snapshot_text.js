// A snapshot's YAML as text, for both page drivers: the frames' snapshots put under their iframe
// lines, the whole cut at a line's end as the agent cuts it (page/snapshot.js), and the error of a
// page that moved on while it was read.

import { ActionError, Code } from "../base/errors.js";

export const navigated = () => new ActionError(Code.NAVIGATED, "the page navigated away while its snapshot was taken");

/** Longer than any page's snapshot, for the frames' own (their page's is cut once put together). */
export const NO_LIMIT = 1_000_000_000;

/**
 * The ref of the element a snapshot line stands for: in its key, outside its quoted name, so that
 * a page writing "[ref=e12]" into a name or a text cannot pass for element e12.
 */
function refOfLine(line) {
  const key = line.replace(/"(?:[^"\\]|\\.)*"/g, '""').split(": ")[0];
  return /\[ref=((?:f\d+)?e\d+)\]/.exec(key)?.[1];
}

/** How deep the line of ref `ref` is nested in `yaml` (0: a top one). */
export function depthOfLine(yaml, ref) {
  const line = yaml.split("\n").find((text) => refOfLine(text) === ref) ?? "";
  return line.search(/\S/) / 2;
}

/**
 * `yaml` with `content` (a frame's snapshot) under the line of ref `ref`, indented one step
 * deeper, and `label` (the frame's origin, when not its page's) on that line.
 */
export function underFrameLine(yaml, ref, label, content) {
  const lines = yaml.split("\n");
  const at = lines.findIndex((line) => refOfLine(line) === ref);
  if (at < 0) return yaml;
  let line = lines[at];
  if (label) {
    // The element's own ref closes its key: one the page wrote into the name comes before it.
    const end = line.lastIndexOf(`[ref=${ref}]`) + `[ref=${ref}]`.length;
    line = `${line.slice(0, end)} [origin=${label}]${line.slice(end)}`;
  }
  const indent = " ".repeat(line.search(/\S/) + 2);
  const inner = content ? content.split("\n").map((text) => indent + text) : [];
  lines.splice(at, 1, inner.length ? `${line}:` : line, ...inner);
  return lines.join("\n");
}

/**
 * The snapshot cut at a line's end within `limit` characters, as the agent cuts it; `cutAlready`:
 * how much the agent cut off before the frames went in.
 */
export function cut(snapshot, limit, cutAlready) {
  const length = snapshot.yaml.length + cutAlready;
  if (snapshot.yaml.length <= limit) return { ...snapshot, length };
  const lineEnd = snapshot.yaml.lastIndexOf("\n", limit);
  return { ...snapshot, length, yaml: snapshot.yaml.slice(0, lineEnd > 0 ? lineEnd : limit) };
}
