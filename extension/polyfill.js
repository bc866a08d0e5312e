// Page tools where Chromium has no WebMCP of its own. Runs in the page's MAIN world at
// document_start, before any page script.
//
// - `document.modelContext` (the current WebMCP surface): `registerTool(tool, {signal})`, where
//   aborting the signal unregisters the tool, plus `getTools()` and `toolchange` events. Installed
//   only when Chromium does not provide it (it does with --enable-features=WebMCP).
// - `navigator.modelContext` (the older surface existing pages use): `registerTool` (returning
//   `{unregister}`), `unregisterTool`, `provideContext({tools})`, `clearContext`. Always an adapter
//   over `document.modelContext`, native or polyfilled, so one registry holds every tool.
//
// The polyfill's registry lives in the MAIN world, where the extension cannot see it. It talks to
// bridge.js (isolated world) with window.postMessage: it announces its tool list on every change
// and runs calls the bridge asks for. The page sees these messages too and could forge them, but
// only about its own tools, which it controls anyway. Content scripts cannot be ES modules, so
// the message names are spelled here and in bridge.js.
(() => {
  "use strict";

  const PAGE = "browser-mcp-page";
  const BRIDGE = "browser-mcp-bridge";
  const MARK = Symbol.for("browser-mcp.polyfill");
  if (window[MARK]) return; // injected twice: by the manifest and after an install
  window[MARK] = true;

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

  // Chromium's executeTool rejects with one generic message whatever the tool threw. Wrapping
  // each tool's execute lets the bridge hear what it was, just before that rejection.
  if ("modelContext" in document) {
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
  } else {
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
    const changed = () => {
      post({ kind: "tools", tools: [...tools.values()].map(describe) });
      context.dispatchEvent(new Event("toolchange"));
    };
    const client = { requestUserInteraction: async (callback) => callback() };

    async function run(id, name, args) {
      const tool = tools.get(name);
      if (!tool) {
        post({ kind: "result", id, error: { code: "tool_not_found", message: `the page has no tool ${name}` } });
        return;
      }
      try {
        const value = await tool.execute(args ?? {}, client);
        post({ kind: "result", id, result: toJson(value) });
      } catch (error) {
        post({ kind: "result", id, error: { code: "tool_error", message: errorMessage(error) } });
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
        default:
          console.warn("browser-mcp polyfill: unknown bridge message", data.kind);
      }
    });

    Object.defineProperty(Document.prototype, "modelContext", {
      configurable: true,
      enumerable: true,
      get: () => context,
    });
  }

  if (!("modelContext" in navigator)) {
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
    const legacy = {
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
    Object.defineProperty(Navigator.prototype, "modelContext", {
      configurable: true,
      enumerable: true,
      get: () => legacy,
    });
  }
})();
