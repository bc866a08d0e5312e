// Keys as a person types them: Input.dispatchKeyEvent, so the page gets trusted keydown, keypress,
// input and keyup events in that order, with the key, code and keyCode a US keyboard gives
// (key_table.js).

import { send } from "./debugger.js";
import { invalidArguments } from "../../base/errors.js";
import { keyDefinition, splitCombo, unknownKey } from "../key_table.js";

const MODIFIER_BITS = { Alt: 1, Control: 2, Meta: 4, Shift: 8 };

/** How a key name is dispatched: {key, code, keyCode, text?} (key_table.js). */
function definitionOf(name) {
  const definition = keyDefinition(name);
  if (!definition) throw invalidArguments(unknownKey(name));
  return definition;
}

async function dispatch(tabId, type, definition, modifiers) {
  const event = {
    type,
    key: definition.key,
    code: definition.code,
    windowsVirtualKeyCode: definition.keyCode,
    nativeVirtualKeyCode: definition.keyCode,
    modifiers,
    location: /Left$/.test(definition.code) && definition.key !== "ArrowLeft" ? 1 : 0,
  };
  if (type === "keyDown") Object.assign(event, { text: definition.text, unmodifiedText: definition.text });
  await send(tabId, "Input.dispatchKeyEvent", event);
}

/** Press and release one key, holding `modifiers` (a bit set of MODIFIER_BITS). */
async function tap(tabId, definition, modifiers) {
  // A held Control, Alt or Meta makes a shortcut, which types nothing.
  const types = definition.text !== undefined && !(modifiers & ~MODIFIER_BITS.Shift);
  let shown = definition;
  if (types && modifiers & MODIFIER_BITS.Shift && /^[a-z]$/.test(definition.key)) {
    shown = { ...definition, key: definition.key.toUpperCase(), text: definition.text.toUpperCase() };
  }
  await dispatch(tabId, types ? "keyDown" : "rawKeyDown", shown, modifiers);
  await dispatch(tabId, "keyUp", shown, modifiers);
}

/** browser_press_key {key}: one key or a combination, to whatever has focus in the page. */
export const pressKey = (tabId, args) => pressCombo(tabId, args.key);

/** One key or a combination (`Control+a`), to whatever has focus in the page. */
export async function pressCombo(tabId, combo) {
  if (typeof combo !== "string" || combo === "")
    throw invalidArguments("key must be a key name like Enter, or a character");
  const definitions = splitCombo(combo).map(definitionOf);
  const held = definitions.slice(0, -1);
  let modifiers = 0;
  for (const definition of held) {
    modifiers |= MODIFIER_BITS[definition.key] ?? 0;
    await dispatch(tabId, "rawKeyDown", definition, modifiers);
  }
  await tap(tabId, definitions[definitions.length - 1], modifiers);
  for (const definition of held.reverse()) {
    modifiers &= ~(MODIFIER_BITS[definition.key] ?? 0);
    await dispatch(tabId, "keyUp", definition, modifiers);
  }
}

/** Type `text` key by key, for pages that listen to each keystroke. */
export async function typeKeys(tabId, text) {
  for (const char of text) {
    if (char === "\n" || char === "\r") await tap(tabId, definitionOf("Enter"), 0);
    else await tap(tabId, definitionOf(char), /[A-Z]/.test(char) ? MODIFIER_BITS.Shift : 0);
  }
}

/** Put `text` where the caret is, in one go, as a paste or an input method would. */
export async function insertText(tabId, text) {
  await send(tabId, "Input.insertText", { text });
}
