// `navigator.modelContext`, the older WebMCP surface existing pages use: `registerTool` (returning
// `{unregister}`), `unregisterTool`, `provideContext({tools})`, `clearContext`. Where Chromium has
// none of its own, an adapter over `document.modelContext`, native or polyfilled, so one registry
// holds every tool; where it has, each change of its tools wakes the bridge.
//
// Runs in the page's MAIN world right after polyfill.js, listed after it wherever it is put in
// (the manifest, the worker's page_bridges.js), and takes what polyfill.js handed it on its
// hooks; when polyfill.js ran before in this document (injected twice), nothing is handed over
// and this does nothing, as that run did it. Content scripts cannot import.
(() => {
  "use strict";

  const hooks = Document.prototype[Symbol.for("browser-mcp.polyfill")];
  const given = hooks?.forNavigator;
  if (!given) return;
  delete hooks.forNavigator;
  const { post, wake, checkTool } = given;

  if (!("modelContext" in Navigator.prototype)) {
    let legacy = null;
    Object.defineProperty(Navigator.prototype, "modelContext", {
      configurable: true,
      enumerable: true,
      get: () => (legacy ??= legacyContext()),
    });
  } else {
    // Chromium's older WebMCP keeps the tools of its own navigator.modelContext, which the bridge
    // reads through navigator.modelContextTesting: each change wakes it.
    const older = navigator.modelContext;
    for (const method of ["registerTool", "unregisterTool", "provideContext", "clearContext"]) {
      const own = older[method];
      if (typeof own !== "function") continue;
      older[method] = function (...args) {
        try {
          return own.apply(this, args);
        } finally {
          post({ kind: "changed" });
          wake();
        }
      };
    }
  }

  /** The older surface over `document.modelContext`, built the first time the page asks. */
  function legacyContext() {
    const registrations = new Map(); // name -> AbortController
    const provided = new Set(); // names that came from provideContext

    const unregisterTool = (name) => {
      registrations.get(name)?.abort();
      registrations.delete(name);
      provided.delete(name);
    };
    const registerTool = (tool) => {
      checkTool(tool);
      // The older API replaced a tool of the same name instead of refusing it.
      unregisterTool(tool.name);
      const controller = new AbortController();
      document.modelContext.registerTool(tool, { signal: controller.signal });
      registrations.set(tool.name, controller);
      return { unregister: () => unregisterTool(tool.name) };
    };
    return {
      registerTool,
      unregisterTool,
      provideContext({ tools = [] } = {}) {
        for (const name of [...provided]) unregisterTool(name);
        for (const tool of tools) {
          registerTool(tool);
          provided.add(tool.name);
        }
      },
      clearContext() {
        for (const name of [...registrations.keys()]) unregisterTool(name);
      },
    };
  }
})();
