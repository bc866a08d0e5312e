// browser_take_screenshot: the viewport, the whole page or one element, as an MCP image.
//
// Images are made no larger than a vision model takes in whole (1568 pixels a side, 1.15
// megapixels: Claude's advice; its API refuses images over 8000 pixels a side, or 2000 in a
// request of many images), and no heavier than MAX_BYTES (a client such as Claude Desktop refuses a
// tool result over 1 MB), by Chromium while it captures, so nothing is decoded here. A full page
// (or an element) too tall to fit whole at half its size shows its top part at half size rather
// than as an unreadable sliver, and says so. The result says how the image's pixels map to CSS
// pixels whenever they differ, for the coordinate tools. Chromium paints no
// frames for a tab hidden behind another in a visible window, and would wait for one forever:
// such a capture fails with capture_failed instead of bringing the tab to the front, which would
// take it from the person.
//
// Attaching the debugger makes Chromium show its "started debugging this browser" bar, which
// shrinks the page's viewport a moment later; until then a capture holds stale pixels where the
// bar is about to be. A capture soon after attaching waits for that resize (or BAR_SETTLE_MS).

import { attach, attachedAt, send } from "./debugger.js";
import { elementFor } from "./elements.js";
import { frameOffset, revealFrame, settleScroll } from "./frames.js";
import { ActionError, Code, invalidArguments } from "../../base/errors.js";
import { sections } from "../results.js";

const CAPTURE_TIMEOUT_MS = 8_000;
const HIDDEN_CAPTURE_TIMEOUT_MS = 3_000;
const MAX_SIDE = 1568;
const MAX_PIXELS = 1.15 * 1024 * 1024;
/** Bytes of image, 933,336 characters of base64: with its text, under the 1 MB clients take. */
const MAX_BYTES = 700_000;
/** Image pixels per CSS pixel below which a full page's text is no longer readable. */
const LEGIBLE = 0.5;
export const FORMATS = { png: "image/png", jpeg: "image/jpeg", webp: "image/webp" };
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

/**
 * The part of `area` (CSS pixels) to capture and its image pixels per CSS pixel: at most
 * `perCssPixel`, within MAX_SIDE and MAX_PIXELS. An area beyond the viewport (a full page, an
 * element) that would shrink below LEGIBLE is cut to its top part at that scale instead.
 */
export function fitted(area, perCssPixel, beyond) {
  const whole = Math.min(
    perCssPixel,
    MAX_SIDE / area.width,
    MAX_SIDE / area.height,
    Math.sqrt(MAX_PIXELS / (area.width * area.height)),
  );
  const legible = Math.min(perCssPixel, LEGIBLE, MAX_SIDE / area.width);
  if (!beyond || whole >= legible) return { clip: area, scale: whole };
  const rows = Math.min(MAX_SIDE, Math.floor(MAX_PIXELS / (area.width * legible)));
  return { clip: { ...area, height: Math.min(area.height, rows / legible) }, scale: legible };
}

/** How many bytes the base64 `data` holds. */
const bytesOf = (data) => Math.floor((data.length * 3) / 4);

/**
 * What the client needs to know of an image not at one pixel per CSS pixel (`reduced`: made
 * smaller than asked, to fit), or cut short.
 */
function scaleLines(label, area, clip, scale, reduced) {
  const lines = [];
  const factor = Number((1 / scale).toFixed(4));
  if (Math.abs(factor - 1) > 0.001) {
    const limits = `images are at most ${MAX_SIDE} pixels a side, ${MAX_PIXELS / 1024 / 1024} megapixels and ${MAX_BYTES / 1000} KB`;
    // The browser_mouse_* tools take CSS pixels of the viewport.
    const use =
      label === "viewport"
        ? `for browser_mouse_* tools, multiply this image's coordinates by ${factor} (CSS pixels)`
        : `multiply this image's coordinates by ${factor} for CSS pixels from the ${label}'s top left`;
    lines.push(`- Scaled by ${Number(scale.toFixed(4))}${reduced ? ` (${limits})` : ""}: ${use}`);
  }
  if (clip.height < area.height) {
    const [shown, whole] = [Math.round(clip.height), Math.round(area.height)];
    lines.push(
      `- Shows the top ${shown} CSS pixels of its ${whole}, as the whole would not be readable at this size:` +
        " for the rest, scroll (browser_mouse_wheel) and capture the viewport, or capture one element (target)",
    );
  }
  return lines;
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

/**
 * A screenshot's answer, whichever driver captures it: `capture(scale)` at the scale fitted,
 * smaller again while the image is over MAX_BYTES (a photo-like page in PNG), by what its bytes
 * say and a little more.
 */
export async function capturedResult({ capture, clip, scale, area, label, type, perCssPixel }) {
  let data = await capture(scale);
  for (let again = 0; bytesOf(data) > MAX_BYTES && again < 3; again += 1) {
    scale *= Math.sqrt(MAX_BYTES / bytesOf(data)) * 0.9;
    data = await capture(scale);
  }
  if (bytesOf(data) > MAX_BYTES) {
    throw new ActionError(Code.CAPTURE_FAILED, `the ${label}'s image stays over ${MAX_BYTES} bytes: try type jpeg`);
  }
  const size = `${Math.round(clip.width * scale)}x${Math.round(clip.height * scale)}`;
  const lines = [`- Screenshot of the ${label}, ${size} pixels, ${type.toUpperCase()}`];
  lines.push(...scaleLines(label, area, clip, scale, scale < perCssPixel));
  return {
    content: [
      { type: "text", text: sections(["Result", lines]) },
      { type: "image", data, mimeType: FORMATS[type] },
    ],
  };
}
