// Refs: the `e12` names a snapshot gives elements, and what a tool's `target` points at.
//
// An element keeps its ref from one snapshot to the next while its document lives, so a client's
// earlier refs stay good for what is still on the page; a ref counts only if the tab's latest
// snapshot showed it (a snapshot of a subtree adds its refs to the full one before it). Numbers
// are never reused in a tab, not even across its pages, so a ref from a page since left cannot
// name an element of the new one: it is refused as stale instead.
//
// Elements are held as the DevTools protocol's backend node ids, valid for their document only.
// A `target` that is not a ref is taken as a CSS selector, as Playwright MCP takes a selector.

import { documentOf, onTabForgotten, send, utilityWorld } from "./debugger.js";
import { ActionError, Code, invalidArguments } from "./errors.js";

const REF = /^e\d+$/;

/**
 * tab id -> {document, first, refOf: Map(backend node id -> ref), shown: Map(ref -> backend node id)},
 * `first` being the lowest number a ref of that document can have.
 */
const registries = new Map();
/** tab id -> the last ref number handed out there; kept until the tab closes. */
const lastRef = new Map();

onTabForgotten((tabId, closed) => {
  registries.delete(tabId);
  if (closed) lastRef.delete(tabId);
});

function registryOf(tabId, document) {
  let registry = registries.get(tabId);
  if (!registry || registry.document !== document) {
    registry = { document, first: (lastRef.get(tabId) ?? 0) + 1, refOf: new Map(), shown: new Map() };
    registries.set(tabId, registry);
  }
  return registry;
}

/**
 * A naming session for one snapshot of the tab's `document`: `name(backendNodeId)` gives the
 * element's ref, and `publish(partial)` makes the refs it gave the ones that count.
 */
export function refNamer(tabId, document) {
  const registry = registryOf(tabId, document);
  const given = new Map();
  return {
    name(backendNodeId) {
      let ref = registry.refOf.get(backendNodeId);
      if (!ref) {
        const next = (lastRef.get(tabId) ?? 0) + 1;
        lastRef.set(tabId, next);
        ref = `e${next}`;
        registry.refOf.set(backendNodeId, ref);
      }
      given.set(ref, backendNodeId);
      return ref;
    },
    publish(partial) {
      if (registries.get(tabId) !== registry) return;
      if (!partial) registry.shown.clear();
      for (const [ref, node] of given) registry.shown.set(ref, node);
    },
  };
}

function stale(target, why) {
  return new ActionError(
    Code.STALE_REF,
    `ref ${target} ${why}: take a new snapshot with browser_snapshot and use a ref from it`,
  );
}

/** The backend node id `target` names in the tab's current document. */
export async function resolveTarget(tabId, target) {
  if (typeof target !== "string" || target.trim() === "") {
    throw invalidArguments("target must be a ref from browser_snapshot (like e12) or a CSS selector");
  }
  if (!REF.test(target)) return querySelector(tabId, target);
  const registry = registries.get(tabId);
  const number = Number(target.slice(1));
  if (!registry) throw stale(target, "is not from a snapshot of the page this tab shows");
  if (registry.document !== documentOf(tabId) || (number < registry.first && number <= (lastRef.get(tabId) ?? 0))) {
    throw stale(target, "is from an earlier page of this tab, or from before the tools attached to it again");
  }
  const node = registry.shown.get(target);
  if (node === undefined) throw stale(target, "is not in the latest snapshot of this page");
  return node;
}

async function querySelector(tabId, selector) {
  const contextId = await utilityWorld(tabId);
  const { result, exceptionDetails } = await send(tabId, "Runtime.evaluate", {
    expression: `document.querySelector(${JSON.stringify(selector)})`,
    contextId,
    objectGroup: "browser-mcp",
  });
  if (exceptionDetails) throw invalidArguments(`"${selector}" is neither a ref like e12 nor a valid CSS selector`);
  if (result.subtype === "null") throw new ActionError(Code.ACTION_FAILED, `"${selector}" does not match any element`);
  const { node } = await send(tabId, "DOM.describeNode", { objectId: result.objectId });
  return node.backendNodeId;
}
