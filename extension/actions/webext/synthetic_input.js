// The mouse on one element, for a driver that has no way to send trusted input (Firefox: no
// chrome.debugger): click, double click, hover, drag, choosing options, ticking a box and setting
// a file input's files, as the complete event sequences a person's mouse would make the browser
// dispatch (pointer, mouse, focus, click; HTML5 drag and drop with a DataTransfer), every event
// with isTrusted false, which each answer says.
//
// What a dispatched click still gets from the browser: the activation behaviour of the element
// (a box ticks, a radio button is chosen, a link is followed, a submit button submits its form, a
// label passes the click on to its control), as HTML runs it for any click event. What it does not
// get: user activation (pop-ups, the file chooser, full screen, clipboard stay refused), and the
// :hover and :active styles.
//
// Runs in the page, in the tools' isolated world (never MAIN: see synthetic_kit.js), with the kit
// syntheticKit made there; it answers `no_kit` in a world that has none yet. syntheticInput is
// sent as source: it may use nothing from this module's scope.

/**
 * Carry out `request` ({action: click | hover | drag | select | check | upload, target: {ref} or
 * {selector}, ...}) and answer {ok: true, synthetic: true, element, ...} or {ok: false, code,
 * message} (codes as errors.js's; stale_ref comes with `why`: "gone" or "unknown").
 */
export function syntheticInput(request) {
  const kit = globalThis.__browserMcpSyntheticKit;
  if (!kit) return { ok: false, code: "no_kit", message: "run syntheticKit in this world first" };
  const { apply, send, fail, describe, contains, parentOf, find, hitAt, reach, stillThere, modifierKeys } = kit;
  const { usable, natives, state } = kit;
  const FOCUSABLE =
    "a[href], area[href], button, input, select, textarea, iframe, summary, [tabindex], [contenteditable]";
  const BUTTONS = { left: [0, 1], middle: [1, 4], right: [2, 2] };
  return kit.answer(() => run(request));

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

  /** Press and release `button` on the element `count` times, as one or more clicks; whether a file input was clicked. */
  function press(element, point, { button = "left", count = 1, modifiers } = {}) {
    if (!BUTTONS[button]) throw fail("invalid_arguments", "button must be left, right or middle");
    const [code, bit] = BUTTONS[button];
    const keys = modifierKeys(modifiers);
    moveOnto(element, point, keys);
    stillThere(element, point);
    // A file input the click opens (itself, through a label, or a handler's input.click()).
    let chooser = false;
    const heard = (event) => {
      if (event.target?.localName !== "input" || event.target.type !== "file") return;
      state.chooser = new WeakRef(event.target);
      chooser = true;
    };
    addEventListener("click", heard, true);
    try {
      for (let detail = 1; detail <= count; detail++) {
        const init = { ...keys, button: code, detail };
        // A cancelled pointerdown keeps the mouse events back, not the click (Pointer Events).
        const quiet = fire(element, "pointerdown", point, { ...init, buttons: bit, pressure: 0.5 });
        const kept = quiet || fire(element, "mousedown", point, { ...init, buttons: bit });
        if (!kept && button === "left") focusFrom(element);
        if (button === "right") fire(element, "contextmenu", point, { ...init, buttons: bit });
        fire(element, "pointerup", point, { ...init, buttons: 0 });
        if (!quiet) fire(element, "mouseup", point, { ...init, buttons: 0 });
        if (button === "left") fire(element, "click", point, { ...init, buttons: 0 });
        else fire(element, "auxclick", point, { ...init, buttons: 0 });
      }
      if (count === 2 && button === "left")
        fire(element, "dblclick", point, { ...keys, button: 0, buttons: 0, detail: 2 });
    } finally {
      removeEventListener("click", heard, true);
    }
    return chooser;
  }

  function drag(source, target, point, endPoint) {
    const end = endPoint ?? reach(target);
    moveOnto(source, point, {});
    stillThere(source, point);
    fire(source, "pointerdown", point, { button: 0, buttons: 1, pressure: 0.5 });
    fire(source, "mousedown", point, { button: 0, buttons: 1, detail: 1 });
    let carrier = source;
    while (carrier && !(carrier.nodeType === 1 && carrier.draggable)) carrier = parentOf(carrier);
    if (carrier) {
      // The browser's own drag loop: no more pointer or mouse events once the drag starts.
      const dataTransfer = new DataTransfer();
      if (fire(carrier, "dragstart", point, { dataTransfer, buttons: 1 })) return { dropped: false, html5: true };
      fire(source, "pointercancel", point, { buttons: 0 });
      fire(carrier, "drag", point, { dataTransfer, buttons: 1 });
      fire(target, "dragenter", end, { dataTransfer, buttons: 1 });
      const accepted = fire(target, "dragover", end, { dataTransfer, buttons: 1 });
      if (accepted) fire(target, "drop", end, { dataTransfer, buttons: 0 });
      else fire(target, "dragleave", end, { dataTransfer, buttons: 0 });
      fire(carrier, "dragend", end, { dataTransfer, buttons: 0 });
      return { dropped: accepted, html5: true };
    }
    const STEPS = 5;
    let under = source;
    for (let step = 1; step <= STEPS; step++) {
      const at = {
        x: Math.round(point.x + ((end.x - point.x) * step) / STEPS),
        y: Math.round(point.y + ((end.y - point.y) * step) / STEPS),
      };
      under = hitAt(at.x, at.y) ?? target;
      moveOnto(under, at, { buttons: 1 });
    }
    fire(under, "pointerup", end, { button: 0, buttons: 0 });
    fire(under, "mouseup", end, { button: 0, buttons: 0, detail: 1 });
    return { dropped: contains(target, under), html5: false };
  }

  function upload(element, files) {
    if (!element || element.localName !== "input" || element.type !== "file") {
      throw fail(
        "action_failed",
        `cannot set files on ${describe(element)}: it is not a file input (<input type=file>)`,
      );
    }
    usable(element, "set files on");
    if (files.length > 1 && !element.multiple) throw fail("action_failed", `${describe(element)} takes only one file`);
    const list = new DataTransfer();
    for (const file of files) {
      const text = natives.decode(file.data ?? "");
      const bytes = new Uint8Array(text.length);
      for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
      list.items.add(
        new File([bytes], file.name, { type: file.type ?? "", lastModified: file.modified ?? Date.now() }),
      );
    }
    apply(natives.setFiles, element, [list.files]);
    send(element, new Event("input", { bubbles: true, composed: true }));
    send(element, new Event("change", { bubbles: true }));
    state.chooser = null;
    return { files: files.map((file) => file.name) };
  }

  function select(element, values) {
    if (element.localName !== "select")
      throw fail("action_failed", `cannot select in ${describe(element)}: it is not a drop-down (<select>)`);
    usable(element, "select in");
    const options = [...element.options];
    const chosen = values.map(
      (value) =>
        options.find((o) => o.value === value) ?? options.find((o) => o.label === value || o.text.trim() === value),
    );
    const missing = values.filter((_, i) => !chosen[i]);
    if (missing.length)
      throw fail(
        "action_failed",
        `cannot select in ${describe(element)}: it has no option ${missing.map((v) => JSON.stringify(v)).join(", ")}`,
      );
    if (chosen.length > 1 && !element.multiple)
      throw fail("action_failed", `cannot select in ${describe(element)}: it takes only one option`);
    if (element.getRootNode().activeElement !== element) apply(natives.focus, element, [{ preventScroll: true }]);
    for (const option of options) apply(natives.setSelected, option, [chosen.includes(option)]);
    send(element, new Event("input", { bubbles: true, composed: true }));
    send(element, new Event("change", { bubbles: true }));
    return { selected: chosen.map((option) => option.value) };
  }

  /** Where `point` goes on into a frame: {frameId, x, y} in the frame's viewport, or null (not a frame's content). */
  function frameAt(point) {
    const hit = hitAt(point.x, point.y);
    if (hit?.localName !== "iframe" && hit?.localName !== "frame") return null;
    const box = hit.getBoundingClientRect();
    const style = getComputedStyle(hit);
    const [left, top] = [parseFloat(style.paddingLeft) || 0, parseFloat(style.paddingTop) || 0];
    const width = hit.clientWidth - left - (parseFloat(style.paddingRight) || 0);
    const height = hit.clientHeight - top - (parseFloat(style.paddingBottom) || 0);
    const x = point.x - box.left - hit.clientLeft - left;
    const y = point.y - box.top - hit.clientTop - top;
    // The frame's border or padding is the frame element's own; its content is the frame's document's.
    if (!(x >= 0 && y >= 0 && x < width && y < height)) return null;
    let frameId = -1;
    try {
      frameId = globalThis.browser?.runtime?.getFrameId?.(hit) ?? -1;
    } catch {
      // a frame this world may not name: the frame element takes the input, as the page sees it
    }
    return frameId >= 0 ? { frameId, x, y } : null;
  }

  /**
   * Input at a point of this frame's viewport ({at: {x, y}, to?} for click, hover and drag): the
   * event goes to what is on top there, in shadow trees too; a point on a frame's content answers
   * `in_frame` with the point in that frame, where the driver sends the request on.
   */
  function atPoint(request) {
    const { action, at, to } = request;
    const width = Math.floor(visualViewport?.width ?? innerWidth);
    const height = Math.floor(visualViewport?.height ?? innerHeight);
    const inside = (point) => point.x >= 0 && point.y >= 0 && point.x < width && point.y < height;
    const outside = [at, to].find((point) => point && !inside(point));
    if (outside && (outside === at || !request.nested)) return { ok: false, code: "outside", width, height, outside };
    if (outside) throw fail("not_supported", "in Firefox, browser_mouse_drag_xy takes two points of the same frame");
    const frame = frameAt(at);
    if (frame) return { ok: false, code: "in_frame", frame: { ...frame, dx: at.x - frame.x, dy: at.y - frame.y } };
    const element = hitAt(at.x, at.y);
    if (!element) throw fail("action_failed", `nothing is at (${at.x}, ${at.y}) of the page`);
    const done = (extra) => ({ ok: true, synthetic: true, element: describe(element), ...extra });
    if (action === "hover") return done(void moveOnto(element, at, {}));
    if (action === "drag") {
      if (frameAt(to))
        throw fail("not_supported", "in Firefox, browser_mouse_drag_xy takes two points of the same frame");
      const target = hitAt(to.x, to.y) ?? document.documentElement;
      return done(drag(element, target, at, to));
    }
    if (action !== "click") throw fail("invalid_arguments", `unknown input action "${action}" at a point`);
    return done({ fileChooser: press(element, at, { button: request.button, count: request.clickCount ?? 1 }) });
  }

  function run(request) {
    const { action } = request ?? {};
    if (request?.at) return atPoint(request);
    if (action === "upload" && !request.target) {
      const chooser = state.chooser?.deref();
      if (!chooser?.isConnected) throw fail("no_file_chooser", "no file chooser is open: click what opens it first");
      return { ok: true, synthetic: true, element: describe(chooser), ...upload(chooser, request.files ?? []) };
    }
    const element = find(request.target);
    const done = (extra) => ({ ok: true, synthetic: true, element: describe(element), ...extra });
    if (action === "upload") return done(upload(element, request.files ?? []));
    if (action === "hover") return done(void moveOnto(element, reach(element), {}));
    if (action === "select") {
      if (!Array.isArray(request.values))
        throw fail("invalid_arguments", "values must be a list of option values or labels");
      reach(element);
      return done(select(element, request.values));
    }
    if (action === "drag") return done(drag(element, find(request.to), reach(element)));
    if (action !== "click" && action !== "check") throw fail("invalid_arguments", `unknown input action "${action}"`);
    usable(element, "click");
    const checked = () => element.checked ?? element.getAttribute("aria-checked") === "true";
    if (action === "check" && checked() === Boolean(request.checked)) return done({ checked: checked() });
    const count = request.doubleClick ? 2 : 1;
    const chooser = press(element, reach(element), { button: request.button, count, modifiers: request.modifiers });
    if (action === "check" && checked() !== Boolean(request.checked)) {
      throw fail("action_failed", `clicking ${describe(element)} did not ${request.checked ? "check" : "uncheck"} it`);
    }
    return done(action === "check" ? { checked: checked() } : chooser ? { fileChooser: true } : {});
  }
}
