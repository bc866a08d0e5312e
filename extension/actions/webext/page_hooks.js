// The page's dialogs and console as the WebExtension driver hears them (Firefox, which gives
// extensions no DevTools protocol): alert, confirm and prompt are replaced in the page by ones
// that hold the page's script until the client answers with browser_handle_dialog, and console.*
// and uncaught errors are kept in a bounded list the driver reads. The background halves are
// dialogs.js and, for the console, telemetry.js; these functions are sent to each frame as executeScript's `func`.
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
// on synchronous requests to a host that never resolves, which the driver's blocking webRequest
// listener hears. In Firefox a content script's requests are the page's in all a page can watch:
// its Content-Security-Policy may block them and then tells the page (and its report endpoint)
// their address, and its resource timings list them. So no address carries anything worth
// taking: the document's secret, made here and handed to the driver alone (executeScript's
// result), goes in the body of a POST to `/dialog`, with the dialog and a ticket drawn for this
// dialog alone; the driver holds that request until browser_handle_dialog, or its timeout,
// answers, and ends it. The answer is then fetched with a GET of `/answer/<ticket>`, which the
// driver serves once, to this document, by redirecting it to one of the add-on's files with the
// answer {accept, text?} (or {native: true}: a tab the tools let go of) as its query; only this
// request is ever redirected there, so the page never meets the add-on's address. A dialog the
// requests could not hold (the page's own policy blocked them, or the driver is gone) is dismissed
// at once and said to the driver on a port of the add-on's own, which the page cannot reach, so
// that the client is told rather than shown nothing.

/**
 * Install the hooks in this frame once. Answers {installed, secret}: whether they went in now, and
 * this document's secret (the same each time it is asked, for a driver that restarted).
 */
export function installPageHooks({ answerHost, notHeldPort, consoleLimit, textLimit }) {
  /* global exportFunction */
  const token = () =>
    Array.from(crypto.getRandomValues(new Uint8Array(24)), (byte) => byte.toString(16).padStart(2, "0")).join("");
  if (globalThis.__browserMcpHooks) return { installed: false, secret: globalThis.__browserMcpHooks.secret };
  const page = window.wrappedJSObject;
  const state = { console: [], secret: token() };
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

  function syncRequest(method, address, body = null) {
    const request = new XMLHttpRequest();
    request.open(method, `https://${answerHost}${address}`, false);
    request.send(body);
    return request;
  }

  /** Report the dialog and hold the page until the driver answers it: {accept, text} or {native}. */
  function hold(type, message, value) {
    const ticket = token();
    const dialog = { type, message: asText(message ?? ""), default: asText(value ?? "") };
    try {
      // Ended by the driver once the dialog is answered: what it ends with says nothing.
      syncRequest("POST", "/dialog", JSON.stringify({ ...dialog, secret: state.secret, ticket }));
    } catch {
      // the answer, if there is one, is the ticket's
    }
    try {
      const answered = syncRequest("GET", `/answer/${ticket}`);
      const answer = JSON.parse(decodeURIComponent(new URL(answered.responseURL).search.slice(1)));
      if (answer.native === true) return { native: true };
      return { accept: answer.accept === true, text: typeof answer.text === "string" ? answer.text : null };
    } catch {
      try {
        const port = chrome.runtime.connect({ name: notHeldPort });
        port.postMessage({ type, message: dialog.message });
        port.disconnect();
      } catch {
        // the driver is gone: nobody to tell
      }
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
  return { installed: true, secret: state.secret };
}

/** What the hooks heard in this frame's console: [{type, text, time}], [] where they are not installed. */
export function pageConsoleRecords() {
  return [...(globalThis.__browserMcpHooks?.console ?? [])];
}
