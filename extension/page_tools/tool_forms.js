// WebMCP's declarative tools (`<form toolname>`) where Chromium has none of its own, in the page's
// MAIN world. Not a content script: polyfill.js watches for tool forms, and the worker puts this in
// only a document that has one (most never do, and they should not pay to compile it). It joins
// the polyfill through the hooks it left on Document.prototype, and registers the forms in the
// registry the polyfill built.
(() => {
  "use strict";

  const hooks = Document.prototype[Symbol.for("browser-mcp.polyfill")];
  if (!hooks || hooks.forms) return;

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

  hooks.forms = declarativeTools(hooks.modelContext);
  hooks.forms.scan();
})();
