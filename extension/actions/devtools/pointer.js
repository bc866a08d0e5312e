// The pointer beyond one click: one element dragged onto another (browser_drag), and the mouse at
// a point of the viewport (browser_mouse_click_xy, _move_xy, _drag_xy, _down, _up, _wheel) for
// what has no ref, such as a canvas, a map or a chart. Points are CSS pixels from the viewport's
// top left corner, the pixels of a viewport screenshot at its default scale, which is also what
// Input.dispatchMouseEvent takes; a point outside the viewport is refused, not clamped.
//
// A drag moves the mouse in steps, so a page that follows pointer events (a sortable list) sees
// it travel. An HTML5 drag (draggable, dataTransfer) is the browser's own loop, which input sent
// through the protocol never reaches: with Input.setInterceptDrags on, Chromium hands the drag's
// data over instead of starting that loop, and Input.dispatchDragEvent carries it across the page
// and drops it, as Playwright does. A drag the page does not take (no drop event) is an error.
//
// Where the mouse is, which buttons it holds and the HTML5 drag it carries are kept per tab, so
// that down, move and up make one gesture across calls (a drag and drop too); they are forgotten
// with the tab's debugger link.

import { onTabForgotten, send, waitForEvent } from "./debugger.js";
import { checkSameDocument, confirmPoint, describe, elementFor, pointFor } from "./elements.js";
import { ActionError, Code, invalidArguments, sleep } from "../../base/errors.js";
import { BUTTONS, mouse } from "./input.js";
import { watchPage } from "./page_watch.js";
import { clickOptions, numbers, outsideViewport } from "../point_args.js";

const DRAG_STEPS = 10;
// Beyond Chromium's drag threshold (a few pixels) from where the button went down.
const NUDGE_PX = 8;
// How long Chromium may take to hand over an HTML5 drag the page started.
const DRAG_HANDOVER_MS = 5_000;
// A wheel reaches the page within a frame or two; one that scrolls nothing (the page's end) causes
// no scroll event, so that wait stays short.
const WHEEL_ARRIVAL_MS = 1_000;
const SCROLL_ARRIVAL_MS = 300;

/**
 * tab id -> {x, y, buttons, drag}: where the mouse is, the buttons it holds (a bit each), and the
 * data of the HTML5 drag it carries (null when none).
 */
const mice = new Map();
onTabForgotten((tabId) => mice.delete(tabId));

function mouseOf(tabId) {
  if (!mice.has(tabId)) mice.set(tabId, { x: 0, y: 0, buttons: 0, drag: null });
  return mice.get(tabId);
}

function buttonOf(args) {
  const button = args.button ?? "left";
  if (!Object.hasOwn(BUTTONS, button)) throw invalidArguments("button must be left, right or middle");
  return button;
}

/** Each [x, y] as a point, or invalid_arguments naming the first one outside the tab's viewport. */
async function inViewport(tabId, ...pairs) {
  const { cssVisualViewport: view } = await send(tabId, "Page.getLayoutMetrics");
  const [width, height] = [Math.floor(view.clientWidth), Math.floor(view.clientHeight)];
  for (const [x, y] of pairs) {
    if (!(x >= 0 && y >= 0 && x < width && y < height)) {
      throw invalidArguments(outsideViewport(x, y, width, height));
    }
  }
  return pairs.map(([x, y]) => ({ x, y }));
}

async function moveTo(tabId, point) {
  const held = mouseOf(tabId);
  if (held.drag) await send(tabId, "Input.dispatchDragEvent", { type: "dragOver", ...point, data: held.drag });
  else if (held.buttons & BUTTONS.left) await moveHolding(tabId, point);
  else {
    const button = Object.keys(BUTTONS).find((name) => held.buttons & BUTTONS[name]) ?? "none";
    await mouse(tabId, "mouseMoved", point, { button, buttons: held.buttons });
  }
  Object.assign(held, { x: point.x, y: point.y });
}

/**
 * Move with the left button held, which may start an HTML5 drag: intercepted, it becomes the
 * tab's drag (its data), entered at `point`, for later moves to carry and a release to drop.
 */
async function moveHolding(tabId, point) {
  const held = mouseOf(tabId);
  const page = await watchPage(tabId, ["dragstart"]);
  const handedOver = waitForEvent(tabId, (method) => method === "Input.dragIntercepted", DRAG_HANDOVER_MS);
  try {
    await send(tabId, "Input.setInterceptDrags", { enabled: true });
    await mouse(tabId, "mouseMoved", point, { button: "left", buttons: held.buttons });
    // Input is answered once the page has handled it: a drag it started (and did not cancel) is seen.
    if (!(await page.ask("return Boolean(this.seen.dragstart && !this.seen.dragstart.defaultPrevented);"))) return;
    const data = (await handedOver)?.data;
    if (!data) throw new ActionError(Code.ACTION_FAILED, "the page started a drag, but Chromium did not hand it over");
    await send(tabId, "Input.dispatchDragEvent", { type: "dragEnter", ...point, data });
    held.drag = data;
  } finally {
    handedOver.cancel();
    await send(tabId, "Input.setInterceptDrags", { enabled: false }).catch(() => {});
    await page.stop();
  }
}

async function press(tabId, button, clickCount = 1) {
  const held = mouseOf(tabId);
  await mouse(tabId, "mousePressed", held, { button, buttons: held.buttons | BUTTONS[button], clickCount });
  held.buttons |= BUTTONS[button];
}

/**
 * Release `button` where the mouse is; during an HTML5 drag, drop there. Whether the page took
 * the drop, or null when no drag was dropped.
 */
async function release(tabId, button, clickCount = 1) {
  const held = mouseOf(tabId);
  if (!(held.drag && button === "left")) {
    await mouse(tabId, "mouseReleased", held, { button, buttons: held.buttons & ~BUTTONS[button], clickCount });
    held.buttons &= ~BUTTONS[button];
    return null;
  }
  const page = await watchPage(tabId, ["drop"]);
  try {
    await send(tabId, "Input.dispatchDragEvent", { type: "drop", x: held.x, y: held.y, data: held.drag });
    return await page.ask("return Boolean(this.seen.drop);");
  } finally {
    // The drag took the release: the page hears no mouseup after a drop.
    held.drag = null;
    held.buttons &= ~BUTTONS.left;
    await page.stop();
  }
}

/** Let go of the left button after a failure: an HTML5 drag is cancelled, a press released. */
async function letGo(tabId) {
  const held = mouseOf(tabId);
  if (held.drag) {
    const data = held.drag;
    held.drag = null;
    held.buttons &= ~BUTTONS.left;
    await send(tabId, "Input.dispatchDragEvent", { type: "dragCancel", x: held.x, y: held.y, data }).catch(() => {});
  } else if (held.buttons & BUTTONS.left) {
    await release(tabId, "left").catch(() => {});
  }
}

/**
 * Press the left button at `start`, move in steps to the point `findEnd()` gives once pressed
 * (it may scroll the page), and release it there; `towards` is where the end was last seen.
 * `aim(point, place)` says where input meant for `point` goes now, right before the press
 * ("start") and the release ("end"): the same point, another where the page moved what is
 * dragged, or a failure. Whether the page took an HTML5 drop, or null when no HTML5 drag started
 * (a drag made of pointer events only).
 */
async function dragBetween(tabId, start, towards, findEnd, aim = async (point) => point) {
  await moveTo(tabId, start);
  try {
    const pressAt = await aim(start, "start");
    if (pressAt !== start) await moveTo(tabId, pressAt);
    await press(tabId, "left");
    // A few pixels towards the end first, past Chromium's drag threshold while the mouse is still
    // over what it pressed: an HTML5 drag starts there, before scrolling to the end could lose it.
    const [dx, dy] = [towards.x - start.x, towards.y - start.y];
    const length = Math.hypot(dx, dy);
    if (length > NUDGE_PX) {
      for (const part of [0.5, 1]) {
        await moveTo(tabId, {
          x: start.x + (dx / length) * NUDGE_PX * part,
          y: start.y + (dy / length) * NUDGE_PX * part,
        });
      }
    }
    const from = { ...mouseOf(tabId) };
    const end = await findEnd();
    for (let step = 1; step <= DRAG_STEPS; step++) {
      await moveTo(tabId, {
        x: from.x + ((end.x - from.x) * step) / DRAG_STEPS,
        y: from.y + ((end.y - from.y) * step) / DRAG_STEPS,
      });
    }
    const releaseAt = await aim(end, "end");
    if (releaseAt !== end) await moveTo(tabId, releaseAt);
    return await release(tabId, "left");
  } catch (error) {
    await letGo(tabId);
    throw error;
  }
}

/** browser_drag {startElement?, startTarget, endElement?, endTarget} */
export async function drag(tabId, args) {
  for (const name of ["startTarget", "endTarget"]) {
    if (typeof args[name] !== "string") {
      throw invalidArguments(`${name} must be an element's ref from the tab's latest browser_snapshot`);
    }
  }
  const source = await elementFor(tabId, args.startTarget);
  const target = await elementFor(tabId, args.endTarget);
  if (source.node === target.node) {
    throw invalidArguments(
      `startTarget and endTarget are the same element, ${await describe(source)}: a drag needs two different ones`,
    );
  }
  // Where it ends is checked before any button goes down, and found again once it is held.
  const towards = await pointFor(target);
  const start = await confirmPoint(source, await pointFor(source));
  checkSameDocument(source);
  const findEnd = async () => {
    const end = await pointFor(target);
    checkSameDocument(target);
    return end;
  };
  // The dragged element may have moved under the mouse before the press (see
  // elements.js's confirmPoint); so may the one it is dropped on before the release.
  const aim = (point, place) => confirmPoint(place === "start" ? source : target, point);
  const dropped = await dragBetween(tabId, start, towards, findEnd, aim);
  if (dropped === false) {
    throw new ActionError(
      Code.ACTION_FAILED,
      `dragged ${await describe(source)} onto ${await describe(target)}, but the page did not take the drop there`,
    );
  }
}

/** browser_mouse_click_xy {x, y, button?, clickCount?, delay?} */
export async function mouseClickXy(tabId, args) {
  const button = buttonOf(args);
  const { clickCount, delay } = clickOptions(args);
  const [point] = await inViewport(tabId, numbers(args, ["x", "y"]));
  await moveTo(tabId, point);
  // As a person's double click: the presses are counted, so the page hears click, click, dblclick.
  for (let count = 1; count <= clickCount; count++) {
    await press(tabId, button, count);
    if (delay) await sleep(delay);
    await release(tabId, button, count);
  }
}

/** browser_mouse_move_xy {x, y} */
export async function mouseMoveXy(tabId, args) {
  const [point] = await inViewport(tabId, numbers(args, ["x", "y"]));
  await moveTo(tabId, point);
}

/** browser_mouse_drag_xy {startX, startY, endX, endY} */
export async function mouseDragXy(tabId, args) {
  const [startX, startY, endX, endY] = numbers(args, ["startX", "startY", "endX", "endY"]);
  const [start, end] = await inViewport(tabId, [startX, startY], [endX, endY]);
  const dropped = await dragBetween(tabId, start, end, async () => end);
  if (dropped === false) {
    throw new ActionError(
      Code.ACTION_FAILED,
      `dragged from (${startX}, ${startY}) to (${endX}, ${endY}), but nothing there took the drop`,
    );
  }
}

/** browser_mouse_down {button?} */
export async function mouseDown(tabId, args) {
  await press(tabId, buttonOf(args));
}

/** browser_mouse_up {button?} */
export async function mouseUp(tabId, args) {
  const held = mouseOf(tabId);
  if ((await release(tabId, buttonOf(args))) === false) {
    throw new ActionError(
      Code.ACTION_FAILED,
      `released the drag at (${held.x}, ${held.y}), but the page did not take the drop there`,
    );
  }
}

/** browser_mouse_wheel {deltaX, deltaY} */
export async function mouseWheel(tabId, args) {
  const [deltaX, deltaY] = numbers(args, ["deltaX", "deltaY"]);
  const held = mouseOf(tabId);
  const page = await watchPage(tabId, ["wheel", "scroll"]);
  try {
    await mouse(tabId, "mouseWheel", held, { deltaX, deltaY, buttons: held.buttons });
    // The wheel reaches the page after its input is answered, and the scroll it causes a frame
    // later: the answer waits for both, so the page it reports (or a screenshot next) has moved.
    // Over a frame the wheel goes to the frame's document, unheard here: the wait is bounded.
    await page.ask(
      `return this.came("wheel", ${WHEEL_ARRIVAL_MS}).then((came) =>
        came && !this.seen.wheel.defaultPrevented && this.came("scroll", ${SCROLL_ARRIVAL_MS}));`,
    );
  } finally {
    await page.stop();
  }
}
