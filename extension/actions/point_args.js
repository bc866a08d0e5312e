// The arguments of the tools that act at a point of the viewport (browser_mouse_click_xy, _move_xy,
// _drag_xy, _wheel), checked alike by both page drivers: the DevTools driver's pointer.js and the
// WebExtension driver's webext/input.js.

import { invalidArguments } from "../base/errors.js";

export const MAX_DELAY_MS = 5_000;

/** The numbers `names` of args, each a finite number. */
export function numbers(args, names) {
  for (const name of names) {
    if (typeof args[name] !== "number" || !Number.isFinite(args[name])) {
      throw invalidArguments(`${name} must be a number (CSS pixels of the viewport, as in its screenshot)`);
    }
  }
  return names.map((name) => args[name]);
}

/** browser_mouse_click_xy's {clickCount, delay}, checked, with their defaults. */
export function clickOptions(args) {
  const clickCount = args.clickCount ?? 1;
  if (!Number.isInteger(clickCount) || clickCount < 1 || clickCount > 3) {
    throw invalidArguments("clickCount must be 1, 2 or 3");
  }
  const delay = args.delay ?? 0;
  if (typeof delay !== "number" || !(delay >= 0 && delay <= MAX_DELAY_MS)) {
    throw invalidArguments(`delay must be a number of milliseconds from 0 to ${MAX_DELAY_MS}`);
  }
  return { clickCount, delay };
}

/** The message of a point outside a viewport of `width` x `height` CSS pixels. */
export function outsideViewport(x, y, width, height) {
  return (
    `(${x}, ${y}) is outside the tab's viewport, which is ${width}x${height} CSS pixels` +
    ` (x from 0 to ${width - 1}, y from 0 to ${height - 1}): take the point from browser_take_screenshot`
  );
}
