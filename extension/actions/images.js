// A screenshot's image and its answer, whichever driver captures it (devtools/screenshot.js,
// webext/capture.js): how large it may be, and what the client is told of it.
//
// Images are made no larger than a vision model takes in whole (1568 pixels a side, 1.15
// megapixels: Claude's advice; its API refuses images over 8000 pixels a side, or 2000 in a
// request of many images), and no heavier than MAX_BYTES (a client such as Claude Desktop refuses a
// tool result over 1 MB), by the browser while it captures. A full page (or an element) too tall
// to fit whole at half its size shows its top part at half size rather than as an unreadable
// sliver, and says so. The result says how the image's pixels map to CSS pixels whenever they
// differ, for the coordinate tools.

import { ActionError, Code } from "../base/errors.js";
import { sections } from "./results.js";

const MAX_SIDE = 1568;
const MAX_PIXELS = 1.15 * 1024 * 1024;
/** Bytes of image, 933,336 characters of base64: with its text, under the 1 MB clients take. */
const MAX_BYTES = 700_000;
/** Image pixels per CSS pixel below which a full page's text is no longer readable. */
const LEGIBLE = 0.5;
export const FORMATS = { png: "image/png", jpeg: "image/jpeg", webp: "image/webp" };

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
