// The testing tools (Playwright MCP's `testing` group) as both page drivers answer them: the
// arguments checked, the page-side answers (page/checks.js) of each document put together, and
// the one line a passed check answers with, or the error result a failed one is, saying what the
// page shows instead. The drivers' modules (devtools/testing.js, webext/testing.js) reach the
// documents; this holds what they share.

import { invalidArguments } from "../base/errors.js";
import { textResult } from "./results.js";

const VALUE_TYPES = new Set(["textbox", "checkbox", "radio", "combobox", "slider"]);
const MOST = 5;

const quoted = (text) => JSON.stringify(text);
const failed = (text) => ({ ...textResult(text), isError: true });
const listed = (texts) => texts.map(quoted).join(", ");

function needString(args, name) {
  if (typeof args[name] !== "string") throw invalidArguments(`${name} must be a string`);
  return args[name];
}

/** {role, accessibleName}, checked. */
export function roleArgs(args) {
  const role = needString(args, "role").trim().toLowerCase();
  if (!role) throw invalidArguments("role must name a role, as the snapshot shows it (button, link, heading ...)");
  return { role, name: needString(args, "accessibleName") };
}

/** {text}, checked. */
export function textArgs(args) {
  const text = needString(args, "text");
  if (!text.trim()) throw invalidArguments("text must not be empty");
  return { text };
}

/** {items}, checked. */
export function listArgs(args) {
  if (!Array.isArray(args.items) || !args.items.length || args.items.some((item) => typeof item !== "string")) {
    throw invalidArguments("items must be a list of the texts the list shows");
  }
  return { items: args.items };
}

/** {type, value}, checked. */
export function valueArgs(args) {
  if (!VALUE_TYPES.has(args.type)) throw invalidArguments(`type must be one of ${[...VALUE_TYPES].join(", ")}`);
  const value = needString(args, "value");
  if ((args.type === "checkbox" || args.type === "radio") && value !== "true" && value !== "false") {
    throw invalidArguments(`the value of a ${args.type} is "true" or "false"`);
  }
  return { type: args.type, value };
}

/** The closest of the documents' `{text, score}` lists, the likest first. */
function closest(lists) {
  const seen = new Set();
  return lists
    .flat()
    .sort((a, b) => b.score - a.score)
    .filter(({ text }) => !seen.has(text) && seen.add(text))
    .slice(0, MOST)
    .map(({ text }) => text);
}

/** browser_verify_element_visible's answer from the documents' `role` answers. */
export function elementAnswer({ role, name }, answers) {
  const what = `${role} ${quoted(name)}`;
  if (answers.some((answer) => answer.visible)) return textResult(`Visible: ${what}`);
  const hidden = answers.reduce((sum, answer) => sum + answer.hidden, 0);
  const others = closest(answers.map((answer) => answer.others));
  const parts = [`No visible ${what}`];
  if (hidden) parts.push(`${hidden} hidden`);
  parts.push(others.length ? `the ${role} elements shown: ${listed(others)}` : `no ${role} is shown`);
  return failed(parts.join("; "));
}

/** browser_verify_text_visible's answer from the documents' `text` answers. */
export function textAnswer({ text }, answers) {
  if (answers.some((answer) => answer.visible)) return textResult(`Visible text: ${quoted(text)}`);
  const hidden = answers.flatMap((answer) => answer.hidden);
  const near = closest(answers.map((answer) => answer.near));
  const parts = [`No visible text ${quoted(text)}`];
  if (hidden.length) parts.push(`it is in hidden elements only: ${hidden.slice(0, MOST).join(", ")}`);
  parts.push(near.length ? `closest: ${listed(near)}` : "the page shows no text");
  return failed(parts.join("; "));
}

/** browser_verify_list_visible's answer from the list's `list` answer. */
export function listAnswer({ items }, answer) {
  if (!answer.visible) return failed(`The list (${answer.what}) is not visible`);
  if (!answer.missing.length) return textResult(`The list shows all ${items.length} items`);
  const shown = answer.shown.length ? `it shows: ${listed(answer.shown.slice(0, 20))}` : "it shows no items";
  return failed(`The list (${answer.what}) lacks ${listed(answer.missing)}; ${shown}`);
}

/** browser_verify_value's answer from the element's `value` answer. */
export function valueAnswer({ type, value }, answer) {
  if (answer.error) return failed(`Not a ${type}: ${answer.error}`);
  if (answer.checked !== undefined) {
    const wanted = value === "true";
    if (answer.checked === wanted) return textResult(`${answer.what} is ${wanted ? "checked" : "not checked"}`);
    return failed(
      `Expected ${answer.what} ${wanted ? "checked" : "not checked"}, but it is ${answer.checked ? "checked" : "not checked"}`,
    );
  }
  // A drop-down's choice is its option's value, or the label it shows.
  if (answer.value === value || (answer.label !== undefined && answer.label === value)) {
    return textResult(`${answer.what} has the value ${quoted(value)}`);
  }
  const label =
    answer.label !== undefined && answer.label !== answer.value ? ` (shown as ${quoted(answer.label)})` : "";
  return failed(`Expected the value ${quoted(value)}, but ${answer.what} has ${quoted(answer.value)}${label}`);
}

/** browser_generate_locator's answer: the locator, or why there is none. */
export function locatorAnswer(locator) {
  if (!locator) return failed("No locator resolves to this element alone (is it inside a closed shadow root?)");
  return textResult(locator);
}
