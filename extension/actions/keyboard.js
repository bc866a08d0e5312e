// Keys as a person types them: Input.dispatchKeyEvent, so the page gets trusted keydown, keypress,
// input and keyup events in that order, with the key, code and keyCode a US keyboard gives. Keys
// are named as Playwright names them ("Enter", "ArrowLeft", "a", "Control+a", "Shift+Tab").

import { send } from "./debugger.js";
import { invalidArguments } from "./errors.js";

const MODIFIER_BITS = { Alt: 1, Control: 2, Meta: 4, Shift: 8 };
const IS_MAC = /mac/i.test(navigator.userAgentData?.platform ?? navigator.platform ?? "");

/** Named keys: [code, keyCode, text]. */
const NAMED = {
  Enter: ["Enter", 13, "\r"],
  Tab: ["Tab", 9],
  Backspace: ["Backspace", 8],
  Delete: ["Delete", 46],
  Escape: ["Escape", 27],
  Insert: ["Insert", 45],
  Home: ["Home", 36],
  End: ["End", 35],
  PageUp: ["PageUp", 33],
  PageDown: ["PageDown", 34],
  ArrowLeft: ["ArrowLeft", 37],
  ArrowUp: ["ArrowUp", 38],
  ArrowRight: ["ArrowRight", 39],
  ArrowDown: ["ArrowDown", 40],
  CapsLock: ["CapsLock", 20],
  ContextMenu: ["ContextMenu", 93],
  Shift: ["ShiftLeft", 16],
  Control: ["ControlLeft", 17],
  Alt: ["AltLeft", 18],
  Meta: ["MetaLeft", 91],
};
for (let n = 1; n <= 12; n++) NAMED[`F${n}`] = [`F${n}`, 111 + n];
const ALIASES = {
  Esc: "Escape",
  Return: "Enter",
  Space: " ",
  Left: "ArrowLeft",
  Right: "ArrowRight",
  Up: "ArrowUp",
  Down: "ArrowDown",
};

/** Punctuation on a US keyboard: character -> [code, keyCode]; shifted characters share their key's. */
const PUNCTUATION = {};
const KEYS = [
  ["Minus", 189, "-_"],
  ["Equal", 187, "=+"],
  ["BracketLeft", 219, "[{"],
  ["BracketRight", 221, "]}"],
  ["Backslash", 220, "\\|"],
  ["Semicolon", 186, ";:"],
  ["Quote", 222, "'\""],
  ["Comma", 188, ",<"],
  ["Period", 190, ".>"],
  ["Slash", 191, "/?"],
  ["Backquote", 192, "`~"],
  ["Space", 32, "  "],
];
for (const [code, keyCode, chars] of KEYS) for (const char of chars) PUNCTUATION[char] = [code, keyCode];
const SHIFTED_DIGITS = ")!@#$%^&*(";

/** How a key name is dispatched: {key, code, keyCode, text?}. */
function definitionOf(name) {
  const named = ALIASES[name] ?? name;
  if (name === "ControlOrMeta") return definitionOf(IS_MAC ? "Meta" : "Control");
  if (NAMED[named]) {
    const [code, keyCode, text] = NAMED[named];
    return { key: named, code, keyCode, text };
  }
  if ([...named].length !== 1)
    throw invalidArguments(`unknown key "${name}": use a key name like Enter or ArrowLeft, or one character`);
  if (/[a-z]/i.test(named))
    return { key: named, code: `Key${named.toUpperCase()}`, keyCode: named.toUpperCase().charCodeAt(0), text: named };
  if (/[0-9]/.test(named)) return { key: named, code: `Digit${named}`, keyCode: named.charCodeAt(0), text: named };
  const digit = SHIFTED_DIGITS.indexOf(named);
  if (digit >= 0) return { key: named, code: `Digit${digit}`, keyCode: 48 + digit, text: named };
  const [code, keyCode] = PUNCTUATION[named] ?? ["", 0];
  return { key: named, code, keyCode, text: named };
}

/** "Control+Shift+a" -> ["Control", "Shift", "a"]; a "+" key stays whole ("Shift++"). */
function splitCombo(combo) {
  const parts = [];
  let rest = combo;
  for (let plus = rest.indexOf("+", 1); plus > 0; plus = rest.indexOf("+", 1)) {
    parts.push(rest.slice(0, plus));
    rest = rest.slice(plus + 1);
  }
  parts.push(rest);
  return parts;
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

/** browser_press_key's `key`: one key or a combination, to whatever has focus in the page. */
export async function pressKey(tabId, combo) {
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
