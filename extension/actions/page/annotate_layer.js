// browser_annotate's layer in the page, for both page drivers: run in the extension's isolated
// world (page_scripts.js's runIn), inside the closed shadow root of the world's one overlay host,
// browser_highlight's (page_effects.js, asked for it with {overlay: true} first). The page's
// scripts share the DOM with it but not its globals: they see a host element whose shadowRoot is
// null, never the toolbar, the boxes or the notes.
//
// Self-contained (an executeScript function): it may use nothing from this module's scope.

/**
 * browser_annotate's layer: `request` is one of
 *   {start: true}   put the layer over the viewport (a toolbar: Done, Cancel and the hint; a box
 *                   drawn by dragging, a note field under each)
 *   {wait: ms}      the layer's state once the person pressed Done or Cancel, or after `ms`
 *   {shoot: true}   hide the toolbar and the note fields, leaving the numbered boxes, painted
 *   {end: true}     take the layer away
 * Answers {ok, state: "drawing" | "done" | "cancelled" | "none", why?, boxes: [{x, y, width,
 * height, note}], reattached, replaced, viewport: {width, height}}.
 *
 * Only trusted input (isTrusted true: the person's) draws, types or presses a button; the events
 * go no further than the layer, so the page's listeners in the bubbling phase do not hear them.
 * A host the page removes is put back (and counted); one removed more than MAX_REATTACH times
 * ends the annotation as cancelled, saying why; a body the page replaced is told of.
 */
export function annotateInPage(request) {
  const MAX_REATTACH = 20;
  const HINT = "drag to draw a box, then type a note";
  const overlay = globalThis.__browserMcpHighlights;
  let state = globalThis.__browserMcpAnnotation ?? null;

  function report() {
    if (!state) return { ok: true, state: "none", boxes: [], reattached: 0, replaced: false };
    const boxes = state.boxes
      .filter((box) => box.element.isConnected)
      .map(({ x, y, width, height, note }) => ({ x, y, width, height, note: note.value.trim() }));
    return {
      ok: true,
      state: state.outcome ?? "drawing",
      why: state.why,
      boxes,
      reattached: state.reattached,
      replaced: state.replaced,
      viewport: { width: innerWidth, height: innerHeight },
    };
  }

  function settle(outcome, why) {
    if (!state || state.outcome) return;
    state.outcome = outcome;
    state.why = why;
    for (const wake of state.waiters) wake(report());
    state.waiters.clear();
  }

  function end() {
    if (!state) return;
    state.observer.disconnect();
    state.layer.remove();
    for (const wake of state.waiters) wake(report());
    globalThis.__browserMcpAnnotation = null;
  }

  function start() {
    if (!overlay?.root) return { ok: false, message: "the overlay is not in this page" };
    if (state) end();
    const layer = document.createElement("div");
    layer.className = "layer";
    const style = document.createElement("style");
    style.textContent = [
      ".layer{position:fixed;inset:0;pointer-events:auto;cursor:crosshair;background:rgba(0,40,120,0.06);" +
        "font:14px/1.3 system-ui,sans-serif;color:#111;user-select:none}",
      // The toolbar at the viewport's top right: Cancel's middle 51 px left of its right edge,
      // Done's 131 px, both 29 px down.
      ".bar{position:fixed;top:8px;right:8px;display:flex;gap:8px;align-items:center;height:28px;padding:6px;" +
        "background:#fff;border:1px solid #888;border-radius:6px;box-shadow:0 2px 8px #0004;cursor:default}",
      ".bar button{width:72px;height:28px;box-sizing:border-box;margin:0;padding:0;font:inherit;cursor:pointer}",
      ".box{position:fixed;box-sizing:border-box;border:2px solid rgb(230,0,120);background:rgba(230,0,120,0.12)}",
      ".box b{position:absolute;left:-2px;top:-20px;padding:0 5px;background:rgb(230,0,120);color:#fff;font:bold 12px/18px sans-serif}",
      ".box textarea{position:absolute;left:-2px;top:100%;margin-top:4px;width:220px;height:48px;font:13px sans-serif;cursor:text}",
      ".shot{background:none}.shot .bar,.shot textarea{display:none}",
    ].join("\n");
    const bar = document.createElement("div");
    bar.className = "bar";
    const hint = document.createElement("span");
    hint.textContent = HINT;
    const done = document.createElement("button");
    done.textContent = "Done";
    const cancel = document.createElement("button");
    cancel.textContent = "Cancel";
    bar.append(hint, done, cancel);
    layer.append(style, bar);
    overlay.root.append(layer);

    state = globalThis.__browserMcpAnnotation = {
      layer,
      boxes: [],
      drawing: null,
      outcome: null,
      why: undefined,
      waiters: new Set(),
      reattached: 0,
      replaced: false,
      body: document.body,
      kids: [...(document.body?.children ?? [])],
      observer: null,
    };

    const place = (element, { x, y, width, height }) => {
      element.style.left = `${x}px`;
      element.style.top = `${y}px`;
      element.style.width = `${width}px`;
      element.style.height = `${height}px`;
    };
    const spanOf = (from, event) => ({
      x: Math.min(from.x, event.clientX),
      y: Math.min(from.y, event.clientY),
      width: Math.abs(event.clientX - from.x),
      height: Math.abs(event.clientY - from.y),
    });
    const inBar = (event) => event.composedPath().some((node) => node === bar || node.localName === "textarea");

    layer.addEventListener("pointerdown", (event) => {
      event.stopPropagation();
      if (!event.isTrusted || event.button !== 0 || inBar(event) || state.outcome) return;
      event.preventDefault();
      const element = document.createElement("div");
      element.className = "box";
      layer.append(element);
      state.drawing = { from: { x: event.clientX, y: event.clientY }, element };
      place(element, spanOf(state.drawing.from, event));
      layer.setPointerCapture?.(event.pointerId);
    });
    layer.addEventListener("pointermove", (event) => {
      event.stopPropagation();
      if (!event.isTrusted || !state.drawing) return;
      place(state.drawing.element, spanOf(state.drawing.from, event));
    });
    layer.addEventListener("pointerup", (event) => {
      event.stopPropagation();
      if (!event.isTrusted || !state.drawing) return;
      const { from, element } = state.drawing;
      state.drawing = null;
      const span = spanOf(from, event);
      if (span.width < 4 || span.height < 4) {
        element.remove();
        return;
      }
      place(element, span);
      const number = document.createElement("b");
      number.textContent = String(state.boxes.length + 1);
      const note = document.createElement("textarea");
      note.placeholder = `note for box ${state.boxes.length + 1}`;
      element.append(number, note);
      state.boxes.push({ ...span, element, note });
      note.focus();
    });
    // The person's typing and clicks stay in the layer: none of them bubble out to the page.
    for (const type of [
      "click",
      "dblclick",
      "auxclick",
      "contextmenu",
      "mousedown",
      "mouseup",
      "mousemove",
      "keydown",
      "keyup",
      "keypress",
      "beforeinput",
      "input",
      "wheel",
    ]) {
      layer.addEventListener(type, (event) => event.stopPropagation());
    }
    done.addEventListener("click", (event) => event.isTrusted && settle("done"));
    cancel.addEventListener("click", (event) => event.isTrusted && settle("cancelled", "the person pressed Cancel"));

    // The host stays in the page: put back when the page removes it, stripped of what it sets on it.
    state.observer = new MutationObserver(() => {
      if (!state) return;
      const body = document.body;
      if (
        !state.replaced &&
        (body !== state.body || (state.kids.length && !state.kids.some((kid) => kid.parentNode === body)))
      ) {
        state.replaced = true;
      }
      for (const name of overlay.host.getAttributeNames()) overlay.host.removeAttribute(name);
      if (overlay.host.isConnected || state.outcome) return;
      if (state.reattached >= MAX_REATTACH || !document.documentElement) {
        settle("cancelled", `the page removed the annotation layer ${state.reattached + 1} times`);
        return;
      }
      state.reattached += 1;
      document.documentElement.append(overlay.host);
    });
    state.observer.observe(document, { childList: true, subtree: true, attributes: true });
    return report();
  }

  if (request.start) return start();
  if (request.end) {
    const last = report();
    end();
    return last;
  }
  if (request.shoot) {
    if (!state) return report();
    state.layer.classList.add("shot");
    // Painted once the next frame is drawn; a page whose frames do not come is not waited for long.
    return new Promise((resolve) => {
      const painted = () => resolve(report());
      requestAnimationFrame(() => requestAnimationFrame(painted));
      setTimeout(painted, 300);
    });
  }
  if (request.wait !== undefined) {
    if (!state || state.outcome) return report();
    return new Promise((resolve) => {
      state.waiters.add(resolve);
      setTimeout(() => {
        state?.waiters.delete(resolve);
        resolve(report());
      }, request.wait);
    });
  }
  return { ok: false, message: "no such request" };
}
