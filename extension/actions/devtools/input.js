// Acting on one element as a person would: the mouse (click, hover) and text entry (type,
// fill_form) go through Input.dispatch* at the element's place on screen, so the page gets
// trusted events; choosing options and setting a slider set the control's value and fire the
// input and change events, as a browser's own drop-down does. The tab is never brought forward
// and its window never focused: all of this works on a tab in the background.
//
// Chromium hands a page its mouse moves and wheel turns at the page's next animation frame, and
// answers Input.dispatchMouseEvent only then; a tab behind the person's draws no frames, so each
// move waited about a second there (every click starts with one). With the Overlay domain on, as
// DevTools has it, the page takes input as it comes ("unbuffered input for the debugger"), in
// front or behind; the domain draws nothing until asked to highlight something, which is never.

import { onTabAttached, send } from "./debugger.js";
import { callOn, checkSameDocument, confirmPoint, describe, elementFor, missAt, pointFor } from "./elements.js";
import { ActionError, Code, invalidArguments, sleep } from "../../base/errors.js";
import { onFrameSession } from "./frames.js";
import { insertText, pressCombo, typeKeys } from "./keyboard.js";

export const BUTTONS = Object.freeze({ left: 1, right: 2, middle: 4 });

/** Input to the document of `command`'s target unbuffered (see above); buffered still if Chromium says no. */
async function unbufferedInput(command) {
  try {
    await command("DOM.enable"); // the Overlay domain's requirement
    await command("Overlay.enable");
  } catch (error) {
    console.warn("browser-mcp: input stays aligned to the page's frames", error);
  }
}

onTabAttached((tabId, command) => unbufferedInput(command));
// A frame of another site takes its input in its own process, where it is buffered the same way.
onFrameSession((session) => unbufferedInput((method, params) => send(session, method, params)));

const MODIFIER_BITS = { Alt: 1, Control: 2, Meta: 4, Shift: 8 };
const IS_MAC = /mac/i.test(navigator.userAgentData?.platform ?? navigator.platform ?? "");

export function modifierBits(modifiers = []) {
  if (!Array.isArray(modifiers)) throw invalidArguments('modifiers must be a list like ["Shift"]');
  let bits = 0;
  for (const name of modifiers) {
    const key = name === "ControlOrMeta" ? (IS_MAC ? "Meta" : "Control") : name;
    if (!MODIFIER_BITS[key])
      throw invalidArguments(`unknown modifier "${name}": use Alt, Control, ControlOrMeta, Meta or Shift`);
    bits |= MODIFIER_BITS[key];
  }
  return bits;
}

export function mouse(tabId, type, point, extra = {}) {
  return send(tabId, "Input.dispatchMouseEvent", { type, x: point.x, y: point.y, ...extra });
}

const ONTO_RETRIES = 10;
const ONTO_RETRY_MS = 50;

/**
 * Move the mouse to `point`, on `element`, and again until the element is under it. Chromium sends
 * a move into a frame of another process by where it last drew that frame; in a frame nested in
 * one that has just loaded, it may not know that yet, and the move goes to the frame around it (a
 * hover unheard, a press on the wrong frame). After ONTO_RETRIES it acts at the point regardless,
 * as a person would.
 */
async function moveOnto(tabId, element, point, extra = {}) {
  for (let attempt = 0; ; attempt++) {
    await mouse(tabId, "mouseMoved", point, extra);
    const under = await callOn(element, "function () { return this.matches(':hover'); }").catch(() => true);
    if (under || attempt >= ONTO_RETRIES) return;
    // The element is no longer there (the page moved it, or covered it, as the mouse came): the
    // caller aims again rather than this waiting for a hover that cannot come.
    if (await missAt(element, point)) return;
    await sleep(ONTO_RETRY_MS);
  }
}

/**
 * Bring the mouse onto the element, at a point where input reaches it (elements.js's
 * confirmPoint) right before it moves and again once it is there, as a page may move or cover the
 * element when the mouse arrives: the point it is on, ready for a press.
 */
export async function pointerOnto(tabId, element, extra = {}) {
  const point = await confirmPoint(element, await pointFor(element));
  checkSameDocument(element);
  await moveOnto(tabId, element, point, extra);
  const settled = await confirmPoint(element, point);
  if (settled === point) return point;
  checkSameDocument(element);
  await moveOnto(tabId, element, settled, extra);
  const miss = await missAt(element, settled);
  if (miss) throw new ActionError(miss.code, `cannot reach ${await describe(element)}: ${miss.text} as the mouse came`);
  return settled;
}

/** Scroll to the element and make sure input would reach it, for a control set without the mouse. */
async function reached(element) {
  return confirmPoint(element, await pointFor(element));
}

/** browser_hover {target} */
export async function hover(tabId, args) {
  const element = await elementFor(tabId, args.target);
  await pointerOnto(tabId, element);
}

// Fields whose value the browser's own picker sets (a calendar, a colour chooser, a slider): keys
// typed into them do not spell a value, so their value is set and read back, with the events the
// picker fires; a value the field does not take fails rather than leaving it empty.
const PICKED_FORMATS = {
  date: "YYYY-MM-DD",
  time: "HH:MM or HH:MM:SS",
  "datetime-local": "YYYY-MM-DDTHH:MM",
  month: "YYYY-MM",
  week: "YYYY-Www",
  color: "#rrggbb",
  range: "a number within its min and max, on its step",
};

/** Focus an editable element and select what it holds, so typed text replaces it; "picked" for a picker's field. */
async function focusForTyping(element) {
  const problem = await callOn(
    element,
    `function (picked) {
      if (this.localName === "input" && picked.includes(this.type)) {
        if (this.disabled) return "is disabled";
        if (this.readOnly) return "is read-only";
        return "picked";
      }
      const editable = this.isContentEditable ||
        (this.localName === "textarea" && !this.readOnly) ||
        (this.localName === "input" && !this.readOnly && !["checkbox", "radio", "button", "submit", "reset",
          "file", "image", "hidden"].includes(this.type));
      if (!editable) return "is not a text field";
      if (this.disabled) return "is disabled";
      this.focus();
      if (this.isContentEditable) {
        const range = document.createRange();
        range.selectNodeContents(this);
        getSelection().removeAllRanges();
        getSelection().addRange(range);
      } else {
        this.select();
      }
      return "";
    }`,
    Object.keys(PICKED_FORMATS),
  );
  if (problem === "picked") return true;
  if (problem) throw new ActionError(Code.ACTION_FAILED, `cannot type into ${await describe(element)}: it ${problem}`);
  return false;
}

/** Set a picker's field to `value` as its picker would, or fail saying which values it takes. */
async function setPicked(element, value) {
  const problem = await callOn(
    element,
    `function (value, formats) {
      const format = formats[this.type];
      if (this.localName !== "input" || !format) return "it is not a date, time, colour or range field";
      this.focus();
      const before = this.value;
      this.value = value;
      const same = this.type === "color" ? this.value === value.toLowerCase() : this.value === value;
      if (!same) {
        this.value = before;
        return JSON.stringify(value) + " is not a value it takes (" + this.type + ": " + format + ")";
      }
      this.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
      this.dispatchEvent(new Event("change", { bubbles: true }));
      return "";
    }`,
    value.trim(),
    PICKED_FORMATS,
  );
  if (problem) throw new ActionError(Code.ACTION_FAILED, `cannot set ${await describe(element)}: ${problem}`);
}

/**
 * Whether the field is a code editor's input proxy: a text area it keeps unseen (transparent, or
 * a pixel wide) under the text it draws itself, which is always "covered" and still where typing
 * goes once the editor is focused.
 */
async function isInputProxy(element) {
  return callOn(
    element,
    `function () {
      const box = this.getBoundingClientRect();
      return this.localName === "textarea" &&
        (getComputedStyle(this).opacity === "0" || box.width <= 1 || box.height <= 1);
    }`,
  );
}

/** Replace the field's text with `text`: one insertion, or key by key when `slowly`. */
async function fill(tabId, element, text, slowly) {
  if (await isInputProxy(element)) {
    await send(element.session, "DOM.scrollIntoViewIfNeeded", { backendNodeId: element.node }).catch(() => {});
  } else {
    await reached(element);
  }
  const picked = await focusForTyping(element);
  checkSameDocument(element);
  if (picked) await setPicked(element, text);
  else if (text === "") await pressCombo(tabId, "Delete");
  else if (slowly) await typeKeys(tabId, text);
  else await insertText(tabId, text);
}

/** browser_type {target, text, submit?, slowly?} */
export async function type(tabId, args) {
  if (typeof args.text !== "string") throw invalidArguments("text must be a string");
  const element = await elementFor(tabId, args.target);
  await fill(tabId, element, args.text, Boolean(args.slowly));
  if (args.submit) await pressCombo(tabId, "Enter");
}

/** Choose the options whose value or label is in `values`, as the drop-down itself would. */
async function choose(element, values) {
  const problem = await callOn(
    element,
    `function (values) {
      if (this.localName !== "select") return "it is not a drop-down (<select>)";
      if (this.disabled) return "it is disabled";
      const options = [...this.options];
      const chosen = values.map((value) => options.find((o) => o.value === value) ??
        options.find((o) => o.label === value || o.text.trim() === value));
      const missing = values.filter((_, i) => !chosen[i]);
      if (missing.length) return "it has no option " + missing.map((v) => JSON.stringify(v)).join(", ");
      if (chosen.length > 1 && !this.multiple) return "it takes only one option";
      for (const option of options) option.selected = chosen.includes(option);
      this.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
      this.dispatchEvent(new Event("change", { bubbles: true }));
      return "";
    }`,
    values,
  );
  if (problem) throw new ActionError(Code.ACTION_FAILED, `cannot select in ${await describe(element)}: ${problem}`);
}

/** browser_select_option {target, values} */
export async function selectOption(tabId, args) {
  if (!Array.isArray(args.values) || args.values.some((value) => typeof value !== "string")) {
    throw invalidArguments("values must be a list of option values or labels");
  }
  const element = await elementFor(tabId, args.target);
  await reached(element);
  await choose(element, args.values);
}

async function setChecked(tabId, element, wanted) {
  const state = await callOn(
    element,
    "function () { return this.checked ?? this.getAttribute('aria-checked') === 'true'; }",
  );
  if (state === wanted) return;
  const point = await pointerOnto(tabId, element);
  await mouse(tabId, "mousePressed", point, { button: "left", buttons: 1, clickCount: 1 });
  await mouse(tabId, "mouseReleased", point, { button: "left", buttons: 0, clickCount: 1 });
  if (
    (await callOn(element, "function () { return this.checked ?? this.getAttribute('aria-checked') === 'true'; }")) !==
    wanted
  ) {
    throw new ActionError(
      Code.ACTION_FAILED,
      `clicking ${await describe(element)} did not ${wanted ? "check" : "uncheck"} it`,
    );
  }
}

/** browser_fill_form {fields: [{name, type, target (or ref), value}]} */
export async function fillForm(tabId, args) {
  if (!Array.isArray(args.fields) || !args.fields.length) throw invalidArguments("fields must be a non-empty list");
  for (const [index, field] of args.fields.entries()) {
    if (!field || typeof field !== "object") throw invalidArguments(`fields[${index}] must be an object`);
    if (typeof field.value !== "string") throw invalidArguments(`fields[${index}].value must be a string`);
    if (!["textbox", "checkbox", "radio", "combobox", "slider"].includes(field.type)) {
      throw invalidArguments(`fields[${index}].type must be textbox, checkbox, radio, combobox or slider`);
    }
  }
  for (const field of args.fields) {
    const element = await elementFor(tabId, field.target ?? field.ref);
    if (field.type === "textbox") await fill(tabId, element, field.value, false);
    else if (field.type === "slider") await reached(element).then(() => setPicked(element, field.value));
    else if (field.type === "combobox") await reached(element).then(() => choose(element, [field.value]));
    else await setChecked(tabId, element, field.value === "true");
  }
}
