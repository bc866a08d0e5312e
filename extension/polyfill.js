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
// built, and neither the bridge nor the page is listened to.
//
// The polyfill's registry lives in the MAIN world, where the extension cannot see it. It talks to
// bridge.js (isolated world) with window.postMessage: it announces its tool list on every change
// and runs calls the bridge asks for; where Chromium keeps the tools, it says only that they
// changed. The page sees these messages too and could forge them, but only about its own tools,
// which it controls anyway. Content scripts cannot be ES modules, so the message names are spelled
// here and in bridge.js.
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

  // A frame has no bridge until it has a tool: the isolated world a bridge lives in costs each
  // document some 100 KB, and most frames (ads, embeds) never declare one. A frame's first tool
  // asks the top document's bridge to have one put in; it then asks this polyfill for the tools.
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
  if ("modelContext" in document && window === window.top) {
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
    Object.defineProperty(Document.prototype, "modelContext", {
      configurable: true,
      enumerable: true,
      get: () => (context ??= polyfilledContext()),
    });
    watchToolForms(() => (context ??= polyfilledContext()));
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
   * WebMCP's declarative tools, where Chromium has none of its own: each `<form toolname
   * tooldescription>` is a tool whose input schema comes from its named fields (a field's
   * `toolparamdescription`, else its label, else its `aria-description`, describes it). A call
   * fills the fields as a person would (`input` and `change` heard), then submits the form if it
   * says `toolautosubmit`, or else waits for the person to submit it. The submit event tells the
   * page an agent sent it (`agentInvoked`) and takes the result (`respondWith(promise)`); without
   * one, the result says the form was submitted, and where to. `modelContext()` gives the
   * registry. Gives `scan()`, which registers the document's tool forms and drops those that went
   * or changed, and `holding()`, whether any is registered.
   */
  function declarativeTools(modelContext) {
    const registered = new Map(); // form -> {name, description, controller}
    const waiting = new Map(); // form -> settle(result or error)

    const fieldsOf = (form) =>
      [...form.elements].filter(
        (field) =>
          field.name &&
          !field.disabled &&
          !["submit", "button", "reset", "image", "hidden", "file"].includes(field.type),
      );

    function describeField(field) {
      const own =
        field.getAttribute("toolparamdescription") ?? field.closest("fieldset")?.getAttribute("toolparamdescription");
      if (own) return own;
      const label = field.labels?.[0];
      if (label) {
        const copy = label.cloneNode(true);
        for (const inner of copy.querySelectorAll("input, select, textarea, button")) inner.remove();
        const text = copy.textContent.replace(/\s+/g, " ").trim();
        if (text) return text;
      }
      return field.getAttribute("aria-description") ?? "";
    }

    function schemaOf(form) {
      const properties = {};
      const required = new Set();
      for (const field of fieldsOf(form)) {
        let property = properties[field.name];
        if (field.type === "radio") {
          property ??= { type: "string", enum: [] };
          property.enum.push(field.value);
        } else if (field.type === "checkbox") {
          property = { type: "boolean" };
        } else if (field.type === "number" || field.type === "range") {
          property = { type: "number" };
          if (field.min !== "") property.minimum = Number(field.min);
          if (field.max !== "") property.maximum = Number(field.max);
        } else if (field.localName === "select") {
          const values = [...field.options].map((option) => option.value);
          property = field.multiple
            ? { type: "array", items: { type: "string", enum: values } }
            : { type: "string", enum: values };
        } else {
          property = { type: "string" };
          if (["email", "url", "date", "time"].includes(field.type))
            property.format = field.type === "url" ? "uri" : field.type;
        }
        const description = describeField(field);
        if (description) property.description = description;
        properties[field.name] = property;
        if (field.required) required.add(field.name);
      }
      return { type: "object", properties, ...(required.size ? { required: [...required] } : {}) };
    }

    function set(field, value) {
      if (field.type === "checkbox") field.checked = value === true || value === "true" || value === "on";
      else if (field.type === "radio") field.checked = field.value === String(value);
      else if (field.localName === "select" && field.multiple) {
        const chosen = new Set((Array.isArray(value) ? value : [value]).map(String));
        for (const option of field.options) option.selected = chosen.has(option.value);
      } else field.value = String(value);
      field.dispatchEvent(new Event("input", { bubbles: true }));
      field.dispatchEvent(new Event("change", { bubbles: true }));
    }

    function fill(form, args) {
      const fields = fieldsOf(form);
      const unknown = Object.keys(args).filter((name) => !fields.some((field) => field.name === name));
      if (unknown.length) throw new TypeError(`the form has no field ${unknown.join(", ")}`);
      for (const field of fields) if (Object.hasOwn(args, field.name)) set(field, args[field.name]);
    }

    /** What became of a submission an agent asked for: the page's answer, or where the form went. */
    function outcomeOf(form, submission) {
      if (submission.answered) return submission.answered;
      if (submission.event.defaultPrevented) return "The form was submitted; the page handled it without navigating.";
      return `The form was submitted: the page is going to ${form.action}.`;
    }

    function execute(form) {
      return (args) =>
        new Promise((resolve, reject) => {
          fill(form, args ?? {});
          if (!form.checkValidity()) {
            const wrong = fieldsOf(form).filter((field) => !field.checkValidity());
            const why = wrong.map((field) => `${field.name} (${field.validationMessage})`).join(", ");
            form.reportValidity();
            reject(new Error(`the form's fields are not valid: ${why}`));
            return;
          }
          waiting.get(form)?.(Promise.reject(new Error("another call filled the form again")));
          const settle = (outcome) => Promise.resolve(outcome).then(resolve, reject);
          waiting.set(form, settle);
          if (!form.hasAttribute("toolautosubmit")) {
            form.querySelector("input, select, textarea")?.focus();
            return;
          }
          const before = submissions.get(form);
          form.requestSubmit();
          const submission = submissions.get(form);
          // Every listener has run by now; the page may also have refused it (invalid, or none fired).
          if (submission && submission !== before) settle(outcomeOf(form, submission));
          else if (waiting.get(form) === settle) {
            waiting.delete(form);
            reject(new Error("the form was not submitted"));
          }
        });
    }

    const submissions = new WeakMap(); // form -> {event, answered} of its last submission an agent awaits
    // At the window, in the capture phase: before the form's and the document's listeners, so that
    // they see what an agent sent.
    window.addEventListener(
      "submit",
      (event) => {
        const form = event.target;
        const settle = waiting.get(form);
        if (!settle) return;
        waiting.delete(form);
        const submission = { event, answered: null };
        submissions.set(form, submission);
        Object.defineProperty(event, "agentInvoked", { value: true });
        Object.defineProperty(event, "respondWith", {
          value: (promise) => {
            if (submission.answered) throw new DOMException("respondWith was called already", "InvalidStateError");
            submission.answered = Promise.resolve(promise);
          },
        });
        // The person submitted it: its outcome once every listener has run.
        if (!form.hasAttribute("toolautosubmit")) setTimeout(() => settle(outcomeOf(form, submission)));
      },
      true,
    );

    function scan() {
      const forms = new Set(document.querySelectorAll("form[toolname][tooldescription]"));
      for (const [form, entry] of registered) {
        const same =
          forms.has(form) &&
          form.getAttribute("toolname") === entry.name &&
          form.getAttribute("tooldescription") === entry.description &&
          JSON.stringify(schemaOf(form)) === entry.schema;
        if (!same) {
          entry.controller.abort();
          registered.delete(form);
        }
      }
      for (const form of forms) {
        if (registered.has(form)) continue;
        const name = form.getAttribute("toolname");
        const description = form.getAttribute("tooldescription");
        const inputSchema = schemaOf(form);
        const controller = new AbortController();
        try {
          modelContext().registerTool(
            { name, description, inputSchema, execute: execute(form) },
            { signal: controller.signal },
          );
          registered.set(form, { name, description, controller, schema: JSON.stringify(inputSchema) });
        } catch (error) {
          console.warn(`browser-mcp polyfill: the form tool ${name} is not registered:`, error.message);
        }
      }
    }

    return { scan, holding: () => registered.size > 0 };
  }

  /**
   * Where pages may declare `<form toolname>`: looked for once the page is idle, and then in what
   * it adds. The forms' machinery (declarativeTools) is built only for a page that has one.
   */
  function watchToolForms(modelContext) {
    let forms = null;
    const scan = () => (forms ??= declarativeTools(modelContext)).scan();
    // Nodes a page adds can bring a tool form; while it has none, only those are looked at.
    const bringsToolForm = (node) =>
      node.nodeType === Node.ELEMENT_NODE && (node.matches("form[toolname]") || node.querySelector("form[toolname]"));
    const concernsTools = (records) =>
      forms?.holding() ||
      records.some((record) => record.type === "attributes" || [...record.addedNodes].some(bringsToolForm));

    const start = () => {
      if (document.querySelector("form[toolname]")) scan();
      // Scanned in the observer's own callback, once per batch of changes: a page timer set here
      // would count as the page's own in an action's watch for timers that start navigations.
      new MutationObserver((records) => {
        if (concernsTools(records)) scan();
      }).observe(document, {
        subtree: true,
        childList: true,
        attributes: true,
        attributeFilter: ["toolname", "tooldescription"],
      });
    };
    // The first look waits until the page is idle rather than run inside its DOMContentLoaded,
    // whose end (and its load) it would push back on every page, most of which have no tool form.
    // An idle callback, not a timer, for the same reason as above.
    const whenIdle = () => requestIdleCallback(start, { timeout: 1000 });
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", whenIdle, { once: true });
    else whenIdle();
  }

  if (!("modelContext" in navigator)) {
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
