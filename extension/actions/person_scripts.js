// The person's script library (browser_scripts, browser_run_script) and browser_page_info, for both
// page drivers. The broker reads the person's scripts folder (broker/scripts_library.py) and sends
// the listing, or the script's source, with the call: a client only names a script. A script is a
// function expression of `(args, element)`, run as the driver runs browser_evaluate's function
// (so in the page's own world, with the element of `target`), its JSON result the answer; it is not
// asked of the person, who wrote it. Page info is one page-side function (page/page_info.js).

import { invalidArguments } from "../base/errors.js";
import { runIn } from "./page_scripts.js";
import { pageInfoInPage } from "./page/page_info.js";
import { sections, textResult } from "./results.js";

/** The result with a section of `lines` after its text. */
function withSection(result, title, lines) {
  const said = sections([title, lines]);
  const [first, ...rest] = result.content;
  if (!said || first?.type !== "text") return result;
  return { ...result, content: [{ ...first, text: `${first.text}\n${said}` }, ...rest] };
}

const scriptLine = (script) =>
  script.refused
    ? `- ${script.name}: refused (${script.refused})`
    : `- ${script.name}${script.description ? `: ${script.description}` : ""}`;

/** The source of a call of the script with `args` and the element `evaluate` passes it. */
function scriptCall(source, args) {
  // A file may end its expression with a semicolon, which the call's parentheses cannot hold.
  const expression = source.trim().replace(/;+$/, "");
  return `(element) => (\n${expression}\n)(${JSON.stringify(args ?? {})}, element)`;
}

/**
 * The members of the library's tools and page info, on the driver's own `evaluate` (its
 * browser_evaluate member: `(tabId, {function, target}) => result`).
 */
export function scriptTools(evaluate) {
  return {
    /** browser_scripts {}: the listing the broker read. */
    async scripts(tabId, args) {
      const lines = (args.scripts ?? []).map(scriptLine);
      if (!lines.length) lines.push(`- None yet: the person keeps them as .js files in ${args.folder}`);
      return textResult(sections(["Scripts", lines]));
    },
    /** browser_run_script {name, args?, target?} with the `source` the broker read. */
    async runScript(tabId, args) {
      if (typeof args.source !== "string" || !args.source.trim()) {
        throw invalidArguments(`the person's script ${args.name} is empty`);
      }
      const result = await evaluate(tabId, { function: scriptCall(args.source, args.args), target: args.target });
      const notes = [`- Ran the person's script ${args.name}`];
      if (args.changed) notes.push("- It changed since you listed it: it ran as it is now");
      return withSection(result, "Script", notes);
    },
    /** browser_page_info {} */
    async pageInfo(tabId) {
      return textResult(sections(["Page info", await runIn(tabId, 0, pageInfoInPage)]));
    },
  };
}
