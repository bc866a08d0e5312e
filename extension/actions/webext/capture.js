// The WebExtension driver's reading tools: browser_take_screenshot through tabs.captureTab
// (Firefox captures a tab behind others too, with no debugging bar to wait for; WebP re-encoded
// from its PNG in a canvas of the extension's), sized and
// described as images.js sizes them, and browser_evaluate, a client's function run in the
// page's own world through scripting, after the person's approval as in the DevTools driver.

import { ActionError, Code, invalidArguments } from "../../base/errors.js";
import { FORMATS, capturedResult, fitted } from "../images.js";
import { sections, textResult } from "../results.js";
import { documentOf } from "./navigation.js";
import { onElement } from "./snapshot.js";
import { runIn, withAgent } from "./scripts.js";

/**
 * The PNG `png` (base64) made WebP (base64), through a canvas of the extension's own:
 * tabs.captureTab makes only PNG and JPEG. A canvas that cannot encode WebP makes PNG instead,
 * which is refused rather than passed off as WebP.
 */
async function asWebp(png) {
  const text = atob(png);
  const decoded = new Uint8Array(text.length);
  for (let at = 0; at < text.length; at += 1) decoded[at] = text.charCodeAt(at);
  const bitmap = await createImageBitmap(new Blob([decoded], { type: "image/png" }));
  const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
  canvas.getContext("2d").drawImage(bitmap, 0, 0);
  bitmap.close();
  const blob = await canvas.convertToBlob({ type: "image/webp", quality: 0.9 });
  if (blob.type !== "image/webp") {
    throw new ActionError(Code.NOT_SUPPORTED, "this Firefox cannot encode WebP: take the screenshot as png or jpeg");
  }
  const bytes = new Uint8Array(await blob.arrayBuffer());
  let binary = "";
  for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  return btoa(binary);
}

async function areaOf(tabId, args) {
  if (args.target === undefined) {
    const { value: areas } = await withAgent(tabId, 0, "areas");
    if (args.fullPage) return { ...areas, area: areas.page, label: "full page", beyond: true };
    return { ...areas, area: areas.viewport, label: "viewport", beyond: false };
  }
  // An element inside a frame is boxed in its frame's document, which Firefox cannot capture alone.
  if (/^f\d+e\d+$/.test(args.target)) {
    throw new ActionError(Code.NOT_SUPPORTED, "Firefox cannot capture an element inside a frame: capture the page");
  }
  const areas = await onElement(tabId, args.target, "areas");
  if (!areas.box) throw new ActionError(Code.CAPTURE_FAILED, "the element has no box to capture");
  return { ...areas, area: areas.box, label: args.element || "element", beyond: true };
}

/** browser_take_screenshot {type?, fullPage?, element?, target?, scale?} */
export async function takeScreenshot(tabId, args) {
  const type = args.type ?? "png";
  if (!FORMATS[type]) throw invalidArguments("type must be png, jpeg or webp");
  if (![undefined, "css", "device"].includes(args.scale)) throw invalidArguments('scale must be "css" or "device"');
  if (args.fullPage && args.target !== undefined) throw invalidArguments("fullPage cannot be used with an element");
  const { area, label, beyond, pixelRatio } = await areaOf(tabId, args);
  if (!(area.width >= 1 && area.height >= 1))
    throw new ActionError(Code.CAPTURE_FAILED, `the ${label} has no size to capture`);
  const perCssPixel = args.scale === "device" ? pixelRatio : 1;
  const { clip, scale } = fitted(area, perCssPixel, beyond);
  const capture = async (scale) => {
    try {
      const url = await chrome.tabs.captureTab(tabId, {
        format: type === "jpeg" ? "jpeg" : "png",
        ...(type === "jpeg" ? { quality: 90 } : {}),
        rect: clip,
        scale,
      });
      const data = url.slice(url.indexOf(",") + 1);
      return type === "webp" ? await asWebp(data) : data;
    } catch (error) {
      if (error instanceof ActionError) throw error;
      throw new ActionError(Code.CAPTURE_FAILED, `cannot capture the ${label}: ${error.message}`);
    }
  };
  return capturedResult({ capture, clip, scale, area, label, type, perCssPixel });
}

/**
 * Page-side, in the page's own world: the client's `source` made by the page's Function (Firefox
 * gives extensions no other way to compile code there, so a page whose Content Security Policy
 * forbids eval refuses it), called with the marked element; its outcome as JSON text.
 */
async function evaluateInPage(source, mark) {
  let element;
  if (mark) {
    element = document.querySelector(`[data-browser-mcp-evaluate="${mark}"]`);
    element?.removeAttribute("data-browser-mcp-evaluate");
  }
  try {
    const value = new Function(`return (${source}\n);`)();
    const result = typeof value === "function" ? await value(element) : await value;
    if (typeof result === "number" && !Number.isFinite(result)) return { text: String(result) };
    if (typeof result === "bigint") return { text: `${result}n` };
    return { text: JSON.stringify(result, null, 2) ?? "undefined" };
  } catch (error) {
    return { failed: String(error?.stack ? `${error}\n${error.stack}` : error) };
  }
}

/** browser_evaluate {function, element?, target?} */
export async function evaluate(tabId, args) {
  const source = args.function;
  if (typeof source !== "string" || source.trim() === "") {
    throw invalidArguments("function must be JavaScript source like () => document.title");
  }
  const document = documentOf(tabId);
  let mark = null;
  if (args.target !== undefined) {
    if (/^f\d+e\d+$/.test(args.target)) {
      throw new ActionError(
        Code.NOT_SUPPORTED,
        "in Firefox, browser_evaluate takes elements of the page, not of its frames",
      );
    }
    mark = crypto.randomUUID();
    await onElement(tabId, args.target, "mark", mark);
  }
  let answer;
  try {
    answer = await runIn(tabId, 0, evaluateInPage, [source, mark], "MAIN");
  } catch (error) {
    if (documentOf(tabId) !== document) {
      throw new ActionError(Code.NAVIGATED, "the page navigated away before the function returned");
    }
    if (error.pageError) throw new ActionError(Code.EVALUATE_FAILED, error.message);
    throw error;
  }
  if (answer?.failed !== undefined) throw new ActionError(Code.EVALUATE_FAILED, answer.failed);
  return textResult(sections(["Result", [answer?.text ?? "undefined"]]));
}
