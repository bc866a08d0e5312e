// browser_wait_for over the DevTools protocol: the page's rendered text read in the tools'
// isolated world, for the wait both drivers share (waiting.js).

import { send, utilityWorld } from "./debugger.js";
import { waitWith } from "../waiting.js";

async function showsText(tabId, needle) {
  try {
    const { result } = await send(tabId, "Runtime.evaluate", {
      expression: `(document.body?.innerText ?? "").replace(/\\s+/g, " ").toLowerCase().includes(${JSON.stringify(needle)})`,
      contextId: await utilityWorld(tabId),
      returnByValue: true,
    });
    return result.value === true;
  } catch {
    return false; // between two documents: ask again
  }
}

export const waitFor = waitWith(showsText);
