// The page as an accessibility snapshot, in the YAML shape Playwright MCP shows clients. It is
// computed in the page by the tools' agent (agent.js: page/snapshot.js, page/items.js,
// page/roles.js, page/names.js, page/yaml.js), in one walk of the DOM in the tools' isolated world, and comes back as text: one
// protocol round trip, whatever the page's size. Asking Chromium for its accessibility tree
// instead (Accessibility.getFullAXTree) took several times as long on a large page, most of it
// in building and sending every node's properties.
//
// Charts drawn with SVG (d3 and the like) add click handlers by script, which the agent cannot
// see from its world; Chromium lists them (DOMDebugger.getEventListeners, given the drawing as the
// page's own world sees it, as listeners belong to the world that added them), so their shapes
// are found here, drawing by drawing, and handed to the agent with the snapshot's call.

import { OBJECT_GROUP, documentOf, send, utilityWorld } from "./debugger.js";
import { callAgent } from "./agent.js";
import { ActionError, Code } from "../../base/errors.js";
import { frameFor } from "./frames.js";
import { refsFor } from "../ref_numbers.js";
import { NO_LIMIT, cut, depthOfLine, navigated, underFrameLine } from "../snapshot_text.js";

/** Events whose listeners make a shape or a group of a drawing something to click or hover (a tooltip). */
const POINTER_EVENTS = new Set(
  "click dblclick mousedown mouseup pointerdown pointerup touchstart mouseover mouseenter pointerover pointerenter".split(
    " ",
  ),
);
/** Beyond this many listening shapes (a scatter plot of thousands), the rest show by their looks alone. */
const MAX_LISTENING_SHAPES = 2000;
/**
 * Drawings no larger than this on both sides (CSS pixels) are icons, whose handlers sit on the
 * button or the drawing around them: asking for each of the hundreds a page may have would cost
 * several times the snapshot itself.
 */
const ICON_SIZE = 32;
/** Drawings asked about per snapshot, the largest first. */
const MAX_DRAWINGS = 50;

/**
 * The tab's page as a snapshot: {url, title, yaml, length}, `yaml` cut at a line's end within
 * `limit` characters, `length` the whole one's. With `root` (an element from elementFor), only
 * that element and what is inside it; with `depth`, elements nested no deeper than that (1: the
 * top ones and their children). Each frame's content goes under its `- iframe` line, snapshot in
 * its own document.
 */
export async function captureSnapshot(tabId, { root, depth, limit, boxes = false }) {
  const document = documentOf(tabId);
  const world = root?.world ?? (await utilityWorld(tabId));
  const frame = root?.frame;
  const session = frame?.target ?? tabId;
  const refs = frame ?? refsFor(tabId);
  const options = { depth, limit, lastRef: refs.lastRef, prefix: frame?.prefix ?? "", boxes };
  let snapshot;
  try {
    snapshot = await agentSnapshot(session, world, root, options);
    if (snapshot.error) throw new ActionError(Code.ACTION_FAILED, snapshot.error);
    refs.update(snapshot.lastRef);
    const whole = await withFrames(tabId, frame, snapshot, { depth, limit: NO_LIMIT, boxes });
    if (documentOf(tabId) !== document) throw navigated();
    return cut({ ...snapshot, ...whole }, limit, snapshot.length - snapshot.yaml.length);
  } catch (error) {
    // The document's world goes with it: a navigation that was starting as the call went out.
    if (documentOf(tabId) !== document || /context/i.test(error.message)) throw navigated();
    throw error;
  }
}

/** A snapshot by the agent in `world` of `session` (the tab, or an out-of-process frame's session). */
async function agentSnapshot(session, world, root, options) {
  const listening = await listeningShapes(session, world, root);
  return callAgent(session, world, "snapshot", [
    root ? { objectId: root.objectId } : { value: null },
    { value: options },
    ...listening,
  ]);
}

/**
 * The snapshot's {yaml} with its frames' content under their lines, and theirs under theirs; the
 * snapshot is of `frame`'s document (frames.js), or of the page's when that is null. The frames
 * are snapshot side by side; one that cannot be (it is navigating, or its process is busy past
 * the command's time) shows as its iframe line alone rather than failing the page's snapshot.
 */
async function withFrames(tabId, frame, snapshot, options) {
  let { yaml } = snapshot;
  const inners = await Promise.all(
    snapshot.frames.map((ref) => {
      // With a depth, a frame's content goes on from its iframe line's depth, and stops as the page's does.
      const depth = options.depth === undefined ? undefined : options.depth - depthOfLine(yaml, ref) - 1;
      if (depth < 0) return null;
      return frameSnapshot(tabId, frame, ref, { ...options, depth }).catch(() => null);
    }),
  );
  for (const [index, ref] of snapshot.frames.entries()) {
    const inner = inners[index];
    if (!inner) continue;
    const label = inner.origin !== snapshot.origin && inner.origin !== "null" ? inner.origin : "";
    yaml = underFrameLine(yaml, ref, label, inner.yaml);
  }
  return { yaml };
}

/** The snapshot of the frame whose iframe element, in `parent`'s document, has ref `ref`; or null. */
async function frameSnapshot(tabId, parent, ref, options) {
  const session = parent?.target ?? tabId;
  const world = parent?.world ?? (await utilityWorld(tabId));
  const element = await callAgent(session, world, "element", [{ value: ref }], false);
  if (!element?.objectId) return null;
  const { node } = await send(session, "DOM.describeNode", { objectId: element.objectId });
  const frame = node.frameId ? await frameFor(tabId, node.frameId, node.backendNodeId, parent) : null;
  if (!frame) return null;
  const inner = await agentSnapshot(frame.target, frame.world, undefined, {
    ...options,
    lastRef: frame.lastRef,
    prefix: frame.prefix,
  });
  if (inner.error) return null;
  frame.update(inner.lastRef);
  return { ...inner, ...(await withFrames(tabId, frame, inner, options)) };
}

/**
 * The elements of the SVG drawings in the page (or in `root`) that listen for clicks or hovers:
 * handles in `world`. Icons are left to their looks (see ICON_SIZE).
 */
async function listeningShapes(session, world, root) {
  const { result, exceptionDetails } = await send(session, "Runtime.callFunctionOn", {
    functionDeclaration: `function (iconSize, most) {
      const scope = this instanceof Element ? this : document;
      if (scope.ownerSVGElement || scope.localName === "svg") return [scope];
      const sized = [...scope.querySelectorAll("svg")]
        .filter((svg) => !svg.ownerSVGElement)
        .map((svg) => ({ svg, box: svg.getBoundingClientRect() }))
        .filter(({ box }) => box.width > iconSize || box.height > iconSize);
      sized.sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height);
      return sized.slice(0, most).map(({ svg }) => svg);
    }`,
    ...(root ? { objectId: root.objectId } : { executionContextId: world }),
    arguments: [{ value: ICON_SIZE }, { value: MAX_DRAWINGS }],
    objectGroup: OBJECT_GROUP,
  });
  if (exceptionDetails || !result.objectId || result.description === "Array(0)") return [];
  const { result: entries } = await send(session, "Runtime.getProperties", {
    objectId: result.objectId,
    ownProperties: true,
  });
  const drawings = entries.filter((entry) => /^\d+$/.test(entry.name) && entry.value?.objectId);
  const listenersOf = async (drawing) => {
    const { node } = await send(session, "DOM.describeNode", { objectId: drawing.value.objectId });
    const { object } = await send(session, "DOM.resolveNode", {
      backendNodeId: node.backendNodeId,
      objectGroup: OBJECT_GROUP,
    });
    const { listeners } = await send(session, "DOMDebugger.getEventListeners", {
      objectId: object.objectId,
      depth: -1,
    });
    return listeners;
  };
  // A drawing removed in the meantime has nothing to show.
  const listed = await Promise.all(drawings.map((drawing) => listenersOf(drawing).catch(() => [])));
  const nodes = new Set();
  for (const listener of listed.flat()) {
    if (POINTER_EVENTS.has(listener.type) && listener.backendNodeId) nodes.add(listener.backendNodeId);
  }
  const resolved = await Promise.all(
    [...nodes].slice(0, MAX_LISTENING_SHAPES).map((backendNodeId) =>
      send(session, "DOM.resolveNode", { backendNodeId, executionContextId: world, objectGroup: OBJECT_GROUP }).catch(
        () => null, // gone since it was listed
      ),
    ),
  );
  return resolved.filter(Boolean).map(({ object }) => ({ objectId: object.objectId }));
}
