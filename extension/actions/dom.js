// The dom group (browser_get_text, browser_get_html, browser_inspect, browser_query) as both page
// drivers answer them: the arguments checked, and the answers of page/dom.js put in words. The
// drivers' modules (devtools/dom.js, webext/dom.js) reach the page; this holds what they share.

import { ActionError, Code, invalidArguments } from "../base/errors.js";
import { refsFor } from "./ref_numbers.js";
import { textResult } from "./results.js";

const DEFAULT_CHARS = 20_000;
const DEFAULT_RESULTS = 20;
const MOST_RESULTS = 200;
const WHAT = ["attributes", "styles", "box", "state", "form"];

function count(args, name, fallback, most = Infinity) {
  const value = args[name] ?? fallback;
  if (!Number.isInteger(value) || value < 1 || value > most) {
    throw invalidArguments(`${name} must be a whole number from 1${most < Infinity ? ` to ${most}` : ""}`);
  }
  return value;
}

/** {maxChars}, checked. */
export const textArgs = (args) => ({ maxChars: count(args, "maxChars", DEFAULT_CHARS) });

/** {maxChars, outer}, checked. */
export function htmlArgs(args) {
  if (args.outer !== undefined && typeof args.outer !== "boolean")
    throw invalidArguments("outer must be true or false");
  return { maxChars: count(args, "maxChars", DEFAULT_CHARS), outer: args.outer !== false };
}

/** {what, properties}, checked. */
export function inspectArgs(args) {
  if (typeof args.target !== "string") throw invalidArguments("target must name the element: its ref, such as e7");
  const what = typeof args.what === "string" ? [args.what] : args.what;
  if (!Array.isArray(what) || !what.length || what.some((item) => !WHAT.includes(item))) {
    throw invalidArguments(`what must list one or more of ${WHAT.join(", ")}`);
  }
  const properties = args.properties ?? [];
  if (!Array.isArray(properties) || properties.some((name) => typeof name !== "string" || !name.trim())) {
    throw invalidArguments("properties must list CSS property names, such as color");
  }
  return { what, properties: properties.map((name) => name.trim()) };
}

/** {selector, maxResults, lastRef}, checked; `lastRef` the number the tab's page goes on from. */
export function queryArgs(tabId, args) {
  if (typeof args.selector !== "string" || !args.selector.trim()) {
    throw invalidArguments("selector must be a CSS selector, such as button.buy");
  }
  const maxResults = count(args, "maxResults", DEFAULT_RESULTS, MOST_RESULTS);
  return { selector: args.selector, maxResults, lastRef: refsFor(tabId).lastRef };
}

/** The page-side answer's value, or the error it stands for. */
function valueOf(answer) {
  if (answer?.error) throw new ActionError(Code.ACTION_FAILED, answer.error);
  return answer;
}

function withCutNote({ text, length }, what) {
  if (length <= text.length) return textResult(text || `(no ${what})`);
  const left = length - text.length;
  return textResult(
    `${text}\n\n[cut: ${left.toLocaleString("en")} more characters of ${length.toLocaleString("en")}; ask with a larger maxChars]`,
  );
}

/** browser_get_text's answer. */
export function textAnswer(answer) {
  const result = withCutNote(valueOf(answer), "text");
  if (!answer.main) return result;
  const note = `(The page's main content, ${answer.main}; target "body" for the whole page.)\n\n`;
  return textResult(note + result.content[0].text);
}

/** browser_get_html's answer. */
export const htmlAnswer = (answer) => withCutNote(valueOf(answer), "HTML");

const line = (key, value) => `- ${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`;

/** browser_inspect's answer: a section for each part asked. */
export function inspectAnswer(answer) {
  const parts = [`Element: ${answer.element}`];
  if (answer.attributes) {
    parts.push("### Attributes", ...answer.attributes.map(([name, value]) => line(name, JSON.stringify(value))));
    if (!answer.attributes.length) parts.push("(none)");
  }
  if (answer.styles) {
    parts.push("### Styles", ...answer.styles.map(([name, value]) => line(name, value || "(not a property)")));
  }
  if (answer.box) {
    const { x, y, width, height, pageX, pageY, viewport, inViewport, covered } = answer.box;
    parts.push(
      "### Box",
      line("viewport box (CSS px)", `x=${x} y=${y} width=${width} height=${height}`),
      line("page position", `x=${pageX} y=${pageY}`),
      line("viewport", `${viewport.width}x${viewport.height}`),
      line("in viewport", inViewport),
      line("covered at its centre", covered),
    );
  }
  if (answer.state) parts.push("### State", ...Object.entries(answer.state).map(([name, value]) => line(name, value)));
  if (answer.form) {
    parts.push("### Form", line("form", answer.form.form));
    for (const field of answer.form.fields) {
      const { name, type, label, value, checked, disabled } = field;
      const extra = [checked !== undefined ? `checked=${checked}` : "", disabled ? "disabled" : ""].filter(Boolean);
      const shown = typeof value === "string" && value.startsWith("(a password") ? value : JSON.stringify(value);
      parts.push(
        `- ${JSON.stringify(name)} (${type}${label ? `, "${label}"` : ""}): ${shown}${extra.length ? ` [${extra.join(", ")}]` : ""}`,
      );
    }
    if (!answer.form.fields.length) parts.push("(no fields)");
  }
  return textResult(parts.join("\n"));
}

/** browser_query's answer, the tab's ref numbers moved on by the refs it gave. */
export function queryAnswer(tabId, { selector }, answer) {
  if (answer.invalid !== undefined) {
    throw invalidArguments(`"${selector}" is not a valid CSS selector: ${answer.invalid}`);
  }
  refsFor(tabId).update(answer.lastRef);
  const lines = [`${answer.count} element${answer.count === 1 ? "" : "s"} match ${JSON.stringify(selector)}`];
  if (answer.shown.length < answer.count) lines[0] += ` (the first ${answer.shown.length} shown)`;
  for (const match of answer.shown) {
    const name = match.name ? ` ${JSON.stringify(match.name)}` : "";
    const ref = match.ref ? ` [ref=${match.ref}]` : " [hidden: no ref]";
    const text = match.text && match.text !== match.name ? `: ${JSON.stringify(match.text)}` : "";
    lines.push(`- ${match.role}${name} ${match.tag}${ref}${text}`);
  }
  return textResult(lines.join("\n"));
}

/**
 * The dom group's members for a driver whose `inPage(tabId, target, method, args)` answers
 * page/dom.js's `method` on the element `target` names (the page's document when undefined).
 */
export function toolsOn(inPage) {
  return {
    /** browser_get_text {target?, element?, maxChars?} */
    async getText(tabId, args) {
      return textAnswer(await inPage(tabId, args.target, "text", textArgs(args)));
    },
    /** browser_get_html {target?, element?, maxChars?, outer?} */
    async getHtml(tabId, args) {
      return htmlAnswer(await inPage(tabId, args.target, "html", htmlArgs(args)));
    },
    /** browser_inspect {target, element?, what, properties?} */
    async inspect(tabId, args) {
      return inspectAnswer(await inPage(tabId, args.target, "inspect", inspectArgs(args)));
    },
    /** browser_query {selector, maxResults?}: in the page's document and its open shadow roots. */
    async query(tabId, args) {
      const wanted = queryArgs(tabId, args);
      return queryAnswer(tabId, wanted, await inPage(tabId, undefined, "query", wanted));
    },
  };
}
