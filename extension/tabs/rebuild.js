// The state a stopped worker lost, rebuilt once as this one starts: AI sessions and their tab
// groups, and the numbers refs were made of, from chrome.storage.session, then each open tab's
// tools from its bridge. Whatever reports that state waits for `ready`.

import { restoreTools } from "../page_tools/page_tools.js";
import { restoreSessions } from "./sessions.js";

// What the layers above tabs/ restore besides (the ref numbers, actions/ref_numbers.js), handed in
// by the wiring (background.js) in the worker's first turn.
let restoreAbove;
const above = new Promise((resolve) => {
  restoreAbove = resolve;
});

/** The wiring's restores, each `() => Promise`, run with the sessions' before the tools are asked. */
export function rebuildAlso(...restores) {
  restoreAbove(restores);
}

async function rebuild() {
  await Promise.all([restoreSessions(), above.then((restores) => Promise.all(restores.map((restore) => restore())))]);
  await restoreTools();
}

export const ready = rebuild().catch((error) => console.warn("browser-mcp: rebuilding state failed", error));
