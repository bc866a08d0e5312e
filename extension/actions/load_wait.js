// When a page is ready to use, for both page drivers: its document parsed, then its load event for
// up to LOAD_WAIT_MS more, as Playwright MCP waits (a page whose images never finish still
// answers). Each driver tells how to read the document's state and how to hear a load step.

import { ActionError, Code } from "../base/errors.js";

// How long a navigation may take to commit its new document.
export const COMMIT_WAIT_MS = 15_000;
const READY_WAIT_MS = 15_000;
const LOAD_WAIT_MS = 5_000;
const POLL_MS = 100;

/**
 * Wait until `readyState()` is "interactive", then until it is "complete" or LOAD_WAIT_MS have
 * passed. It is asked again when `nextLoadStep(ms)` settles (a cancellable promise of the
 * driver's next sign of a document parsed or loaded, or of `ms` passing): a new document may not
 * have said so yet.
 */
export async function waitUntilReady(readyState, nextLoadStep) {
  const started = Date.now();
  let interactiveAt = null;
  for (;;) {
    const step = nextLoadStep(POLL_MS);
    const state = await readyState();
    if (state === "interactive") interactiveAt ??= Date.now();
    if (state === "complete" || (interactiveAt !== null && Date.now() - interactiveAt >= LOAD_WAIT_MS)) {
      step.cancel();
      return;
    }
    if (interactiveAt === null && Date.now() - started >= READY_WAIT_MS) {
      step.cancel();
      throw new ActionError(Code.TIMEOUT, `the page did not finish loading within ${READY_WAIT_MS / 1000} s`);
    }
    await step;
  }
}
