// The keyboard, for a driver that has no way to send trusted input (Firefox: no chrome.debugger):
// typing into a field (fill: the whole text as one insertion, or key by key when `slowly`) and
// pressing a key or a combination on whatever has focus, as the events a person's keyboard would
// make the browser dispatch: keydown, keypress, beforeinput, input, keyup, and change when the
// field is left or Enter commits it. Every event is isTrusted false, which each answer says.
//
// A dispatched key event changes nothing by itself: the browser types no character, moves no
// caret or focus and submits no form for it. So the default actions a person relies on are done
// here, unless the page cancels the event that leads to them (keydown, beforeinput), as it could
// a real key's: characters and Backspace/Delete edit the field (the value set through the native
// setter, which a framework that watches the element's own `value`, React's way, does not see, so
// it takes the input event as the person's edit); Enter commits a field and submits its form as
// implicit submission does, or activates a focused button or link; Space activates a button or a
// box; Tab and Shift+Tab move focus in tab order; arrows, Home and End move the caret in a field
// or scroll the page; Control+a selects a field's text.
//
// Runs in the page, in the tools' isolated world (never MAIN: see synthetic_kit.js), with the kit
// syntheticKit made there; it answers `no_kit` in a world that has none yet. syntheticKeys is sent
// as source: it may use nothing from this module's scope.

/**
 * Carry out `request`: {action: "fill", target: {ref} or {selector}, text, slowly?, submit?} or
 * {action: "press", key: "Enter" | "a" | "Shift+Tab" | ...}, with the definitions of the keys
 * (key_table.js's withKeyDefinitions, which the driver adds); answers {ok: true, synthetic: true,
 * element, ...} or {ok: false, code, message} as syntheticInput does.
 */
export function syntheticKeys(request) {
  const kit = globalThis.__browserMcpSyntheticKit;
  if (!kit) return { ok: false, code: "no_kit", message: "run syntheticKit in this world first" };
  const { apply, send, fail, describe, find, reach, natives, kindOf, setValue, selectionOf, edit, commit } = kit;
  const { selectAll, PICKED } = kit;
  const MODIFIERS = { Shift: "shiftKey", Control: "ctrlKey", Alt: "altKey", Meta: "metaKey" };
  return kit.answer(() => run(request));

  /** The element keys go to: what has focus, inside shadow trees, else the body. */
  function focused() {
    let at = document.activeElement;
    while (at?.shadowRoot?.activeElement) at = at.shadowRoot.activeElement;
    return at ?? document.body;
  }

  function keyEvent(target, type, key, modifiers) {
    const charCode = type === "keypress" ? (key.key === "Enter" ? 13 : (key.text?.codePointAt(0) ?? 0)) : 0;
    const event = new KeyboardEvent(type, {
      key: key.key,
      code: key.code,
      keyCode: type === "keypress" ? charCode : key.keyCode,
      charCode,
      which: type === "keypress" ? charCode : key.keyCode,
      location: /Left$/.test(key.code) && key.key !== "ArrowLeft" ? 1 : 0,
      bubbles: true,
      cancelable: true,
      composed: true,
      view: window,
      ...modifiers,
    });
    send(target, event);
    return event.defaultPrevented;
  }

  function click(element) {
    send(
      element,
      new MouseEvent("click", { bubbles: true, cancelable: true, composed: true, view: window, detail: 1 }),
    );
  }

  /** Implicit submission: the form's default button clicked, or the form submitted as by that button. */
  function submit(element) {
    const form = element.form;
    if (!form) return;
    const button = [...form.elements].find((field) => field.type === "submit" || field.type === "image");
    if (button) {
      if (!button.matches(":disabled")) click(button);
    } else apply(natives.requestSubmit, form, []);
  }

  function tabOrder() {
    const found = [];
    const walk = (root) => {
      for (const element of root.querySelectorAll("*")) {
        if (element.tabIndex >= 0 && !element.matches(":disabled") && element.getClientRects().length)
          found.push(element);
        if (element.shadowRoot) walk(element.shadowRoot);
      }
    };
    walk(document);
    const positive = found.filter((element) => element.tabIndex > 0).sort((a, b) => a.tabIndex - b.tabIndex);
    return [...positive, ...found.filter((element) => element.tabIndex === 0)];
  }

  function moveFocus(from, back) {
    const order = tabOrder();
    if (!order.length) return;
    const at = order.indexOf(from);
    const next = at < 0 ? (back ? order.length - 1 : 0) : (at + (back ? -1 : 1) + order.length) % order.length;
    apply(natives.focus, order[next], []);
  }

  /** What the browser does for a key nobody cancelled, on `target`. */
  function defaultAction(target, key, modifiers) {
    const kind = kindOf(target);
    const shortcut = modifiers.ctrlKey || modifiers.metaKey || modifiers.altKey;
    if (shortcut) {
      if (kind && key.key.toLowerCase() === "a") selectAll(target);
      return;
    }
    if (key.key === "Backspace" || key.key === "Delete") {
      if (kind) edit(target, key.key === "Backspace" ? "deleteContentBackward" : "deleteContentForward", null);
      return;
    }
    if (key.key === "Enter") {
      if (target.localName === "input" && kind) return void (commit(target), submit(target));
      if (kind) return void edit(target, "insertLineBreak", "\n");
      if (target.matches("a[href], button, input[type=submit], input[type=button], input[type=reset], summary"))
        click(target);
      return;
    }
    if (key.text !== undefined && kind) return void edit(target, "insertText", key.text);
    if (key.key === "Tab") return moveFocus(target, modifiers.shiftKey);
    if (kind === "value" && /^(Arrow(Left|Right)|Home|End)$/.test(key.key)) {
      const [start, end] = selectionOf(target);
      const caret = {
        ArrowLeft: Math.max(0, Math.min(start, end) - (start === end)),
        ArrowRight: Math.max(start, end) + (start === end),
        Home: 0,
        End: target.value.length,
      }[key.key];
      try {
        target.setSelectionRange(Math.min(caret, target.value.length), Math.min(caret, target.value.length));
      } catch {
        // no caret to move
      }
      return;
    }
    if (kind) return;
    const step = { ArrowDown: 40, ArrowUp: -40, PageDown: innerHeight * 0.9, PageUp: -innerHeight * 0.9 }[key.key];
    if (step) scrollBy({ top: step, behavior: "instant" });
    else if (key.key === "Home" || key.key === "End")
      scrollTo({ top: key.key === "Home" ? 0 : document.documentElement.scrollHeight, behavior: "instant" });
  }

  /** Press `definitions` (a combination's keys, key_table.js's) on what has focus; what was pressed and on what. */
  function press(definitions, combo) {
    const keys = [...definitions];
    const key = keys.pop();
    const modifiers = {};
    for (const held of keys) {
      if (!MODIFIERS[held.key])
        throw fail(
          "invalid_arguments",
          `"${held.key}" is not a modifier: use Alt, Control, ControlOrMeta, Meta or Shift`,
        );
      modifiers[MODIFIERS[held.key]] = true;
      keyEvent(focused(), "keydown", held, modifiers);
    }
    const shown =
      modifiers.shiftKey && /^[a-z]$/.test(key.key)
        ? { ...key, key: key.key.toUpperCase(), text: key.text.toUpperCase() }
        : key;
    const target = focused();
    const cancelled = keyEvent(target, "keydown", shown, modifiers);
    const printing = shown.text !== undefined || shown.key === "Enter";
    const typed =
      !cancelled &&
      !(
        printing &&
        !modifiers.ctrlKey &&
        !modifiers.metaKey &&
        !modifiers.altKey &&
        keyEvent(target, "keypress", shown, modifiers)
      );
    const activates =
      shown.key === " " &&
      target.matches(
        "button, input[type=checkbox], input[type=radio], input[type=submit], input[type=button], summary",
      );
    if (typed && !activates) defaultAction(target, shown, modifiers);
    keyEvent(focused(), "keyup", shown, modifiers);
    if (typed && activates) click(target);
    for (const held of keys.reverse()) {
      delete modifiers[MODIFIERS[held.key]];
      keyEvent(focused(), "keyup", held, modifiers);
    }
    return { ok: true, synthetic: true, element: describe(target), key: combo, defaultPrevented: !typed };
  }

  function fill(element, text, slowly, keys) {
    if (typeof text !== "string") throw fail("invalid_arguments", "text must be a string");
    const what = `cannot type into ${describe(element)}: it`;
    if (element.matches(":disabled")) throw fail("action_failed", `${what} is disabled`);
    if (element.readOnly) throw fail("action_failed", `${what} is read-only`);
    const box = element.getBoundingClientRect();
    // A code editor's input proxy sits unseen under the text it draws: covered, and still where typing goes.
    const proxy = element.localName === "textarea" && (getComputedStyle(element).opacity === "0" || box.width <= 1);
    if (proxy) element.scrollIntoView({ block: "center", behavior: "instant" });
    else reach(element);
    if (element.localName === "input" && PICKED.has(element.type)) {
      apply(natives.focus, element, [{ preventScroll: true }]);
      const before = element.value;
      setValue(element, text.trim());
      if (element.value !== (element.type === "color" ? text.trim().toLowerCase() : text.trim())) {
        setValue(element, before);
        throw fail(
          "action_failed",
          `cannot set ${describe(element)}: ${JSON.stringify(text)} is not a value it takes (${element.type})`,
        );
      }
      send(element, new Event("input", { bubbles: true, composed: true }));
      send(element, new Event("change", { bubbles: true }));
      return;
    }
    if (!kindOf(element)) throw fail("action_failed", `${what} is not a text field`);
    if (element.getRootNode().activeElement !== element) apply(natives.focus, element, [{ preventScroll: true }]);
    selectAll(element);
    if (slowly) {
      if (text === "") press([keys.Delete], "Delete");
      for (const key of keys.typed) press([key], key.key);
    } else edit(element, text === "" ? "deleteContentBackward" : "insertText", text === "" ? null : text);
  }

  function run(request) {
    if (request?.action === "press") {
      if (typeof request.key !== "string" || request.key === "")
        throw fail("invalid_arguments", "key must be a key name like Enter, or a character");
      if (request.unknownKey) throw fail("invalid_arguments", request.unknownKey);
      return press(request.keys, request.key);
    }
    if (request?.action !== "fill") throw fail("invalid_arguments", `unknown keyboard action "${request?.action}"`);
    const element = find(request.target);
    fill(element, request.text, Boolean(request.slowly), request.keys);
    const value = kindOf(element) === "rich" ? element.textContent : element.value;
    if (request.submit) press([request.keys.Enter], "Enter");
    return { ok: true, synthetic: true, element: describe(element), value };
  }
}
