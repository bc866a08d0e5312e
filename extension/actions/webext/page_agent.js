// The tools' agent (page/snapshot.js with page/items.js, page/roles.js, page/names.js and
// page/yaml.js) as a module the
// WebExtension driver's page-side code imports in a frame's isolated world: one agent per
// document, as the module lives in that world's global. Beside it, the page-side tasks the
// driver runs on an element the agent found, by name (scripts.js).

import { pageItems } from "../page/items.js";
import { accessibleNames } from "../page/names.js";
import { ariaRules } from "../page/roles.js";
import { snapshotAgent } from "../page/snapshot.js";
import { yamlRenderer } from "../page/yaml.js";

// On the world's global too, under the name the DevTools driver's agent has (agent.js), where the
// synthetic input code finds it.
export const agent = (globalThis.__browserMcpAgent ??= snapshotAgent(
  pageItems,
  ariaRules,
  accessibleNames,
  yamlRenderer,
));

export const tasks = {
  /** The agent's snapshot of `root` (or the page), with the frame id of each frame it shows. */
  snapshot(root, options) {
    const snapshot = agent.snapshot(root, options);
    if (snapshot.error) return snapshot;
    const frameIds = snapshot.frames.map((ref) => {
      try {
        return globalThis.browser.runtime.getFrameId(agent.element(ref));
      } catch {
        return -1;
      }
    });
    return { ...snapshot, frameIds };
  },
  /** The viewport, the page's size and the element's box, in the document's CSS pixels. */
  areas(element) {
    const viewport = { x: scrollX, y: scrollY, width: innerWidth, height: innerHeight };
    const { scrollWidth, scrollHeight } = document.documentElement;
    const page = { x: 0, y: 0, width: scrollWidth, height: scrollHeight };
    let box = null;
    if (element) {
      const rect = element.getBoundingClientRect();
      box = { x: rect.left + scrollX, y: rect.top + scrollY, width: rect.width, height: rect.height };
    }
    return { viewport, page, box, pixelRatio: devicePixelRatio || 1 };
  },
  /** Mark the element for the page's own world to find (browser_evaluate), once. */
  mark(element, mark) {
    element.setAttribute("data-browser-mcp-evaluate", mark);
    return true;
  },
  /** Whether the page's rendered text holds `needle` (lower case, single spaces). */
  showsText(_, needle) {
    return (document.body?.innerText ?? "").replace(/\s+/g, " ").toLowerCase().includes(needle);
  },
  readyState: () => document.readyState,
};
