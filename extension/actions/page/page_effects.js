// What browser_drop and browser_highlight do in the page, for both page drivers: run in the tools'
// isolated world, never the page's own, so a page that replaces DOM methods or event classes
// cannot change what they do, and cannot see their state.
//
// Each function is self-contained (sent as source by the DevTools driver, as an executeScript
// function by the WebExtension one): it may use nothing from this module's scope. Its element is
// `this` when `target` is null (the DevTools driver calls it on the element), else found from
// `target` ({ref} through the snapshot's agent, {selector}); one not found is answered {missing}.

/**
 * Drop `files` ({name, type, modified, data: base64}, or data kept beforehand on the element's
 * world-private `__browserMcpDropParts[index]`) and `data` ({MIME type: text}) onto the element as
 * a drag from outside the page would: dragenter, dragover and, when the page took it (cancelled
 * the dragover), drop, each carrying one DataTransfer; else dragleave. Answers {ok, accepted,
 * element} or {missing}.
 */
export function dropInPage(target, files, data) {
  let element = this;
  if (target?.mark !== undefined) {
    // Firefox, in the page's own world: the element the isolated world marked.
    element = document.querySelector(`[data-browser-mcp-evaluate="${target.mark}"]`) ?? "gone";
    if (typeof element !== "string") element.removeAttribute("data-browser-mcp-evaluate");
    if (typeof element === "string") return { missing: element };
  } else if (target) {
    if (target.selector !== undefined) {
      try {
        element = document.querySelector(target.selector) ?? "no match";
      } catch {
        element = "bad selector";
      }
    } else element = globalThis.__browserMcpAgent?.element(target.ref) ?? "unknown";
    if (typeof element === "string") return { missing: element };
  }
  const describe = (node) =>
    `<${node.localName}${node.id ? `#${node.id}` : node.classList?.[0] ? `.${node.classList[0]}` : ""}>`;
  const parts = element.__browserMcpDropParts ?? [];
  delete element.__browserMcpDropParts;
  const transfer = new DataTransfer();
  files.forEach((file, index) => {
    const chunks = file.data !== undefined ? [file.data] : (parts[index] ?? []);
    const bytes = chunks.map((chunk) => {
      const text = atob(chunk);
      const array = new Uint8Array(text.length);
      for (let at = 0; at < text.length; at += 1) array[at] = text.charCodeAt(at);
      return array;
    });
    transfer.items.add(
      new File(bytes, file.name, { type: file.type ?? "", lastModified: file.modified ?? Date.now() }),
    );
  });
  for (const [type, value] of Object.entries(data ?? {})) transfer.setData(type, value);
  transfer.effectAllowed = "copy";
  element.scrollIntoView({ block: "nearest", inline: "nearest" });
  const box = element.getBoundingClientRect();
  if (!(box.width > 0 && box.height > 0)) {
    return { ok: false, message: `${describe(element)} has no box on the page to drop onto (it is hidden)` };
  }
  const x = box.left + box.width / 2;
  const y = box.top + box.height / 2;
  // What is on top there, when it is a part of the element, gets the events, as a person's drop.
  const hit = document.elementFromPoint(x, y);
  const at = hit && element.contains(hit) ? hit : element;
  const fire = (type, cancelable) => {
    const event = new DragEvent(type, {
      bubbles: true,
      cancelable,
      composed: true,
      view: window,
      clientX: x,
      clientY: y,
      screenX: x + (window.mozInnerScreenX ?? screenX),
      screenY: y + (window.mozInnerScreenY ?? screenY),
      dataTransfer: transfer,
    });
    at.dispatchEvent(event);
    return event.defaultPrevented;
  };
  fire("dragenter", true);
  const accepted = fire("dragover", true);
  if (accepted) fire("drop", true);
  else fire("dragleave", false);
  return { ok: true, accepted, element: describe(element) };
}

/**
 * browser_highlight's boxes in this document: `request` {show: style}, {hide: true} (the
 * element's) or {hideAll: true}; or {overlay: true | false}: keep the host (with no boxes) for
 * browser_annotate's layer, in its `root`, or let it go. Answers {ok, element, shown} ({ok,
 * hidden: count} for hideAll)
 * or {missing}.
 *
 * The boxes are drawn in a closed shadow root of one host element put under the document's root
 * element (outside the body, which a page's script replacing its content leaves), styled from
 * inside with !important, so the page's own styles cannot hide them; they follow their elements
 * frame by frame, and one goes with its element when the element leaves the page. A host the
 * page removed is put back while boxes are shown. The world keeps the boxes, so the page can
 * neither read them nor reach them through the host: its shadowRoot is null to the page.
 */
export function highlightInPage(target, request) {
  const state = (globalThis.__browserMcpHighlights ??= { boxes: new Map(), host: null, root: null, frame: 0 });
  const describe = (node) =>
    `<${node.localName}${node.id ? `#${node.id}` : node.classList?.[0] ? `.${node.classList[0]}` : ""}>`;
  const BOX = "position:fixed!important;box-sizing:border-box!important;pointer-events:none!important;";
  const LOOK = "border:2px solid rgb(230,0,120);background:rgba(230,0,120,0.15);border-radius:2px;";

  function place() {
    state.frame = 0;
    for (const [element, box] of state.boxes) {
      if (!element.isConnected) {
        box.remove();
        state.boxes.delete(element);
        continue;
      }
      const rect = element.getBoundingClientRect();
      const shown = `${rect.left},${rect.top},${rect.width},${rect.height}`;
      if (box.dataset.at === shown) continue;
      box.dataset.at = shown;
      box.style.setProperty("left", `${rect.left}px`, "important");
      box.style.setProperty("top", `${rect.top}px`, "important");
      box.style.setProperty("width", `${rect.width}px`, "important");
      box.style.setProperty("height", `${rect.height}px`, "important");
    }
    if (!state.boxes.size) {
      if (!state.layer) state.host?.remove();
      return;
    }
    const root = document.documentElement;
    if (root && !state.host.isConnected) root.append(state.host);
    state.frame = requestAnimationFrame(place);
  }

  function host() {
    if (!state.host) {
      state.host = document.createElement("div");
      state.root = state.host.attachShadow({ mode: "closed" });
      const style = document.createElement("style");
      style.textContent =
        ":host{all:initial!important;display:block!important;position:fixed!important;inset:0!important;" +
        "pointer-events:none!important;z-index:2147483647!important;overflow:visible!important;" +
        "opacity:1!important;visibility:visible!important;transform:none!important;filter:none!important}";
      state.root.append(style);
    }
    return state.root;
  }

  if (request.hideAll) {
    const hidden = [...state.boxes.keys()].filter((element) => element.isConnected).length;
    for (const box of state.boxes.values()) box.remove();
    state.boxes.clear();
    if (!state.layer) state.host?.remove();
    return { ok: true, hidden };
  }
  if (request.overlay !== undefined) {
    // browser_annotate's layer (annotate_layer.js) is drawn in this host's closed root: kept while it is.
    state.layer = request.overlay;
    host();
    if (state.layer && !state.host.isConnected) document.documentElement.append(state.host);
    if (!state.layer && !state.boxes.size) state.host.remove();
    return { ok: true };
  }
  let element = this;
  if (target) {
    if (target.selector !== undefined) {
      try {
        element = document.querySelector(target.selector) ?? "no match";
      } catch {
        element = "bad selector";
      }
    } else element = globalThis.__browserMcpAgent?.element(target.ref) ?? "unknown";
    if (typeof element === "string") return { missing: element };
  }
  if (request.hide) {
    const box = state.boxes.get(element);
    box?.remove();
    state.boxes.delete(element);
    if (!state.boxes.size && !state.layer) state.host?.remove();
    return { ok: true, element: describe(element), shown: Boolean(box) };
  }
  let box = state.boxes.get(element);
  if (!box) {
    box = document.createElement("div");
    host().append(box);
    state.boxes.set(element, box);
  }
  box.setAttribute("style", LOOK + (typeof request.show === "string" ? request.show : "") + ";" + BOX);
  delete box.dataset.at;
  if (!state.frame) place();
  return { ok: true, element: describe(element), shown: true };
}
