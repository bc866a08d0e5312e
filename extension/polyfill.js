// Page tools where Chromium has no WebMCP of its own. Runs in the page's MAIN world at
// document_start, before any page script.
//
// - `document.modelContext` (the current WebMCP surface): `registerTool(tool, {signal})`, where
//   aborting the signal unregisters the tool, plus `getTools()` and `toolchange` events. Installed
//   where Chromium does not provide it (it does with --enable-features=WebMCP), and in every frame.
// - `navigator.modelContext` (the older surface existing pages use): `registerTool` (returning
//   `{unregister}`), `unregisterTool`, `provideContext({tools})`, `clearContext`. Where Chromium
//   has none of its own, an adapter over `document.modelContext`, native or polyfilled, so one
//   registry holds every tool.
//
// Most pages declare no tool, and they should not feel the extension: until a page touches
// `document.modelContext` or `navigator.modelContext`, or holds a `<form toolname>`, only two
// getters are defined here and the page is watched for tool forms once it is idle; no registry is
// built, and neither the bridge nor the page is listened to. Every document compiles this file, so
// what only some need is elsewhere: the tool forms' machinery in tool_forms.js, and the bridge,
// both put in by the worker where a page has a tool form or a tool (a comment costs next to
// nothing to compile; code does).
//
// The polyfill's registry lives in the MAIN world, where the extension cannot see it. It talks to
// bridge.js (isolated world; until it is in, bridge_loader.js, which has it put in) with
// window.postMessage: it announces its tool list on every change and runs calls the bridge asks
// for; where Chromium keeps the tools, it says only that they changed. The page sees these messages too and could forge them, but only about its own tools,
// which it controls anyway. Content scripts cannot be ES modules, so the message names are spelled
// here and in bridge.js.
(() => {
  "use strict";

  const PAGE = "browser-mcp-page";
  const BRIDGE = "browser-mcp-bridge";
  const MARK = Symbol.for("browser-mcp.polyfill");
  // Every page pays for what this script touches at its start: the prototypes it must extend are
  // all it touches (not the window, the document or the navigator, whose wrappers cost more).
  const documents = Document.prototype;
  if (documents[MARK]) return; // injected twice: by the manifest and after an install
  // What tool_forms.js, put in later, joins: the registry, and whether the page has tool forms.
  const hooks = { modelContext: null, wantsForms: false, forms: null };
  Object.defineProperty(documents, MARK, { value: hooks });

  const post = (message) => window.postMessage({ source: PAGE, ...message }, "*");

  function checkTool(tool) {
    if (!tool || typeof tool !== "object") throw new TypeError("a tool must be an object");
    if (typeof tool.name !== "string" || tool.name === "") throw new TypeError("a tool needs a name");
    if (typeof tool.execute !== "function") throw new TypeError(`tool ${tool.name} needs an execute function`);
  }

  function parseSchema(schema) {
    if (typeof schema === "string") {
      try {
        return JSON.parse(schema);
      } catch {
        return { type: "object", properties: {} };
      }
    }
    return schema && typeof schema === "object" ? schema : { type: "object", properties: {} };
  }

  function describe(tool) {
    const described = {
      name: tool.name,
      description: typeof tool.description === "string" ? tool.description : "",
      inputSchema: parseSchema(tool.inputSchema),
    };
    if (typeof tool.title === "string") described.title = tool.title;
    if (tool.annotations && typeof tool.annotations === "object") described.annotations = { ...tool.annotations };
    return described;
  }

  // Results cross postMessage and then JSON: keep what JSON keeps, and say what it cannot.
  function toJson(value) {
    if (value === undefined) return null;
    try {
      return JSON.parse(JSON.stringify(value));
    } catch {
      return String(value);
    }
  }

  function errorMessage(error) {
    if (error instanceof Error) return error.message || error.name;
    return typeof error === "string" ? error : String(error);
  }

  // A frame has no bridge until it has a tool: the isolated world a bridge lives in costs each
  // document some 100 KB, and most frames (ads, embeds) never declare one. A frame's first tool
  // asks the top document's loader to have one put in; it then asks this polyfill for the tools.
  let askedForBridge = false;
  const askForBridge = () => {
    if (askedForBridge || window === window.top) return;
    askedForBridge = true;
    window.top.postMessage({ source: PAGE, kind: "frameTools" }, "*");
  };

  // Chromium's executeTool rejects with one generic message whatever the tool threw. Wrapping
  // each tool's execute lets the bridge hear what it was, just before that rejection.
  // Chromium's own WebMCP serves top-level documents: in a frame it shares or hides the tools
  // (a frame of the page's origin sees the page's registry, one of another origin's are listed
  // nowhere), so frames always get the polyfill, whose registry is the frame's own.
  if ("modelContext" in documents && window === window.top) {
    const native = document.modelContext;
    const register = native.registerTool;
    native.registerTool = function registerTool(tool, options) {
      if (!tool || typeof tool.execute !== "function") return register.call(this, tool, options);
      const execute = tool.execute;
      const wrapped = {
        ...tool,
        async execute(...args) {
          try {
            return await execute.apply(tool, args);
          } catch (error) {
            post({ kind: "error", name: tool.name, message: errorMessage(error) });
            throw error;
          }
        },
      };
      return register.call(this, wrapped, options);
    };
    // The bridge stays idle until the page has a tool: Chromium's registry tells when it changes.
    native.addEventListener("toolchange", () => post({ kind: "changed" }));
  } else {
    let context = null;
    hooks.modelContext = () => (context ??= polyfilledContext());
    Object.defineProperty(documents, "modelContext", {
      configurable: true,
      enumerable: true,
      get: hooks.modelContext,
    });
    // The first look waits until the page has been parsed and is idle: inside its parsing, or its
    // DOMContentLoaded, it would push back the load of every page, most of which have no tool
    // form. An idle callback, not a timer: a page timer set here would count as the page's own in
    // an action's watch for timers that start navigations.
    requestIdleCallback(watchToolForms, { timeout: 1000 });
  }

  /** The registry of a document without Chromium's WebMCP, built the first time the page asks. */
  function polyfilledContext() {
    const tools = new Map();

    class ModelContext extends EventTarget {
      registerTool(tool, options = {}) {
        checkTool(tool);
        if (tools.has(tool.name)) {
          throw new DOMException(`a tool named ${tool.name} is already registered`, "InvalidStateError");
        }
        const signal = options?.signal;
        if (signal?.aborted) return;
        tools.set(tool.name, tool);
        signal?.addEventListener(
          "abort",
          () => {
            if (tools.get(tool.name) === tool) {
              tools.delete(tool.name);
              changed();
            }
          },
          { once: true },
        );
        changed();
      }

      getTools() {
        return Promise.resolve([...tools.values()].map(describe));
      }
    }

    const context = new ModelContext();
    // Changes made in one go (a page registering its tools one by one) are told once, after it:
    // telling each would cost the square of their number.
    let telling = false;
    const changed = () => {
      if (telling) return;
      telling = true;
      queueMicrotask(() => {
        telling = false;
        post({ kind: "tools", tools: [...tools.values()].map(describe) });
        if (tools.size) askForBridge();
        context.dispatchEvent(new Event("toolchange"));
      });
    };
    const running = new Map(); // call id -> AbortController

    async function run(id, name, args) {
      const tool = tools.get(name);
      if (!tool) {
        post({ kind: "result", id, error: { code: "tool_not_found", message: `the page has no tool ${name}` } });
        return;
      }
      // The client the tool runs for: its signal fires when the call is called off.
      const controller = new AbortController();
      running.set(id, controller);
      const client = { requestUserInteraction: async (callback) => callback(), signal: controller.signal };
      try {
        const value = await tool.execute(args ?? {}, client);
        post({ kind: "result", id, result: toJson(value) });
      } catch (error) {
        post({ kind: "result", id, error: { code: "tool_error", message: errorMessage(error) } });
      } finally {
        running.delete(id);
      }
    }

    window.addEventListener("message", (event) => {
      const data = event.data;
      if (event.source !== window || !data || data.source !== BRIDGE) return;
      switch (data.kind) {
        case "list":
          post({ kind: "tools", tools: [...tools.values()].map(describe) });
          break;
        case "call":
          run(data.id, data.name, data.args);
          break;
        case "cancel":
          running.get(data.id)?.abort(new DOMException("the call was called off", "AbortError"));
          break;
        default:
          console.warn("browser-mcp polyfill: unknown bridge message", data.kind);
      }
    });

    return context;
  }

  /**
   * Where pages may declare `<form toolname>`: looked for once the page has been parsed and is
   * idle, and then in what it adds. The forms' machinery (tool_forms.js) is put in only where one
   * shows up: the page says so to its bridge (a frame without one asks the top document's, as for
   * its first tool), which has the worker put it in. It then scans on every change that concerns
   * tool forms. Called from an idle callback, not at the start: a function is compiled when it is
   * first called, and this one's compiling is then off the page's load.
   */
  function watchToolForms() {
    if (document.readyState === "loading") {
      requestIdleCallback(watchToolForms, { timeout: 1000 });
      return;
    }
    const found = () => {
      if (hooks.forms) {
        hooks.forms.scan();
        return;
      }
      if (hooks.wantsForms) return;
      hooks.wantsForms = true;
      post({ kind: "forms" });
      askForBridge();
    };
    // Nodes a page adds can bring a tool form; while it has none, only those are looked at.
    const bringsToolForm = (node) =>
      node.nodeType === Node.ELEMENT_NODE && (node.matches("form[toolname]") || node.querySelector("form[toolname]"));
    const concernsTools = (records) =>
      hooks.forms?.holding() ||
      records.some((record) => record.type === "attributes" || [...record.addedNodes].some(bringsToolForm));

    if (document.querySelector("form[toolname]")) found();
    // Scanned in the observer's own callback, once per batch of changes: a page timer set here
    // would count as the page's own in an action's watch for timers that start navigations.
    new MutationObserver((records) => {
      if (concernsTools(records)) found();
    }).observe(document, {
      subtree: true,
      childList: true,
      attributes: true,
      attributeFilter: ["toolname", "tooldescription"],
    });
  }

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
          askForBridge();
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
