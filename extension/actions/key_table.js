// The keys of a US keyboard by the names Playwright gives them ("Enter", "ArrowLeft", "a",
// "Control+a", "Shift+Tab"): each key's key, code, keyCode and the text it types, for both
// drivers' keyboards. keyboard.js sends them through the DevTools protocol; synthetic_keys.js,
// which runs in the page, gets the ones it dispatches in its request (withKeyDefinitions).
//
// It imports nothing, so that its source runs in a page too (the tests send it beside
// synthetic_keys.js).

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

/** The message for a key name that is none. */
export function unknownKey(name) {
  return `unknown key "${name}": use a key name like Enter or ArrowLeft, or one character`;
}

/** How a key name is dispatched: {key, code, keyCode, text?}; null for a name that is no key. */
export function keyDefinition(name) {
  const named = ALIASES[name] ?? name;
  if (name === "ControlOrMeta") return keyDefinition(IS_MAC ? "Meta" : "Control");
  if (NAMED[named]) {
    const [code, keyCode, text] = NAMED[named];
    return { key: named, code, keyCode, text };
  }
  if ([...named].length !== 1) return null;
  if (/[a-z]/i.test(named))
    return { key: named, code: `Key${named.toUpperCase()}`, keyCode: named.toUpperCase().charCodeAt(0), text: named };
  if (/[0-9]/.test(named)) return { key: named, code: `Digit${named}`, keyCode: named.charCodeAt(0), text: named };
  const digit = SHIFTED_DIGITS.indexOf(named);
  if (digit >= 0) return { key: named, code: `Digit${digit}`, keyCode: 48 + digit, text: named };
  const [code, keyCode] = PUNCTUATION[named] ?? ["", 0];
  return { key: named, code, keyCode, text: named };
}

/** "Control+Shift+a" -> ["Control", "Shift", "a"]; a "+" key stays whole ("Shift++"). */
export function splitCombo(combo) {
  const parts = [];
  let rest = combo;
  for (let plus = rest.indexOf("+", 1); plus > 0; plus = rest.indexOf("+", 1)) {
    parts.push(rest.slice(0, plus));
    rest = rest.slice(plus + 1);
  }
  parts.push(rest);
  return parts;
}

/**
 * `request` for syntheticKeys with the definitions of the keys it presses: `keys`, the press's
 * combination in order, or for a fill {Enter, Delete, typed: one per character when slowly};
 * `unknownKey`, the message naming a key name that is none.
 */
export function withKeyDefinitions(request) {
  if (request?.action === "press" && typeof request.key === "string" && request.key !== "") {
    const names = splitCombo(request.key);
    const keys = names.map(keyDefinition);
    const unknown = names.find((_, index) => !keys[index]);
    return unknown === undefined ? { ...request, keys } : { ...request, unknownKey: unknownKey(unknown) };
  }
  if (request?.action === "fill" && typeof request.text === "string") {
    const keys = { Enter: keyDefinition("Enter"), Delete: keyDefinition("Delete") };
    if (request.slowly) {
      keys.typed = [...request.text].map((char) => keyDefinition(char === "\n" || char === "\r" ? "Enter" : char));
    }
    return { ...request, keys };
  }
  return request;
}
