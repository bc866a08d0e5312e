// Page tools where Chromium has no WebMCP of its own. Runs in the page's MAIN world at
// document_start, before any page script; with navigator_context.js, all the extension runs there.
//
// - `document.modelContext` (the current WebMCP surface): `registerTool(tool, {signal})`, where
//   aborting the signal unregisters the tool, plus `getTools()` and `toolchange` events. Installed
//   where Chromium does not provide it (it does with --enable-features=WebMCP), and in every frame.
// - `navigator.modelContext`, the older surface: navigator_context.js, run right after this file
//   wherever it is put in, which takes what this file hands it (`hooks.forNavigator`).
//
// Most pages declare no tool and should not feel the extension: until a page touches either
// modelContext or holds a `<form toolname>`, only two getters are defined (one here) and the page is
// watched for tool forms once idle. Every document compiles this file (comments cost next to
// nothing; code does), so what only some need is elsewhere: the bridge (bridge.js, isolated world)
// and the tool forms' machinery (tool_forms.js), put in by the worker where a page needs them.
//
// So the page's first tool, tool form or change in Chromium's own tools asks the worker for the
// bridge (`wake`) through waker.js, our one script in the isolated world from the start, which
// turns the window event into one request per document (the page's world has no extension
// messaging; the worker takes the document from Chromium's word about the sender, so a page can
// have a bridge put only in itself). The bridge then asks for the tools. The registry lives in the
// MAIN world, which the extension cannot see; it talks to the bridge by window.postMessage,
// announcing its tool list on every change and running the calls the bridge asks for (where
// Chromium keeps the tools, it says only that they changed). The page sees these messages and could
// forge them, but only about its own tools. Content scripts cannot be ES modules, so the message
// names are spelled here and in bridge.js and protocol.js.
(() => {
  "use strict";

  const PAGE = "browser-mcp-page";
  const BRIDGE = "browser-mcp-bridge";
  const MARK = Symbol.for("browser-mcp.polyfill");
  // Every page pays for what this script touches at its start: the prototypes it must extend are
  // all it touches (not the window, the document or the navigator, whose wrappers cost more).
  const documents = Document.prototype;
  if (documents[MARK]) return; // injected twice: by the manifest and after an install
  // Kept as the page found them: a page that replaces them later neither blinds nor watches us.
  const findInDocument = documents.querySelector;
  const { querySelector: findInElement, matches } = Element.prototype;
  // What the worker reads and tool_forms.js, put in later, joins: the registry; whether the page
  // asked for its bridge, has tool forms, and was given its bridge.
  const hooks = {
    modelContext: null,
    woken: false,
    waitingForWaker: false,
    wantsForms: false,
    forms: null,
    bridged: false,
  };
  Object.defineProperty(documents, MARK, { value: hooks });

  const post = (message) => window.postMessage({ source: PAGE, ...message }, "*");

  function checkTool(tool) {
    if (!tool || typeof tool !== "object") throw new TypeError("a tool must be an object");
    if (typeof tool.name !== "string" || tool.name === "") throw new TypeError("a tool needs a name");
    // The rule of page_tool_names.js: a name that could pose as the browser's own words or tools.
    if (tool.name.length > 128 || !/^[A-Za-z0-9_.-]+$/.test(tool.name)) {
      throw new TypeError("a tool's name is at most 128 letters, digits, _, - and .");
    }
    if (/(^|[_.-])(tabs|page_tools|call_page_tool)$|browser_/i.test(tool.name)) {
      throw new TypeError(
        `tool ${tool.name}: tabs, page_tools, call_page_tool and browser_* name the browser's own tools`,
      );
    }
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

  /**
   * Have the worker put the bridge in this document: the page's world cannot reach the extension,
   * so the signal goes to waker.js, in this document's isolated world, which sends the worker one
   * request per document. A signal nobody cancelled went out before the waker ran: it is sent again
   * when the waker says it is there. Should the request be lost (the worker stopped, the page
   * spoiled the signal), the worker reads `hooks.woken` when a client asks for the page's tools
   * and puts the bridge in then.
   */
  function askWorker() {
    hooks.woken = true;
    const signal = () => window.dispatchEvent(new Event("browser-mcp-wake", { cancelable: true }));
    if (signal() && !hooks.waitingForWaker) {
      hooks.waitingForWaker = true;
      window.addEventListener("browser-mcp-waker", signal, { once: true });
    }
  }

  /** The page's first tool (or change in Chromium's own tools): its bridge comes, once. */
  const wake = () => hooks.woken || askWorker();
  // For navigator_context.js, which takes it at once: this script's second run hands nothing over.
  hooks.forNavigator = { post, wake, checkTool };

  // Chromium's executeTool rejects with one generic message whatever the tool threw. Wrapping
  // each tool's execute lets the bridge hear what it was, just before that rejection.
  // Chromium's own WebMCP serves top-level documents (in a frame it shares or hides the tools),
  // so frames always get the polyfill, whose registry is the frame's own.
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
    // The bridge comes once the page has a tool: Chromium's registry tells when it changes.
    native.addEventListener("toolchange", () => {
      post({ kind: "changed" });
      wake();
    });
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
        if (tools.size) wake();
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
   * shows up: the page asks the worker for it (and for its bridge, if it has none yet). It then
   * scans on every change that concerns tool forms. Called from an idle callback, not at the
   * start: a function is compiled when it is first called, and this one's compiling is then off
   * the page's load.
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
      askWorker();
    };
    // Nodes a page adds can bring a tool form; while it has none, only those are looked at.
    const bringsToolForm = (node) =>
      node.nodeType === Node.ELEMENT_NODE &&
      (matches.call(node, "form[toolname]") || findInElement.call(node, "form[toolname]"));
    const concernsTools = (records) =>
      hooks.forms?.holding() ||
      records.some((record) => record.type === "attributes" || [...record.addedNodes].some(bringsToolForm));

    if (findInDocument.call(document, "form[toolname]")) found();
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
})();
