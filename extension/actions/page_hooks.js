// The page's dialogs and console as the WebExtension driver hears them (Firefox, which gives
// extensions no DevTools protocol): alert, confirm and prompt are replaced in the page by ones
// that hold the page's script until the client answers with browser_handle_dialog, and console.*
// and uncaught errors are kept in a bounded list the driver reads. The background half is
// webext_dialogs.js; these functions are sent to each frame as executeScript's `func`.
//
// Where this code runs, and why: in the tools' isolated world (Firefox's content script sandbox),
// reaching into the page's world only to put its functions there, with exportFunction. What the
// page then calls is this sandbox's code, keeping its state here, where page script can neither
// read nor write it; no report or answer crosses anything the page shares (DOM events,
// postMessage, globals), and the natives it uses (XMLHttpRequest, URL, JSON) are the sandbox's
// own, which a page that replaced its own before the hooks does not reach. Such a page loses its
// replacement of alert; one that replaces the hooks later only shows dialogs of its own making.
// What the page passes (a message, console arguments) is read through Xray vision (the page's
// own toString is not called), cut to a bounded length and kept as text.
//
// Holding: a dialog stops the page's script until it is answered, so the replacement blocks too,
// on a synchronous request to `answerUrl`: an address on a host that never resolves, holding the
// document's secret (given here by the driver, never seen by the page), with the dialog in its
// query. The driver's blocking webRequest listener hears the dialog in that request and holds it
// until browser_handle_dialog, or its timeout, answers; the answer comes back as the address the
// request was redirected to, one of the add-on's own files with the answer {accept, text?} as
// its query. A request that fails (refused, or the driver gone) dismisses the dialog; a tab the
// tools let go of gets Firefox's own dialogs again, left to the person ({native: true}).

/**
 * Install the hooks in this frame once: {installed: true}; where they are already, give them the
 * driver's new answer address (a driver that restarted knows only its own): {installed: false}.
 */
export function installPageHooks({ answerUrl, consoleLimit, textLimit }) {
  /* global exportFunction */
  if (globalThis.__browserMcpHooks) {
    globalThis.__browserMcpHooks.answerUrl = answerUrl;
    return { installed: false };
  }
  const page = window.wrappedJSObject;
  const state = { console: [], answerUrl };
  globalThis.__browserMcpHooks = state;
  const apply = Reflect.apply;

  /** A value from the page as text: primitives as they print, objects as JSON or their kind. */
  function asText(value) {
    let text;
    if (value === null || (typeof value !== "object" && typeof value !== "function")) text = String(value);
    else {
      try {
        text = JSON.stringify(value) ?? Object.prototype.toString.call(value);
      } catch {
        text = Object.prototype.toString.call(value);
      }
    }
    return text.length > textLimit ? `${text.slice(0, textLimit)}…` : text;
  }

  function record(type, args) {
    state.console.push({ type, text: args.map(asText).join(" "), time: Date.now() });
    if (state.console.length > consoleLimit) state.console.shift();
  }

  // Through Xray vision, the window's own: never the page's replacements, nor ours below.
  const native = { alert: window.alert, confirm: window.confirm, prompt: window.prompt };

  /** Report the dialog and hold the page until the driver answers it: {accept, text} or {native}. */
  function hold(type, message, value) {
    try {
      const request = new XMLHttpRequest();
      const query = new URLSearchParams({ type, message: asText(message ?? ""), default: asText(value ?? "") });
      request.open("GET", `${state.answerUrl}?${query}`, false);
      request.send();
      const answer = JSON.parse(decodeURIComponent(new URL(request.responseURL).search.slice(1)));
      if (answer.native === true) return { native: true };
      return { accept: answer.accept === true, text: typeof answer.text === "string" ? answer.text : null };
    } catch {
      return { accept: false, text: null };
    }
  }

  const dialogs = {
    alert: (message) => {
      if (hold("alert", message).native) apply(native.alert, window, [asText(message ?? "")]);
    },
    confirm: (message) => {
      const answer = hold("confirm", message);
      return answer.native ? apply(native.confirm, window, [asText(message ?? "")]) : answer.accept;
    },
    prompt: (message, value) => {
      const answer = hold("prompt", message, value);
      if (answer.native) return apply(native.prompt, window, [asText(message ?? ""), asText(value ?? "")]);
      if (!answer.accept) return null;
      return answer.text ?? (value === undefined ? "" : asText(value));
    },
  };
  for (const [name, hook] of Object.entries(dialogs)) exportFunction(hook, page, { defineAs: name });

  const pageConsole = page.console;
  const types = { log: "log", info: "info", warn: "warning", error: "error", debug: "debug" };
  for (const [method, type] of Object.entries(types)) {
    const original = pageConsole[method];
    const hook = (...args) => {
      record(type, args);
      if (typeof original === "function") return apply(original, pageConsole, args);
    };
    exportFunction(hook, pageConsole, { defineAs: method });
  }
  // An event the page dispatched itself (isTrusted false) is the page's word, file and line
  // included: kept apart from the errors the browser raised, and listed as the page's.
  const dispatched = (event) => `[${event.type} event dispatched by the page]`;
  addEventListener("error", (event) => {
    const where = event.filename ? ` @ ${event.filename}:${event.lineno}` : "";
    if (event.isTrusted) record("exception", [`Uncaught ${event.message}${where}`]);
    else record("dispatched", [`${dispatched(event)} ${asText(event.message)}${where}`]);
  });
  addEventListener("unhandledrejection", (event) =>
    event.isTrusted
      ? record("exception", ["Uncaught (in promise)", event.reason])
      : record("dispatched", [dispatched(event), event.reason]),
  );
  return { installed: true };
}

/** What the hooks heard in this frame's console: [{type, text, time}], [] where they are not installed. */
export function pageConsoleRecords() {
  return [...(globalThis.__browserMcpHooks?.console ?? [])];
}
