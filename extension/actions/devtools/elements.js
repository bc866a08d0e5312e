// The element a tool acts on: from its `target` to a handle in the page, the helpers that read or
// set its state there, and the point in the viewport where real input reaches it.
//
// Helpers run in the tools' isolated world, so a page that replaces DOM methods cannot change what
// they see; only evaluate runs in the page's own world, because that is what its caller asks for.

import { OBJECT_GROUP, documentOf, send } from "./debugger.js";
import { ActionError, Code, sleep } from "../../base/errors.js";
import { frameOffset, frameSessions, revealFrame, settleScroll } from "./frames.js";
import { resolveTarget } from "./refs.js";

const HIT_RETRIES = 5;
const HIT_RETRY_MS = 100;

/**
 * The element `target` names, as {tabId, session (where commands about it go: the tab, or its
 * out-of-process frame's session), document, node (backend node id), objectId, world (the
 * isolated world of its document, the page's or its frame's), frame (frames.js's, in a frame)}.
 * A ref whose element left the page is stale like one from another page.
 */
export async function elementFor(tabId, target) {
  const document = documentOf(tabId);
  const { objectId, world, frame } = await resolveTarget(tabId, target);
  const session = frame?.target ?? tabId;
  const { node } = await send(session, "DOM.describeNode", { objectId });
  return { tabId, session, document, node: node.backendNodeId, objectId, world, frame };
}

/** Run `functionSource` with the element as `this` and `args` as JSON values; its JSON result. */
export async function callOn(element, functionSource, ...args) {
  const { result, exceptionDetails } = await send(element.session, "Runtime.callFunctionOn", {
    objectId: element.objectId,
    functionDeclaration: functionSource,
    arguments: args.map((value) => ({ value })),
    returnByValue: true,
    awaitPromise: true,
  });
  if (exceptionDetails) {
    const reason = exceptionDetails.exception?.description ?? exceptionDetails.text;
    throw new ActionError(Code.ACTION_FAILED, reason.split("\n")[0]);
  }
  return result.value;
}

/** Fail with `navigated` if the tab left the element's document since it was looked up. */
export function checkSameDocument(element) {
  if (documentOf(element.tabId) !== element.document) {
    throw new ActionError(Code.NAVIGATED, "the page navigated away before the action reached the element");
  }
}

/** What the element is, for messages: `<button>` with its id or first class. */
export async function describe(element) {
  return callOn(
    element,
    `function () {
      const tag = this.localName || this.nodeName.toLowerCase();
      return "<" + tag + (this.id ? "#" + this.id : this.classList?.[0] ? "." + this.classList[0] : "") + ">";
    }`,
  );
}

/**
 * Scroll the element into view and find a point inside it that input would reach: the middle of
 * its first box on screen, provided nothing else covers it there (an overlay, a dialog). Boxes
 * that are still moving get a few tries. Fails with element_covered naming what is on top, or
 * action_failed when the element shows nowhere.
 */
export async function pointFor(element) {
  let lastProblem = { code: Code.ACTION_FAILED, text: "" };
  for (let attempt = 0; attempt < HIT_RETRIES; attempt++) {
    if (attempt) await sleep(HIT_RETRY_MS);
    await revealFrame(element.frame);
    await send(element.session, "DOM.scrollIntoViewIfNeeded", { backendNodeId: element.node }).catch(() => {});
    await settleScroll(element.frame);
    let point = await visiblePoint(element);
    if (!point) {
      lastProblem = { code: Code.ACTION_FAILED, text: "it has no visible box (hidden, empty or outside the page)" };
      continue;
    }
    let covering = await coveringElement(element, point);
    const drawn = covering ? await pointInsideDrawn(element, point) : null;
    if (drawn) [point, covering] = [drawn, await coveringElement(element, drawn)];
    if (!covering) {
      // In the viewport of the element's frame, when that is out of process: input goes to the tab's.
      const offset = await frameOffset(element.frame);
      return { x: point.x + offset.x, y: point.y + offset.y };
    }
    lastProblem = { code: Code.ELEMENT_COVERED, text: `${covering} covers it at ${where(point)}` };
  }
  throw new ActionError(lastProblem.code, `cannot reach ${await describe(element)}: ${lastProblem.text}`);
}

const where = (point) => `(${Math.round(point.x)}, ${Math.round(point.y)})`;

/**
 * Right before input goes to `point` (pointFor's, in the tab's viewport): the point if input there
 * still reaches the element or one of its parts. Between the scroll and the input the page may
 * have moved (a banner came in above, it grew or shrank as it scrolled) or the viewport shrunk
 * (Chromium's "started debugging this browser" bar comes just after the debugger first attaches,
 * and takes the bottom of the viewport), and input there would land on whatever is there now, and
 * be answered as done. Then the element is scrolled to again and its new point checked once more;
 * if that misses too, this fails: element_covered naming what is on top, or element_moved.
 */
export async function confirmPoint(element, point) {
  if (!(await missAt(element, point))) return point;
  const again = await pointFor(element);
  const miss = await missAt(element, again);
  if (!miss) return again;
  throw new ActionError(miss.code, `cannot reach ${await describe(element)}: ${miss.text}, scrolled to twice`);
}

/**
 * Why input at `point` (in the tab's viewport) would miss the element now, as {code, text}, or
 * null when it would reach it: the point is out of the viewport, or something else is there,
 * covering the element (its box is still under the point) or where the element was before it moved.
 */
export async function missAt(element, point) {
  const offset = await frameOffset(element.frame);
  const local = { x: point.x - offset.x, y: point.y - offset.y };
  const views = [await send(element.session, "Page.getLayoutMetrics")];
  if (element.session !== element.tabId) views.push(await send(element.tabId, "Page.getLayoutMetrics"));
  const [{ cssLayoutViewport: view }] = views;
  for (const [{ cssLayoutViewport: bounds }, at] of views.map((metrics, i) => [metrics, i ? point : local])) {
    if (at.x < 0 || at.y < 0 || at.x >= bounds.clientWidth || at.y >= bounds.clientHeight) {
      const size = `${Math.round(bounds.clientWidth)}x${Math.round(bounds.clientHeight)}`;
      return { code: Code.ELEMENT_MOVED, text: `it moved: ${where(point)} is outside the viewport, now ${size}` };
    }
  }
  const covering = await coveringElement(element, { inDocument: { x: local.x + view.pageX, y: local.y + view.pageY } });
  if (!covering) return null;
  if (await boxHolds(element, local)) {
    return { code: Code.ELEMENT_COVERED, text: `${covering} covers it at ${where(point)}` };
  }
  return { code: Code.ELEMENT_MOVED, text: `it moved: ${covering} is at ${where(point)} now` };
}

/** Whether one of the element's boxes holds `point` (in its frame's viewport). */
async function boxHolds(element, point) {
  try {
    const { quads } = await send(element.session, "DOM.getContentQuads", { backendNodeId: element.node });
    return quads.some((quad) => {
      const xs = [quad[0], quad[2], quad[4], quad[6]];
      const ys = [quad[1], quad[3], quad[5], quad[7]];
      return (
        point.x >= Math.min(...xs) &&
        point.x <= Math.max(...xs) &&
        point.y >= Math.min(...ys) &&
        point.y <= Math.max(...ys)
      );
    });
  } catch {
    return false;
  }
}

/**
 * For a part of an SVG drawing whose box's middle misses it (a donut's slice, a line, a group with
 * gaps): the point nearest that middle where the part itself is hit, on a grid over its box or
 * along its shapes' outlines; null when there is none on screen or it is not drawn.
 */
async function pointInsideDrawn(element, middle) {
  return callOn(
    element,
    `function (middle) {
      if (!this.ownerSVGElement) return null;
      const box = this.getBoundingClientRect();
      const candidates = [];
      const STEPS = 16;
      for (let i = 0; i <= STEPS; i++) {
        for (let j = 0; j <= STEPS; j++) {
          candidates.push({ x: box.left + (box.width * i) / STEPS, y: box.top + (box.height * j) / STEPS });
        }
      }
      const shapes = this instanceof SVGGeometryElement ? [this] : [...this.querySelectorAll("*")]
        .filter((part) => part instanceof SVGGeometryElement).slice(0, 20);
      for (const shape of shapes) {
        const matrix = shape.getScreenCTM();
        const length = shape.getTotalLength();
        if (!matrix || !length) continue;
        for (let k = 0; k < 32; k++) {
          const { x, y } = shape.getPointAtLength((length * (k + 0.5)) / 32).matrixTransform(matrix);
          candidates.push({ x, y });
        }
      }
      const distance = (point) => Math.hypot(point.x - middle.x, point.y - middle.y);
      candidates.sort((a, b) => distance(a) - distance(b));
      for (const candidate of candidates) {
        const x = Math.round(candidate.x);
        const y = Math.round(candidate.y);
        if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) continue;
        const hit = document.elementFromPoint(x, y);
        if (hit && this.contains(hit)) return { x, y };
      }
      return null;
    }`,
    middle,
  );
}

async function visiblePoint(element) {
  let quads;
  try {
    ({ quads } = await send(element.session, "DOM.getContentQuads", { backendNodeId: element.node }));
  } catch {
    return null;
  }
  const { cssLayoutViewport: view } = await send(element.session, "Page.getLayoutMetrics");
  for (const quad of quads) {
    const xs = [quad[0], quad[2], quad[4], quad[6]];
    const ys = [quad[1], quad[3], quad[5], quad[7]];
    // The part of the box inside the viewport; its middle is where a person would click.
    const left = Math.max(Math.min(...xs), 0);
    const right = Math.min(Math.max(...xs), view.clientWidth);
    const top = Math.max(Math.min(...ys), 0);
    const bottom = Math.min(Math.max(...ys), view.clientHeight);
    if (right - left >= 1 && bottom - top >= 1) {
      // In the viewport, where input goes; the hit test wants it in the document, past the scroll.
      const [x, y] = [(left + right) / 2, (top + bottom) / 2];
      return { x, y, inDocument: { x: x + view.pageX, y: y + view.pageY } };
    }
  }
  return null;
}

/** The element that input at `point` would reach instead of this one, or null when it is this one. */
async function coveringElement(element, point) {
  let hit;
  try {
    hit = await send(element.session, "DOM.getNodeForLocation", {
      x: Math.round(point.inDocument.x),
      y: Math.round(point.inDocument.y),
      includeUserAgentShadowDOM: false,
      ignorePointerEventsNone: true,
    });
  } catch {
    return null; // nothing to compare with: let the input decide
  }
  if (hit.backendNodeId === element.node) return null;
  const { object } = await send(element.session, "DOM.resolveNode", {
    backendNodeId: hit.backendNodeId,
    executionContextId: element.world,
    objectGroup: OBJECT_GROUP,
  });
  const { result } = await send(element.session, "Runtime.callFunctionOn", {
    objectId: element.objectId,
    functionDeclaration: `function (hit) {
      // The element's own parts, its shadow tree included, are the element; a label passes its
      // clicks on to its control.
      for (let node = hit; node; node = node.parentNode || node.host) if (node === this) return null;
      if (hit.control === this) return null;
      const tag = hit.localName || hit.nodeName.toLowerCase();
      return "<" + tag + (hit.id ? "#" + hit.id : hit.classList?.[0] ? "." + hit.classList[0] : "") + ">";
    }`,
    arguments: [{ objectId: object.objectId }],
    returnByValue: true,
  });
  return result.value ?? null;
}

/** Forget the handles this action made in the page and its out-of-process frames. */
export async function releaseHandles(tabId) {
  const release = (target) => send(target, "Runtime.releaseObjectGroup", { objectGroup: OBJECT_GROUP });
  await Promise.all([tabId, ...frameSessions(tabId)].map((target) => release(target).catch(() => {})));
}
