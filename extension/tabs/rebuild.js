// The state a stopped worker lost, rebuilt once as this one starts: AI sessions and their tab
// groups, and the numbers refs were made of, from chrome.storage.session, then each open tab's
// tools from its bridge. Whatever reports that state waits for `ready`.

import { restoreRefNumbers } from "../actions/ref_numbers.js";
import { restoreTools } from "../page_tools/page_tools.js";
import { restoreSessions } from "./sessions.js";

async function rebuild() {
  await Promise.all([restoreSessions(), restoreRefNumbers()]);
  await restoreTools();
}

export const ready = rebuild().catch((error) => console.warn("browser-mcp: rebuilding state failed", error));
