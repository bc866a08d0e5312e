// The page's dialogs and console, heard without the DevTools protocol (Firefox): alert, confirm and
// prompt are replaced in the page's world by ones that report the dialog and hold the page's script
// until the driver answers it, and console.* and uncaught errors are kept in a bounded buffer the
// driver reads (pageHookRecords).
//
// Where this code runs, and why: it is run in the tools' isolated world (executeScript's default,
// ISOLATED: Firefox's content script sandbox), and reaches into the page's (MAIN) world only to
// put its functions there, with exportFunction. The functions the page then calls are this
// sandbox's code: they keep their state here, where the page cannot read or write it, so no data
// crosses between the worlds through anything the page shares (DOM events, postMessage, globals).
// Hooks written as a MAIN world script could not do that: every channel from there to the
// isolated world (an event, a message, a shared node) is one the page can listen on and send on,
// and every native it would call is one a page that ran first may have replaced. Here, a page that
// replaced window.alert before the hooks loses its replacement; one that calls the hooks gets a
// dialog like any other, reported as its own, and answered only by the driver; one that replaces
// them after is only showing dialogs of its own making, which nobody needs to answer. What the page
// passes (a message, a console argument) is page text: read through Xray vision (its own toString
// is not called), cut to a bounded length, and kept as text.
//
// Holding: a dialog stops the page's script until it is answered, so the replacement blocks too,
// on a synchronous request to `answerUrl` (the driver's, given at install, never seen by the
// page) with the dialog's type, message and default in the query; the driver hears the dialog in
// that request and answers it with JSON {accept, text?} when browser_handle_dialog does, or after
// the timeout it chose, with {accept: false}. A request that fails dismisses the dialog (confirm
// gives false, prompt null). A page that kept a reference to the native alert from before the
// hooks still shows a native dialog: the driver hears nothing of it, and the tab stays blocked.
//
// Chromium has no exportFunction: there the DevTools driver hears dialogs and the console itself,
// and these answer not_supported. installPageHooks and pageHookRecords are sent as source.

/** Install the hooks in this frame once: {ok: true, installed} or {ok: false, code: "not_supported"}. */
export function installPageHooks({ answerUrl, consoleLimit = 200, textLimit = 2000 }) {
  /* global exportFunction */
  if (globalThis.__browserMcpHooks) return { ok: true, installed: false };
  const page = window.wrappedJSObject;
  if (!page || typeof exportFunction !== "function") {
    return { ok: false, code: "not_supported", message: "page hooks need Firefox's exportFunction" };
  }
  const apply = Reflect.apply;
  const Request = XMLHttpRequest;
  const state = { console: [], dropped: 0, dialogs: [] };
  globalThis.__browserMcpHooks = state;

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

  function record(level, args) {
    state.console.push({ level, text: args.map(asText).join(" "), time: Date.now() });
    if (state.console.length > consoleLimit) {
      state.console.shift();
      state.dropped += 1;
    }
  }

  /** Report the dialog and hold the page until the driver answers it: {accept, text}. */
  function hold(type, message, value) {
    const dialog = { type, message: asText(message ?? ""), defaultValue: asText(value ?? ""), time: Date.now() };
    state.dialogs.push(dialog);
    if (state.dialogs.length > 20) state.dialogs.shift();
    try {
      const request = new Request();
      const query = new URLSearchParams({ type, message: dialog.message, default: dialog.defaultValue });
      request.open("GET", `${answerUrl}${answerUrl.includes("?") ? "&" : "?"}${query}`, false);
      request.send();
      const answer = request.status === 200 ? JSON.parse(request.responseText) : {};
      dialog.answer = { accept: answer.accept === true, text: typeof answer.text === "string" ? answer.text : null };
    } catch {
      dialog.answer = { accept: false, text: null };
    }
    return dialog.answer;
  }

  const dialogs = {
    alert: (message) => void hold("alert", message),
    confirm: (message) => hold("confirm", message).accept,
    prompt: (message, value) => {
      const answer = hold("prompt", message, value);
      if (!answer.accept) return null;
      return answer.text ?? (value === undefined ? "" : asText(value));
    },
  };
  for (const [name, hook] of Object.entries(dialogs)) exportFunction(hook, page, { defineAs: name });

  const pageConsole = page.console;
  for (const level of ["log", "info", "warn", "error", "debug"]) {
    const original = pageConsole[level];
    const hook = (...args) => {
      record(level, args);
      if (typeof original === "function") return apply(original, pageConsole, args);
    };
    exportFunction(hook, pageConsole, { defineAs: level });
  }
  addEventListener("error", (event) => {
    const where = event.filename ? ` (${event.filename}:${event.lineno}:${event.colno})` : "";
    record("error", [`Uncaught ${event.message}${where}`]);
  });
  addEventListener("unhandledrejection", (event) => record("error", ["Uncaught (in promise)", event.reason]));
  return { ok: true, installed: true };
}

/** What the hooks heard in this frame: {console, dropped, dialogs}; with `take`, the console is emptied. */
export function pageHookRecords({ take = false } = {}) {
  const state = globalThis.__browserMcpHooks;
  if (!state) return { ok: false, code: "not_installed", message: "installPageHooks has not run in this frame" };
  const records = { ok: true, console: [...state.console], dropped: state.dropped, dialogs: [...state.dialogs] };
  if (take) {
    state.console.length = 0;
    state.dropped = 0;
  }
  return records;
}
