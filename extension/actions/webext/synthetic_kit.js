// The parts every synthetic input action shares (synthetic_input.js, synthetic_keys.js), made
// once per world and kept on its global: the native functions they call, taken when the kit is
// made; finding the element a target names; the point where input reaches it, checked the way
// the DevTools driver checks it (elements.js: what the viewport shows at the element's middle must
// be the element or a part of it); and a field's edits as the browser makes them (beforeinput, the
// value set through the native setter, input, and change once the field is left or committed).
//
// Runs in the page, in the tools' isolated world (chrome.scripting.executeScript's default world,
// ISOLATED; Firefox's content script sandbox, which sees the DOM through Xray vision): there the
// page's replacements of DOM methods and prototypes (dispatchEvent, the value setters, focus) are
// not seen, and the page cannot reach the kit on this world's global. It must not run in the MAIN
// world, where a page that ran first could have replaced any of them before they were taken. Refs
// are resolved by the snapshot's agent of this same world (page/snapshot.js,
// globalThis.__browserMcpAgent). syntheticKit is sent as source: it may use nothing from this
// module's scope. The actions find the kit on the global; the driver runs syntheticKit first in a
// world that answers `no_kit` (a new document, or a frame not acted in before).

/** Make this world's kit, once: {ok: true, made} (made: false when it was there already). */
export function syntheticKit() {
  if (globalThis.__browserMcpSyntheticKit) return { ok: true, made: false };
  globalThis.__browserMcpSyntheticKit = makeKit();
  return { ok: true, made: true };

  function makeKit() {
    // Taken once, when this world makes its kit; calls go through Reflect.apply, never `.call` on
    // an object the page could have reached.
    const apply = Reflect.apply;
    const dispatch = EventTarget.prototype.dispatchEvent;
    const setter = (prototype, name) => Object.getOwnPropertyDescriptor(prototype, name).set;
    const natives = Object.freeze({
      focus: HTMLElement.prototype.focus,
      blur: HTMLElement.prototype.blur,
      setSelected: setter(HTMLOptionElement.prototype, "selected"),
      setFiles: setter(HTMLInputElement.prototype, "files"),
      // The value setters React and its kind do not see: they watch the element's own `value`.
      setInputValue: setter(HTMLInputElement.prototype, "value"),
      setTextAreaValue: setter(HTMLTextAreaElement.prototype, "value"),
      setRangeText: HTMLInputElement.prototype.setRangeText,
      setTextAreaRangeText: HTMLTextAreaElement.prototype.setRangeText,
      requestSubmit: HTMLFormElement.prototype.requestSubmit,
      decode: (
        (atob) => (text) =>
          apply(atob, globalThis, [text])
      )(atob),
    });
    const state = { hovered: null, chooser: null, committed: new WeakMap() };
    const NOT_TEXT = new Set(["checkbox", "radio", "button", "submit", "reset", "file", "image", "hidden"]);
    const PICKED = new Set(["date", "time", "datetime-local", "month", "week", "color", "range"]);

    const fail = (code, message, why) => Object.assign(new Error(message), { code, why });
    const send = (target, event) => apply(dispatch, target, [event]);
    const parentOf = (node) => node.parentNode ?? node.host ?? null;
    const shadowOf = (element) =>
      globalThis.chrome?.dom?.openOrClosedShadowRoot?.(element) ?? element.openOrClosedShadowRoot ?? element.shadowRoot;

    function describe(element) {
      if (!element) return "nothing";
      const tag = element.localName || element.nodeName.toLowerCase();
      return `<${tag}${element.id ? `#${element.id}` : element.classList?.[0] ? `.${element.classList[0]}` : ""}>`;
    }

    function contains(outer, node) {
      for (let at = node; at; at = parentOf(at)) if (at === outer) return true;
      return false;
    }

    function find(target) {
      if (target?.ref) {
        const found = globalThis.__browserMcpAgent?.element(target.ref) ?? "unknown";
        if (typeof found === "string") {
          const text =
            found === "gone"
              ? "points at an element that is no longer on the page"
              : "is not from a snapshot of this page";
          throw fail("stale_ref", `ref ${target.ref} ${text}: take a new snapshot and use a ref from it`, found);
        }
        return found;
      }
      if (typeof target?.selector !== "string")
        throw fail("invalid_arguments", "target must be a ref or a CSS selector");
      let found;
      try {
        found = document.querySelector(target.selector);
      } catch {
        throw fail("invalid_arguments", `"${target.selector}" is neither a ref like e12 nor a valid CSS selector`);
      }
      if (!found) throw fail("action_failed", `"${target.selector}" does not match any element`);
      return found;
    }

    /** The element at (x, y) of the viewport, inside shadow trees (closed ones too, where the world may see them). */
    function hitAt(x, y) {
      let hit = document.elementFromPoint(x, y);
      for (let root = hit && shadowOf(hit); root; root = hit && shadowOf(hit)) {
        const inner = root.elementFromPoint(x, y);
        if (!inner || inner === hit) break;
        hit = inner;
      }
      return hit;
    }

    /** What input at `point` would reach instead of `element` (a description), or null when it reaches it. */
    function covering(element, point) {
      const hit = hitAt(point.x, point.y);
      if (hit && contains(element, hit)) return null;
      // A label passes its clicks on to its control (a box drawn over a hidden checkbox).
      for (let at = hit; at; at = parentOf(at)) if (at.localName === "label" && at.control === element) return null;
      return describe(hit);
    }

    /** The middle of the element's first box in the viewport once scrolled to, checked to be its own. */
    function reach(element) {
      if (!element.isConnected) throw fail("stale_ref", "the element is no longer on the page", "gone");
      const inView = (box) => box.bottom > 0 && box.right > 0 && box.top < innerHeight && box.left < innerWidth;
      const box = element.getBoundingClientRect();
      if (!inView(box) || box.top < 0 || box.bottom > innerHeight) {
        element.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
      }
      for (const rect of element.getClientRects()) {
        const left = Math.max(rect.left, 0);
        const right = Math.min(rect.right, innerWidth);
        const top = Math.max(rect.top, 0);
        const bottom = Math.min(rect.bottom, innerHeight);
        if (right - left < 1 || bottom - top < 1) continue;
        const point = { x: Math.floor((left + right) / 2), y: Math.floor((top + bottom) / 2) };
        const over = covering(element, point);
        if (over)
          throw fail(
            "element_covered",
            `cannot reach ${describe(element)}: ${over} covers it at (${point.x}, ${point.y})`,
          );
        return point;
      }
      throw fail(
        "action_failed",
        `cannot reach ${describe(element)}: it has no visible box (hidden, empty or outside the page)`,
      );
    }

    /** Fail with element_moved (or covered) when the page moved the element away from `point` as the mouse came. */
    function stillThere(element, point) {
      const over = element.isConnected ? covering(element, point) : "nothing";
      if (over)
        throw fail(
          "element_moved",
          `cannot reach ${describe(element)}: it moved: ${over} is at (${point.x}, ${point.y}) now`,
        );
    }

    function modifierKeys(modifiers = []) {
      if (!Array.isArray(modifiers)) throw fail("invalid_arguments", 'modifiers must be a list like ["Shift"]');
      const keys = { altKey: false, ctrlKey: false, metaKey: false, shiftKey: false };
      const mac = /mac/i.test(navigator.platform);
      for (const name of modifiers) {
        const key = { Alt: "altKey", Control: "ctrlKey", Meta: "metaKey", Shift: "shiftKey" }[
          name === "ControlOrMeta" ? (mac ? "Meta" : "Control") : name
        ];
        if (!key)
          throw fail("invalid_arguments", `unknown modifier "${name}": use Alt, Control, ControlOrMeta, Meta or Shift`);
        keys[key] = true;
      }
      return keys;
    }

    function kindOf(element) {
      const { localName, type } = element;
      if (localName === "textarea" || (localName === "input" && !NOT_TEXT.has(type) && !PICKED.has(type)))
        return "value";
      return element.isContentEditable ? "rich" : null;
    }

    function setValue(element, value) {
      apply(element.localName === "textarea" ? natives.setTextAreaValue : natives.setInputValue, element, [value]);
    }

    /** The field's selection as [start, end]; fields without one (email, number) are edited at their end. */
    function selectionOf(element) {
      const start = element.selectionStart;
      return start === null || start === undefined
        ? [element.value.length, element.value.length]
        : [start, element.selectionEnd];
    }

    /** One edit as the browser makes it: beforeinput (which may cancel it), the change, input; whether it was made. */
    function edit(element, inputType, data) {
      const init = { inputType, data, bubbles: true, composed: true };
      const before = new InputEvent("beforeinput", { ...init, cancelable: true });
      send(element, before);
      if (before.defaultPrevented) return false;
      if (!state.committed.has(element)) {
        // The value when the person started: change fires when they leave the field, if it differs.
        state.committed.set(element, kindOf(element) === "value" ? element.value : element.textContent);
        element.addEventListener("blur", () => commit(element), { once: true });
      }
      if (kindOf(element) === "value") {
        let [start, end] = selectionOf(element);
        if (start === end && inputType === "deleteContentBackward") start = Math.max(0, start - 1);
        if (start === end && inputType === "deleteContentForward") end += 1;
        const value = element.value;
        setValue(element, value.slice(0, start) + (data ?? "") + value.slice(end));
        try {
          element.setSelectionRange(start + (data ?? "").length, start + (data ?? "").length);
        } catch {
          // email and number fields keep no selection
        }
      } else {
        const selection = getSelection();
        const range = selection.rangeCount ? selection.getRangeAt(0) : document.createRange();
        if (!element.contains(range.commonAncestorContainer))
          (range.selectNodeContents(element), range.collapse(false));
        if (range.collapsed && inputType === "deleteContentBackward")
          range.setStart(range.startContainer, Math.max(0, range.startOffset - 1));
        range.deleteContents();
        if (data) {
          const text = document.createTextNode(data);
          range.insertNode(text);
          range.setStartAfter(text);
        }
        range.collapse(true);
        selection.removeAllRanges();
        selection.addRange(range);
      }
      send(element, new InputEvent("input", init));
      return true;
    }

    function commit(element) {
      if (!state.committed.has(element)) return;
      const was = state.committed.get(element);
      state.committed.delete(element);
      if (kindOf(element) === "value" && element.value !== was) send(element, new Event("change", { bubbles: true }));
    }

    function selectAll(element) {
      if (kindOf(element) === "value") {
        try {
          element.setSelectionRange(0, element.value.length);
        } catch {
          element.select();
        }
        return;
      }
      const range = document.createRange();
      range.selectNodeContents(element);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
    }

    function usable(element, what) {
      if (element.matches(":disabled"))
        throw fail("action_failed", `cannot ${what} ${describe(element)}: it is disabled`);
    }

    /** `action(...)`'s answer: its JSON result, or {ok: false, code, message, why?} for what it threw. */
    function answer(action) {
      try {
        return action();
      } catch (error) {
        if (error?.code) return { ok: false, code: error.code, message: error.message, why: error.why };
        return { ok: false, code: "action_failed", message: String(error?.message ?? error) };
      }
    }

    return Object.freeze({
      apply,
      send,
      fail,
      answer,
      describe,
      contains,
      parentOf,
      find,
      hitAt,
      reach,
      stillThere,
      modifierKeys,
      kindOf,
      setValue,
      selectionOf,
      edit,
      commit,
      selectAll,
      PICKED,
      usable,
      natives,
      state,
    });
  }
}
