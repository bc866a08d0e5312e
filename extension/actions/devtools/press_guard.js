// A click's last safeguard. The point is checked right before the press (elements.js's
// confirmPoint), but a page can still move between that look and the press: a frame that shrinks
// as the mouse comes, a banner that slides in. A press that lands elsewhere would click whatever
// is there and answer as done; a release there leaves the element pressed but not clicked. So
// while a click's presses and releases go out, listeners in the tools' isolated worlds of the
// element's document and of the documents around it take every event from a press or release
// that lands off the element on (pointer, mouse and click events, their defaults prevented)
// before the page's own listeners below them hear it, and the click says it missed.
// What the page cannot see it cannot stop, except a listener it put on its window first.

import { OBJECT_GROUP, send, utilityWorld } from "./debugger.js";
import { frameWorlds } from "./frames.js";
import { sleep } from "../../base/errors.js";

// Longer than any click's presses take, even on a loaded machine.
const GUARD_MS = 10_000;
// How long the page may take to hear a click's input once Chromium has answered it.
const SETTLE_MS = 3_000;
const POLL_MS = 20;
const GUARDED = ["pointerdown", "mousedown", "pointerup", "mouseup", "click", "auxclick", "dblclick", "contextmenu"];

// Run with the element as `this` in its own document, with nothing in the others (where any press
// is off the element). From a press or release off the element on, every event is taken.
const GUARD = `function (types) {
  const element = this instanceof Node ? this : null;
  const name = (node) => {
    const tag = node.localName || node.nodeName.toLowerCase();
    return "<" + tag + (node.id ? "#" + node.id : node.classList?.[0] ? "." + node.classList[0] : "") + ">";
  };
  // The element's own parts (its shadow tree too) and its label are the element. A host whose
  // closed shadow tree holds it hides where in there the press went: given the benefit. Any other
  // element around it is not: a release there clicks that element, not this one.
  const reaches = (target) => {
    if (!element) return false;
    if (target.control === element) return true;
    for (let node = element; node; ) {
      const root = node.parentNode ? null : node;
      node = node.parentNode || node.host;
      if (root && node === target && root.mode === "closed") return true;
    }
    for (let node = target; node; node = node.parentNode || node.host) if (node === element) return true;
    return false;
  };
  let missed = null;
  const count = { pointerdown: 0, pointerup: 0 };
  const guard = (event) => {
    if (event.type in count) count[event.type] += 1;
    // A release elsewhere clicks no element (the click goes to what both share), nor does a press.
    if (missed === null && /(down|up)$/.test(event.type)) {
      const target = event.composedPath()[0] ?? event.target;
      if (!reaches(target)) missed = target instanceof Node ? name(target) : "the window";
    }
    if (missed !== null) {
      event.preventDefault();
      event.stopImmediatePropagation();
    }
  };
  const finish = () => {
    clearTimeout(expiry);
    for (const type of types) removeEventListener(type, guard, { capture: true });
  };
  for (const type of types) addEventListener(type, guard, { capture: true });
  // Whatever becomes of the click (a dialog holds it, its tab's debugger goes), the person's own
  // clicks later are never judged.
  const expiry = setTimeout(finish, ${GUARD_MS});
  return {
    state: () => ({ missed, presses: count.pointerdown, releases: count.pointerup }),
    finish,
  };
}`;

async function guardIn(target, how) {
  const { result } = await send(target, "Runtime.callFunctionOn", {
    ...how,
    functionDeclaration: GUARD,
    arguments: [{ value: GUARDED }],
    objectGroup: OBJECT_GROUP,
  });
  return async (method) =>
    (
      await send(target, "Runtime.callFunctionOn", {
        objectId: result.objectId,
        functionDeclaration: `function () { return this.${method}(); }`,
        returnByValue: true,
      })
    ).result.value;
}

/**
 * Guard the presses about to go to `element` (elements.js's). `finish(presses)` waits until the
 * element's document has heard the releases of `presses` presses (Chromium may answer input a
 * little before the page hears it), takes the guards away and answers why the click missed, as
 * {why, late}, or null when it reached the element (or it could not be told: a document gone with
 * its page, which the click may have left): what a press or release landed on instead, or that
 * the element's document heard no press, which Chromium now and then drops on a page that changes
 * under a still mouse. Input not heard within SETTLE_MS is `late`: lost, or still to come,
 * unguarded.
 */
export async function guardPress(element) {
  const around = [{ target: element.tabId, world: await utilityWorld(element.tabId) }, ...frameWorlds(element.tabId)];
  const others = around.filter(({ target, world }) => !(target === element.session && world === element.world));
  const guards = await Promise.all([
    guardIn(element.session, { objectId: element.objectId }).catch(() => null),
    ...others.map(({ target, world }) => guardIn(target, { executionContextId: world }).catch(() => null)),
  ]);
  const all = (method) => Promise.all(guards.map((call) => (call ? call(method).catch(() => null) : null)));
  return {
    async finish(presses) {
      const deadline = Date.now() + SETTLE_MS;
      for (;;) {
        const [mine, ...theirs] = await all("state");
        const landed = [mine, ...theirs].find((said) => said?.missed);
        if (landed || !mine || mine.releases >= presses) {
          await all("finish");
          if (landed) return { why: `${landed.missed} took the press or release`, late: false };
          return mine && mine.presses < presses ? { why: "the page heard no press", late: false } : null;
        }
        if (Date.now() > deadline) {
          await all("finish");
          const unheard = mine.presses < presses ? "press nor release" : "release";
          return { why: `the page heard no ${unheard} within ${SETTLE_MS / 1000} s`, late: true };
        }
        await sleep(POLL_MS);
      }
    },
    /** Take the guards away at once: the click failed before its input was all sent. */
    async drop() {
      await all("finish");
    },
  };
}
