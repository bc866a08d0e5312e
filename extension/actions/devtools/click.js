// browser_click: the mouse onto the element (input.js's pointerOnto), then its presses, guarded
// (press_guard.js) so that a press the page moved the element away from acts on nothing. A missed
// click aims again once, as a person would; a second miss fails, naming what was there.

import { callOn, describe, elementFor } from "./elements.js";
import { ActionError, Code, invalidArguments } from "../../base/errors.js";
import { BUTTONS, modifierBits, mouse, pointerOnto } from "./input.js";
import { guardPress } from "./press_guard.js";

const AIMS = 2;

/** browser_click {target, doubleClick?, button?, modifiers?} */
export async function click(tabId, args) {
  const button = args.button ?? "left";
  if (!BUTTONS[button]) throw invalidArguments("button must be left, right or middle");
  const modifiers = modifierBits(args.modifiers);
  const element = await elementFor(tabId, args.target);
  // Chromium sends a disabled control the presses and nothing comes of them: said, not answered as done.
  if (await callOn(element, `function () { return this.nodeType === 1 && this.matches(":disabled"); }`)) {
    throw new ActionError(Code.ACTION_FAILED, `cannot click ${await describe(element)}: it is disabled`);
  }
  const presses = args.doubleClick ? 2 : 1;
  for (let aim = 1; ; aim++) {
    const point = await pointerOnto(tabId, element, { modifiers });
    const guard = await guardPress(element);
    try {
      for (let clickCount = 1; clickCount <= presses; clickCount++) {
        await mouse(tabId, "mousePressed", point, { button, buttons: BUTTONS[button], clickCount, modifiers });
        await mouse(tabId, "mouseReleased", point, { button, buttons: 0, clickCount, modifiers });
      }
    } catch (error) {
      // A guard left in place would take the person's own clicks on the page.
      await guard.drop();
      throw error;
    }
    const missed = await guard.finish(presses);
    if (missed === null) return;
    // A release still on its way may land yet: aiming again could click twice.
    if (missed.late) {
      throw new ActionError(
        Code.TIMEOUT,
        `cannot click ${await describe(element)}: ${missed.why}; Chromium lost the input, or the page is too busy to take it yet (then the click lands when it does)`,
      );
    }
    if (aim === AIMS) {
      throw new ActionError(
        Code.ELEMENT_MOVED,
        `cannot reach ${await describe(element)} as the mouse pressed: ${missed.why}, ${aim} times; nothing was clicked`,
      );
    }
  }
}
