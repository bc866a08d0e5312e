// The parts every synthetic input action shares (synthetic_input.js, synthetic_keys.js), made
// once per world and kept on its global: the native functions they call, taken when the kit is
// made; finding the element a target names; the point where input reaches it, checked the way
// the DevTools driver checks it (elements.js: what the viewport shows at the element's middle must
// be the element or a part of it), and the pointer events a mouse coming onto it makes.
//
// Runs in the page, in the tools' isolated world (chrome.scripting.executeScript's default world,
// ISOLATED; Firefox's content script sandbox, which sees the DOM through Xray vision): there the
// page's replacements of DOM methods and prototypes (dispatchEvent, the value setters, focus) are
// not seen, and the page cannot reach the kit on this world's global. It must not run in the MAIN
// world, where a page that ran first could have replaced any of them before they were taken. Refs
// are resolved by the snapshot's agent of this same world (page_snapshot.js,
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
    const FOCUSABLE =
      "a[href], area[href], button, input, select, textarea, iframe, summary, [tabindex], [contenteditable]";
    const state = { hovered: null, chooser: null };

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

    /** Fire a mouse-family event (`type` decides the class); its defaultPrevented. */
    function fire(target, type, point, init = {}) {
      const Kind = type.startsWith("pointer")
        ? PointerEvent
        : type.startsWith("drag") || type === "drop"
          ? DragEvent
          : MouseEvent;
      const quiet = /enter$|leave$/.test(type);
      const event = new Kind(type, {
        bubbles: !quiet,
        cancelable: !quiet && !/move$/.test(type) && type !== "dragend",
        composed: true,
        view: window,
        clientX: point.x,
        clientY: point.y,
        screenX: point.x + (window.mozInnerScreenX ?? screenX),
        screenY: point.y + (window.mozInnerScreenY ?? screenY),
        ...(Kind === PointerEvent ? { pointerId: 1, pointerType: "mouse", isPrimary: true, width: 1, height: 1 } : {}),
        ...init,
      });
      send(target, event);
      return event.defaultPrevented;
    }

    /** The mouse comes onto `element` at `point`: out/leave where it was, over/enter here, then a move. */
    function moveOnto(element, point, init) {
      const before = state.hovered?.deref();
      if (before !== element) {
        const kept = before?.isConnected ? before : null;
        if (kept) {
          fire(kept, "pointerout", point, { ...init, relatedTarget: element });
          fire(kept, "mouseout", point, { ...init, relatedTarget: element });
          for (let at = kept; at && !contains(at, element); at = parentOf(at)) {
            if (at.nodeType !== 1) continue;
            fire(at, "pointerleave", point, init);
            fire(at, "mouseleave", point, init);
          }
        }
        fire(element, "pointerover", point, { ...init, relatedTarget: kept });
        fire(element, "mouseover", point, { ...init, relatedTarget: kept });
        const entered = [];
        for (let at = element; at && !(kept && contains(at, kept)); at = parentOf(at))
          if (at.nodeType === 1) entered.unshift(at);
        for (const at of entered) {
          fire(at, "pointerenter", point, init);
          fire(at, "mouseenter", point, init);
        }
        state.hovered = new WeakRef(element);
      }
      fire(element, "pointermove", point, init);
      fire(element, "mousemove", point, init);
    }

    /** A press moves focus to the nearest focusable ancestor, or away from where it was. */
    function focusFrom(element) {
      for (let at = element; at; at = parentOf(at)) {
        if (at.nodeType === 1 && at.matches(FOCUSABLE) && !at.matches(":disabled")) {
          if (at.getRootNode().activeElement !== at) apply(natives.focus, at, [{ preventScroll: true }]);
          return;
        }
      }
      const active = document.activeElement;
      if (active && active !== document.body) apply(natives.blur, active, []);
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
      fire,
      moveOnto,
      focusFrom,
      usable,
      natives,
      state,
    });
  }
}
