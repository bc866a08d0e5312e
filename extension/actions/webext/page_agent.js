// The tools' agent (page/snapshot.js with page/items.js, page/roles.js, page/names.js and
// page/yaml.js) as a module the
// WebExtension driver's page-side code imports in a frame's isolated world: one agent per
// document, as the module lives in that world's global. Beside it, the page-side tasks the
// driver runs on an element the agent found, by name (scripts.js); once loaded, the agent takes
// the driver's calls through a port of its own (agent_port.js).

import { pageItems } from "../page/items.js";
import { accessibleNames } from "../page/names.js";
import { ariaRules } from "../page/roles.js";
import { snapshotAgent } from "../page/snapshot.js";
import { yamlRenderer } from "../page/yaml.js";

// The window's globals the page code reads for each node it walks, made the world's own: a global
// of Firefox's content script sandbox that is not its own is looked up through the window's Xray
// at every use, which took about a fifth of a large page's snapshot. The same objects, which no
// page script reaches here; both are the window's for its life (`document` is not: a window kept
// from its first about:blank shows the next document).
for (const name of ["Node", "getComputedStyle"]) {
  if (!Object.hasOwn(globalThis, name)) {
    Object.defineProperty(globalThis, name, { value: globalThis[name], configurable: true });
  }
}

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
  /** Whether the element in focus is a `download` link (a click leaves it on the link it clicked). */
  downloadLinkFocused: () => Boolean(document.activeElement?.closest?.("a[download]")),
};

/** The task `name` run on the element of `target` ({ref}, {selector} or null): {value} or {missing}. */
export async function runTask(name, target, args) {
  let found = null;
  if (target?.selector !== undefined) {
    try {
      found = document.querySelector(target.selector) ?? "no match";
    } catch {
      found = "bad selector";
    }
  } else if (target?.ref !== undefined) {
    found = agent.element(target.ref);
  }
  if (typeof found === "string") return { missing: found };
  return { value: await tasks[name](found, ...args) };
}

let port = null;

/** Hold this document's port (named `name`) to the driver open, which then sends its calls through it. */
export function openPort(name) {
  if (port) return;
  let opened;
  try {
    opened = globalThis.browser.runtime.connect({ name });
  } catch {
    return; // the driver reaches this document through scripting still
  }
  port = opened;
  opened.onDisconnect.addListener(() => {
    if (port === opened) port = null;
  });
  opened.onMessage.addListener(async ({ id, task, target, args }) => {
    let answer;
    try {
      answer = await runTask(task, target, args);
    } catch (error) {
      answer = { error: String(error?.message ?? error) };
    }
    try {
      opened.postMessage({ ...answer, id });
    } catch {
      // the driver let go of the port: the call fails there as a page that went
    }
  });
}
