// browser_wait_for, for both page drivers: a pause, or until some text shows on the page or
// leaves it. Text counts when a person would see it (the page's rendered text, innerText), matched
// as Playwright's getByText matches a string: anywhere, ignoring case and runs of white space. How
// the page's text is read is each driver's (devtools/wait.js, webext/navigation.js).

import { ActionError, Code, invalidArguments, sleep } from "../base/errors.js";

// Within the broker's default 30 s deadline for a call, with room for the answer.
const MAX_PAUSE_S = 20;
const TEXT_WAIT_MS = 10_000;
const POLL_MS = 200;

async function until(showing, tabId, text, wanted, signal) {
  const needle = text.replace(/\s+/g, " ").trim().toLowerCase();
  const deadline = Date.now() + TEXT_WAIT_MS;
  while ((await showing(tabId, needle)) !== wanted) {
    if (Date.now() >= deadline) {
      const what = wanted ? "appear" : "go away";
      throw new ActionError(Code.TIMEOUT, `the text "${text}" did not ${what} within ${TEXT_WAIT_MS / 1000} s`);
    }
    await sleep(POLL_MS, signal);
  }
}

/**
 * browser_wait_for {time?, text?, textGone?}: the line the result shows, e.g. "Waited for Done".
 * `signal` ends the wait early, when the broker calls the action off. `showing(tabId, needle)`:
 * whether the page's text holds `needle` (lower case, white space as single spaces).
 */
export const waitWith = (showing) =>
  async function waitFor(tabId, args, signal) {
    const { time, text, textGone } = args;
    if (time === undefined && !text && !textGone) throw invalidArguments("give time (seconds), text or textGone");
    if (time !== undefined && !(typeof time === "number" && time >= 0))
      throw invalidArguments("time must be a number of seconds");
    for (const [name, value] of [
      ["text", text],
      ["textGone", textGone],
    ]) {
      if (value !== undefined && typeof value !== "string") throw invalidArguments(`${name} must be a string`);
    }
    if (time) await sleep(Math.min(time, MAX_PAUSE_S) * 1000, signal);
    if (textGone) await until(showing, tabId, textGone, false, signal);
    if (text) await until(showing, tabId, text, true, signal);
    const waited = text || textGone || `${Math.min(time, MAX_PAUSE_S)} s`;
    return time > MAX_PAUSE_S ? `Waited for ${waited} (at most ${MAX_PAUSE_S} s at a time)` : `Waited for ${waited}`;
  };
