// browser_take_screenshot over the DevTools protocol: the viewport, the whole page or one element,
// captured by Chromium at the size images.js fits it to, so nothing is decoded here. Chromium
// paints no frames for a tab hidden behind another in a visible window, and would wait for one
// forever: such a capture fails with capture_failed instead of bringing the tab to the front,
// which would take it from the person.
//
// Attaching the debugger makes Chromium show its "started debugging this browser" bar, which
// shrinks the page's viewport a moment later; until then a capture holds stale pixels where the
// bar is about to be. A capture soon after attaching waits for that resize (or BAR_SETTLE_MS).

import { attach, attachedAt, send } from "./debugger.js";
import { elementFor } from "./elements.js";
import { frameOffset, revealFrame, settleScroll } from "./frames.js";
import { ActionError, Code, invalidArguments } from "../../base/errors.js";
import { FORMATS, capturedResult, fitted } from "../images.js";

const CAPTURE_TIMEOUT_MS = 8_000;
const HIDDEN_CAPTURE_TIMEOUT_MS = 3_000;
const BAR_SETTLE_MS = 1_000;

/** Wait until the viewport took the debugging bar into account, then for a frame drawn after it. */
async function afterBarSettles(tabId) {
  await attach(tabId);
  const left = attachedAt(tabId) + BAR_SETTLE_MS - Date.now();
  if (left <= 0) return;
  await send(tabId, "Runtime.evaluate", {
    expression: `new Promise((done) => {
      const timer = setTimeout(done, ${Math.round(left)});
      addEventListener("resize", () => {
        clearTimeout(timer);
        requestAnimationFrame(() => requestAnimationFrame(done));
      }, { once: true });
    })`,
    awaitPromise: true,
  }).catch(() => {});
}

/**
 * The area to capture, in CSS pixels of the document, what to call it, whether it may be cut to its
 * top part (`beyond`), and whether the capture must lay out the whole page (`wholePage`).
 */
async function areaOf(tabId, args) {
  const { cssVisualViewport: view, cssContentSize: content } = await send(tabId, "Page.getLayoutMetrics");
  if (args.target !== undefined) {
    const element = await elementFor(tabId, args.target);
    await revealFrame(element.frame);
    await send(element.session, "DOM.scrollIntoViewIfNeeded", { backendNodeId: element.node }).catch(() => {});
    await settleScroll(element.frame);
    const { model } = await send(element.session, "DOM.getBoxModel", { backendNodeId: element.node }).catch(() => ({}));
    if (!model) throw new ActionError(Code.CAPTURE_FAILED, "the element has no box to capture (it is not rendered)");
    // An out-of-process frame's boxes are in its own viewport.
    const offset = await frameOffset(element.frame);
    const xs = model.border.filter((_, i) => i % 2 === 0).map((x) => x + offset.x);
    const ys = model.border.filter((_, i) => i % 2 === 1).map((y) => y + offset.y);
    const { cssVisualViewport: moved } = await send(tabId, "Page.getLayoutMetrics");
    const x = Math.min(...xs) + moved.pageX;
    const y = Math.min(...ys) + moved.pageY;
    const area = { x, y, width: Math.max(...xs) - Math.min(...xs), height: Math.max(...ys) - Math.min(...ys) };
    // Capturing beyond the viewport lays the page out anew at its whole size, and a frame of
    // another process may not have drawn itself at that size when the capture is taken.
    const inView =
      area.x >= moved.pageX &&
      area.y >= moved.pageY &&
      area.x + area.width <= moved.pageX + moved.clientWidth &&
      area.y + area.height <= moved.pageY + moved.clientHeight;
    return { area, label: args.element || "element", beyond: true, wholePage: !inView };
  }
  if (args.fullPage) {
    const area = { x: 0, y: 0, width: content.width, height: content.height };
    return { area, label: "full page", beyond: true, wholePage: true };
  }
  const area = { x: view.pageX, y: view.pageY, width: view.clientWidth, height: view.clientHeight };
  return { area, label: "viewport", beyond: false, wholePage: false };
}

/** browser_take_screenshot {type?, fullPage?, element?, target?, scale?} */
export async function takeScreenshot(tabId, args) {
  const type = args.type ?? "png";
  if (!FORMATS[type]) throw invalidArguments("type must be png, jpeg or webp");
  if (![undefined, "css", "device"].includes(args.scale)) throw invalidArguments('scale must be "css" or "device"');
  if (args.fullPage && args.target !== undefined) throw invalidArguments("fullPage cannot be used with an element");
  await afterBarSettles(tabId);
  const { area, label, beyond, wholePage } = await areaOf(tabId, args);
  if (!(area.width >= 1 && area.height >= 1))
    throw new ActionError(Code.CAPTURE_FAILED, `the ${label} has no size to capture`);
  const { result } = await send(tabId, "Runtime.evaluate", {
    expression: "[window.devicePixelRatio || 1, document.visibilityState]",
    returnByValue: true,
  });
  const [pixelRatio, visibility] = result.value;
  // One image pixel per CSS pixel, unless the client asks for the screen's own pixels.
  const perCssPixel = args.scale === "device" ? pixelRatio : 1;
  const { clip, scale } = fitted(area, perCssPixel, beyond);
  // A hidden tab may still be painted (headless Chromium paints every tab): try, but not for long.
  const hidden = visibility === "hidden";
  const capture = async (scale) => {
    try {
      const { data } = await send(
        tabId,
        "Page.captureScreenshot",
        {
          format: type,
          ...(type === "jpeg" ? { quality: 90 } : {}),
          // Chromium captures in the screen's pixels; the clip's scale makes them the size wanted.
          clip: { ...clip, scale: scale / pixelRatio },
          captureBeyondViewport: wholePage,
        },
        hidden ? HIDDEN_CAPTURE_TIMEOUT_MS : CAPTURE_TIMEOUT_MS,
      );
      return data;
    } catch (error) {
      const why = hidden
        ? "Chromium draws nothing for a tab that is not visible: focus the tab (the tabs tool) and try again"
        : error.message;
      throw new ActionError(Code.CAPTURE_FAILED, `cannot capture the ${label}: ${why}`);
    }
  };
  return capturedResult({ capture, clip, scale, area, label, type, perCssPixel });
}
