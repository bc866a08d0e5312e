// The recorder of the person's own actions, run in each document of the recorded tab, in an
// isolated world of ours (never the page's main world: the page can neither read what it keeps nor
// call what it reports through). It hears the person's clicks, typing, choices in a select, checks
// and key presses such as Enter, each with its element's locator (locators.js, the one
// browser_generate_locator answers), and hands each step to `report`. Events the page makes up
// itself (isTrusted false) are not the person's and are ignored. A password field's value never
// leaves this world: its step says only that something was typed there.
//
// Runs in the page: `recorder` is sent as source (Chromium) or imported by the isolated world
// (Firefox), so it may use nothing from this module's scope, only the page's globals.

/**
 * Start recording this document; `report(step)` hears each step, `{kind, locator, ...}`:
 * click; fill {value} or {secret: true}; select {values}; check {checked}; press {key}.
 * Answers {stop()}, which removes every listener. Recording twice in one world records once.
 * @param {typeof import("./locators.js").locatorEngine} locatorEngine
 * @param {typeof import("./roles.js").ariaRules} ariaRules
 * @param {typeof import("./names.js").accessibleNames} accessibleNames
 * @param {(step: object) => void} report
 */
export function recorder(locatorEngine, ariaRules, accessibleNames, report) {
  const KEY = "__browserMcpRecorder";
  globalThis[KEY]?.stop();
  const engine = locatorEngine(ariaRules, accessibleNames);
  const FILLED = new Set(["", "text", "email", "search", "tel", "url", "number", "password", "date", "time"]);
  // Keys that are not typing: a press of its own (Playwright's names), and any key with Ctrl, Alt or Meta.
  const PRESSED = new Set([
    "Enter",
    "Escape",
    "F1",
    "F2",
    "F3",
    "F4",
    "F5",
    "F6",
    "F7",
    "F8",
    "F9",
    "F10",
    "F11",
    "F12",
  ]);

  /** The element an event reached, inside open shadow roots too. */
  const targetOf = (event) => {
    const path = event.composedPath?.() ?? [];
    const first = path.find((node) => node instanceof Element);
    return first ?? (event.target instanceof Element ? event.target : null);
  };
  const isPassword = (element) =>
    element instanceof HTMLInputElement &&
    (element.type === "password" || /\b(current|new)-password\b/i.test(element.getAttribute("autocomplete") ?? ""));
  const isFillable = (element) =>
    (element instanceof HTMLInputElement && FILLED.has(element.type)) ||
    element instanceof HTMLTextAreaElement ||
    Boolean(element?.isContentEditable);
  const isToggle = (element) => element instanceof HTMLInputElement && ["checkbox", "radio"].includes(element.type);
  const locatorOf = (element) => {
    try {
      return engine.locatorFor(element);
    } catch {
      return null;
    }
  };
  const send = (element, step) => {
    const locator = locatorOf(element);
    report({ ...step, locator });
  };

  // A click that a key press made (Enter in a form submits through its button) is that press's.
  let pressedAt = -Infinity;
  const onClick = (event) => {
    if (!event.isTrusted || event.button !== 0) return;
    if (event.detail === 0 && performance.now() - pressedAt < 1000) return;
    const element = targetOf(event);
    if (!element) return;
    // What a field or a choice holds is written as its fill, check or selectOption; a label's
    // click reaches its control, which says it.
    const control = element.closest("label")?.control;
    if (isFillable(element) || isToggle(element) || element instanceof HTMLSelectElement) return;
    if (control && (isToggle(control) || isFillable(control) || control instanceof HTMLSelectElement)) return;
    if (element.closest("select, option")) return;
    const clickable = element.closest("a, button, [role=button], [role=link], input, summary") ?? element;
    send(clickable, { kind: "click" });
  };
  const onInput = (event) => {
    if (!event.isTrusted) return;
    const element = targetOf(event);
    if (!element || !isFillable(element)) return;
    if (isPassword(element)) send(element, { kind: "fill", secret: true });
    else send(element, { kind: "fill", value: element.isContentEditable ? element.textContent : element.value });
  };
  const onChange = (event) => {
    if (!event.isTrusted) return;
    const element = targetOf(event);
    if (element instanceof HTMLSelectElement) {
      send(element, { kind: "select", values: [...element.selectedOptions].map((option) => option.value) });
    } else if (isToggle(element)) {
      send(element, { kind: "check", checked: element.checked });
    }
  };
  const onKey = (event) => {
    if (!event.isTrusted || event.repeat) return;
    const modified = event.ctrlKey || event.altKey || event.metaKey;
    if (!PRESSED.has(event.key) && !(modified && event.key.length === 1)) return;
    const element = targetOf(event) ?? document.activeElement;
    if (!element) return;
    const key = [
      event.ctrlKey && "Control",
      event.altKey && "Alt",
      event.metaKey && "Meta",
      event.shiftKey && modified && "Shift",
      event.key,
    ]
      .filter(Boolean)
      .join("+");
    pressedAt = performance.now();
    send(element, { kind: "press", key });
  };

  const listeners = [
    ["click", onClick],
    ["input", onInput],
    ["change", onChange],
    ["keydown", onKey],
  ];
  for (const [type, listener] of listeners) window.addEventListener(type, listener, true);
  const handle = {
    stop() {
      for (const [type, listener] of listeners) window.removeEventListener(type, listener, true);
      if (globalThis[KEY] === handle) delete globalThis[KEY];
    },
    /** The locator of this document's iframe element `frame` (for a step in that frame). */
    locatorFor: locatorOf,
  };
  globalThis[KEY] = handle;
  return handle;
}
