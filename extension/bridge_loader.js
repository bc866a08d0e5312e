// What every http(s) top document gets from its start, in the extension's isolated world: a few
// lines that wait for the page to have a tool. Most pages never declare one, and they should not
// feel the extension: compiling the whole bridge (bridge.js, 12 KB) cost each of them about a
// quarter of a millisecond of its load. So this hears polyfill.js's window messages and, at the
// page's first tool (or tool form, or change in Chromium's own tools), asks the worker once to put
// the bridge in this document; the bridge then asks the page for its tools. It also passes on the
// requests of the page's frames, whose first tool asks the top document for a bridge of their own
// (frames have no script of ours in this world until then).
//
// The worker reaches this through chrome.scripting: `woken` says the page asked for its bridge.
// The bridge, once in, takes the same place on the global. Content scripts cannot import
// protocol.js; the names match its Bridge.
(() => {
  "use strict";

  const WAKE = "browser-mcp/wake";
  const FRAME_TOOLS = "browser-mcp/frameTools";
  const KEY = Symbol.for("browser-mcp.bridge");
  if (globalThis[KEY]) return;
  const loader = { woken: false };
  globalThis[KEY] = loader;

  // One request for frames at a time, and one more for those that asked meanwhile: a frame that
  // spams the top page with messages costs the worker one look at the tab's frames per answer.
  let bridging = false;
  let bridgeAgain = false;
  function bridgeFrames() {
    if (bridging) {
      bridgeAgain = true;
      return;
    }
    bridging = true;
    chrome.runtime
      .sendMessage({ kind: FRAME_TOOLS })
      .catch(() => {})
      .finally(() => {
        bridging = false;
        if (bridgeAgain) {
          bridgeAgain = false;
          bridgeFrames();
        }
      });
  }

  window.addEventListener("message", (event) => {
    const data = event.data;
    if (data?.source !== "browser-mcp-page") return;
    if (event.source !== window) {
      if (data.kind === "frameTools") bridgeFrames();
      return;
    }
    // Once the bridge is in, it hears the page itself.
    if (loader.woken || globalThis[KEY] !== loader || !["tools", "changed", "forms"].includes(data.kind)) return;
    loader.woken = true;
    // Fails only when the extension was reloaded and this context is orphaned: nothing to ask.
    chrome.runtime.sendMessage({ kind: WAKE }).catch(() => {});
  });
})();
