// The WebExtension driver's input: the synthetic event sequences of synthetic_input.js, run in
// the isolated world of the frame where the target's element is (its kit made there first,
// synthetic_kit.js), the element found by the same agent that gave its ref. Finding the element
// and sending its input happen in one script, so a frame cannot navigate between the two: a ref
// of a document since left is refused as stale.

import { ActionError, Code, invalidArguments } from "../../base/errors.js";
import { checkedPaths, filesWithBytes, uploadedFiles } from "../uploads.js";
import { withKeyDefinitions } from "../key_table.js";
import { clickOptions, numbers, outsideViewport } from "../point_args.js";
import { syntheticInput } from "./synthetic_input.js";
import { syntheticKeys } from "./synthetic_keys.js";
import { syntheticKit } from "./synthetic_kit.js";
import { locate, missing } from "./snapshot.js";
import { runIn } from "./scripts.js";

/** tab id -> frame id where a click opened a file input's chooser, which no one answered yet */
const choosers = new Map();
/** tab id -> frame id of the tab's last input: where focus is, which a pressed key goes to */
const focused = new Map();

/** The tab closed or left its page: its chooser went with it, and focus is on the page again. */
export function forgetChooser(tabId) {
  choosers.delete(tabId);
  focused.delete(tabId);
}

/**
 * Run `request` on the element `target` names (none: the frame's open file chooser, in frame
 * `frameId`); the page's answer when it went through.
 */
async function synthetic(tabId, target, request, frameId = 0, pageFunction = syntheticInput) {
  const where = target === null ? { frameId, target: null, given: 0 } : locate(tabId, target);
  const answer = await inFrame(tabId, where.frameId, { ...request, target: where.target }, pageFunction);
  if (answer?.ok) return answer;
  if (answer?.code === Code.STALE_REF && answer.why) throw missing(where.target, answer.why, where.given);
  throw new ActionError(answer?.code ?? Code.ACTION_FAILED, answer?.message ?? "the page gave no answer");
}

/** `pageFunction`'s answer to `request` in frame `frameId`, the frame's kit made first where it has none. */
async function inFrame(tabId, frameId, request, pageFunction = syntheticInput) {
  focused.set(tabId, frameId);
  const sent = pageFunction === syntheticKeys ? withKeyDefinitions(request) : request;
  const send = () => runIn(tabId, frameId, pageFunction, [sent]);
  const answer = await send();
  if (answer?.code !== "no_kit") return answer;
  await runIn(tabId, frameId, syntheticKit);
  return send();
}

/**
 * Input at a point of the tab's viewport (`request.at`, `request.to` for a drag's end): sent on
 * into the frame whose content is there, through that frame's own script, the point moved into
 * its viewport, until a document has no frame at the point.
 */
async function atPoint(tabId, request) {
  let [frameId, sent] = [0, request];
  for (;;) {
    const answer = await inFrame(tabId, frameId, sent);
    if (answer?.ok) return answer;
    if (answer?.code === "outside") {
      throw invalidArguments(outsideViewport(answer.outside.x, answer.outside.y, answer.width, answer.height));
    }
    if (answer?.code !== "in_frame") {
      throw new ActionError(answer?.code ?? Code.ACTION_FAILED, answer?.message ?? "the page gave no answer");
    }
    const { frameId: inner, x, y, dx, dy } = answer.frame;
    const to = sent.to && { x: sent.to.x - dx, y: sent.to.y - dy };
    [frameId, sent] = [inner, { ...sent, at: { x, y }, to, nested: true }];
  }
}

/** browser_mouse_click_xy {x, y, button?, clickCount?, delay?} */
export async function mouseClickXy(tabId, args) {
  const [x, y] = numbers(args, ["x", "y"]);
  const { clickCount, delay } = clickOptions(args);
  // The press and release are one page script here: nothing can run between them.
  if (delay) throw new ActionError(Code.NOT_SUPPORTED, "in Firefox, browser_mouse_click_xy takes no delay");
  const answer = await atPoint(tabId, { action: "click", at: { x, y }, button: args.button ?? "left", clickCount });
  if (answer.fileChooser) choosers.set(tabId, focused.get(tabId));
}

/** browser_mouse_move_xy {x, y} */
export async function mouseMoveXy(tabId, args) {
  const [x, y] = numbers(args, ["x", "y"]);
  await atPoint(tabId, { action: "hover", at: { x, y } });
}

/** browser_mouse_drag_xy {startX, startY, endX, endY}: both points in the same frame. */
export async function mouseDragXy(tabId, args) {
  const [startX, startY, endX, endY] = numbers(args, ["startX", "startY", "endX", "endY"]);
  const answer = await atPoint(tabId, { action: "drag", at: { x: startX, y: startY }, to: { x: endX, y: endY } });
  if (answer.dropped === false) {
    throw new ActionError(
      Code.ACTION_FAILED,
      `dragged from (${startX}, ${startY}) to (${endX}, ${endY}), but nothing there took the drop`,
    );
  }
}

/** browser_click {target, button?, doubleClick?, modifiers?} */
export async function click(tabId, args) {
  const where = locate(tabId, args.target);
  const answer = await synthetic(tabId, args.target, {
    action: "click",
    button: args.button ?? "left",
    doubleClick: Boolean(args.doubleClick),
    modifiers: args.modifiers,
  });
  // A file input's chooser is no native window here: the click's answer says it waits.
  if (answer.fileChooser) choosers.set(tabId, where.frameId);
}

/** The modal state line of the tab's file chooser that waits for browser_file_upload. */
export function fileChooserLines(tabId) {
  if (!choosers.has(tabId)) return [];
  return ["- [File chooser]: can be handled by browser_file_upload, with paths or none to cancel it"];
}

/** browser_file_upload {paths}: the files the broker read, set on the input through a DataTransfer. */
export async function fileUpload(tabId, args) {
  const paths = checkedPaths(args);
  if (!choosers.has(tabId)) {
    throw new ActionError(
      Code.NO_FILE_CHOOSER,
      `no file chooser is open in tab ${tabId}: click the page's file input (or the button that opens it) first`,
    );
  }
  if (!paths.length) {
    choosers.delete(tabId);
    return "Cancelled the file chooser (the page hears no cancel event in Firefox)";
  }
  const files = filesWithBytes(args);
  if (!files) {
    throw new ActionError(Code.NOT_SUPPORTED, "Firefox's extension needs the files' bytes from the broker: update it");
  }
  const frameId = choosers.get(tabId);
  const sent = files.map(({ name, data, type, modified }) => ({ name, data, type, modified }));
  await synthetic(tabId, null, { action: "upload", files: sent }, frameId);
  choosers.delete(tabId);
  const names = uploadedFiles(args)
    .map((file) => `${file.name} (${file.size})`)
    .join(", ");
  return `Uploaded ${paths.length} file${paths.length === 1 ? "" : "s"} into the file chooser: ${names}`;
}

/** browser_hover {target} */
export async function hover(tabId, args) {
  await synthetic(tabId, args.target, { action: "hover" });
}

/** browser_select_option {target, values} */
export async function selectOption(tabId, args) {
  if (!Array.isArray(args.values) || args.values.some((value) => typeof value !== "string")) {
    throw invalidArguments("values must be a list of strings");
  }
  await synthetic(tabId, args.target, { action: "select", values: args.values });
}

/** browser_type {target, text, slowly?, submit?} */
export async function type(tabId, args) {
  if (typeof args.text !== "string") throw invalidArguments("text must be a string");
  const { slowly, submit } = args;
  await synthetic(tabId, args.target, { action: "fill", text: args.text, slowly, submit }, 0, syntheticKeys);
}

/** browser_press_key {key}: on what has focus, in the frame of the tab's last input. */
export async function pressKey(tabId, args) {
  if (typeof args.key !== "string" || !args.key) throw invalidArguments("key must be a key name like Enter or a");
  await synthetic(tabId, null, { action: "press", key: args.key }, focused.get(tabId) ?? 0, syntheticKeys);
}

const FIELD_TYPES = ["textbox", "checkbox", "radio", "combobox", "slider"];

/** browser_fill_form {fields: [{target, type, value}]}, one field after another. */
export async function fillForm(tabId, args) {
  if (!Array.isArray(args.fields) || !args.fields.length) throw invalidArguments("fields must be a non-empty list");
  for (const [index, field] of args.fields.entries()) {
    if (typeof field?.value !== "string") throw invalidArguments(`fields[${index}].value must be a string`);
    if (!FIELD_TYPES.includes(field.type)) {
      throw invalidArguments(`fields[${index}].type must be one of ${FIELD_TYPES.join(", ")}`);
    }
  }
  for (const field of args.fields) {
    const target = field.target ?? field.ref;
    if (field.type === "textbox" || field.type === "slider") {
      await synthetic(tabId, target, { action: "fill", text: field.value }, 0, syntheticKeys);
    } else if (field.type === "combobox") {
      await synthetic(tabId, target, { action: "select", values: [field.value] });
    } else {
      await synthetic(tabId, target, { action: "check", checked: field.value === "true" });
    }
  }
}

/** browser_drag {startTarget, endTarget}: both in the same frame. */
export async function drag(tabId, args) {
  const start = locate(tabId, args.startTarget);
  const end = locate(tabId, args.endTarget);
  if (start.frameId !== end.frameId) {
    throw new ActionError(Code.NOT_SUPPORTED, "in Firefox, browser_drag takes two elements of the same frame");
  }
  await synthetic(tabId, args.startTarget, { action: "drag", to: end.target });
}
