// The one script of the extension in the isolated world of every http(s) document, from its start:
// it carries the page's request for its bridge to the worker, the page's own world having no way
// to reach the extension (the manifest names no web page in externally_connectable).
//
// polyfill.js dispatches SIGNAL on the window with the page's first tool, tool form or change in
// Chromium's own tools. The page can dispatch it too, as often as it likes: the first one sends the
// worker one WAKE, and then this stops listening, so the rest cost the page alone. The worker takes
// the document from Chromium's word about the sender, so a forged signal can only have a bridge put
// in the page's own document, once. Cancelling the signal tells the polyfill it was heard; one
// dispatched before this ran went unheard, and READY, dispatched here at the start, has the
// polyfill send it again. Touches nothing else (each API this world touches builds objects in it).
// Content scripts cannot import protocol.js; the names match its Bridge.
(() => {
  "use strict";

  const SIGNAL = "browser-mcp-wake";
  const READY = "browser-mcp-waker";
  const WAKE = "browser-mcp/wake";
  const MARK = Symbol.for("browser-mcp.waker");
  if (globalThis[MARK]) return;
  globalThis[MARK] = true;

  const heard = (event) => {
    event.preventDefault();
    window.removeEventListener(SIGNAL, heard, true);
    try {
      chrome.runtime.sendMessage({ kind: WAKE }).catch(() => {});
    } catch {
      // the extension was reloaded or removed: nothing to ask
    }
  };
  window.addEventListener(SIGNAL, heard, true);
  window.dispatchEvent(new Event(READY));
})();
