// Chromium's own WebMCP as the bridge (bridge.js) sees it, in the isolated world of a top
// document. With Chromium's native WebMCP, the isolated world sees `document.modelContext`
// itself: the bridge lists tools with getTools(), runs them with executeTool() and follows
// `toolchange`. executeTool takes the arguments as an object from Chromium 155 and as a JSON
// string before: the first call finds out which, once per page. Chromium's older surface,
// `navigator.modelContextTesting` (listTools(), executeTool(name, json),
// registerToolsChangedCallback), holds the tools pages gave its native `navigator.modelContext`;
// they are listed beside the polyfill's.
//
// Not a content script: put in with bridge.js, just before it, in the same isolated world, whose
// global carries what this file gives the bridge (the page cannot see that world).
(() => {
  "use strict";

  const CHROMIUM = Symbol.for("browser-mcp.bridge-chromium");
  if (globalThis[CHROMIUM]) return;

  const thrown = new Map(); // tool name -> what it last threw, as polyfill.js heard it

  /** What the tool threw: its message comes in a window message that may trail the rejection. */
  async function thrownBy(name) {
    for (let waited = 0; !thrown.has(name) && waited < 200; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const message = thrown.get(name);
    thrown.delete(name);
    return message;
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

  function describeNative(tool) {
    const described = {
      name: tool.name,
      description: tool.description ?? "",
      inputSchema: parseSchema(tool.inputSchema),
    };
    if (typeof tool.title === "string" && tool.title !== "") described.title = tool.title;
    if (tool.annotations && typeof tool.annotations === "object") described.annotations = { ...tool.annotations };
    return described;
  }

  function errorMessage(error) {
    if (error instanceof Error) return error.message || error.name;
    return typeof error === "string" ? error : String(error);
  }

  /**
   * This document's Chromium surfaces, looked up when the bridge wakes: null where it has neither.
   * `onChange` is called when their tools change.
   */
  function surfaces(inFrame, onChange) {
    // In a frame the polyfill serves, even where Chromium has WebMCP of its own (see polyfill.js).
    const native = inFrame ? null : (document.modelContext ?? null);
    const testing = native ? null : (navigator.modelContextTesting ?? null);
    native?.addEventListener("toolchange", onChange);
    testing?.registerToolsChangedCallback?.(onChange);
    if (!native && !testing) return null;
    // Whether this page's executeTool takes a JSON string (Chromium 150-154); null until a call tells.
    let argsAsString = null;

    /** The tools of Chromium's older surface; a page's polyfilled ones of the same name come first. */
    async function testingTools() {
      try {
        return Array.from((await testing.listTools()) ?? [], describeNative);
      } catch (error) {
        console.warn("browser-mcp: listTools failed", error);
        return [];
      }
    }

    function resultOf(text) {
      if (typeof text !== "string") return { result: text ?? null };
      try {
        return { result: JSON.parse(text) };
      } catch {
        return { result: text };
      }
    }

    /**
     * executeTool with the arguments in the shape this page's Chromium takes. A first call given
     * the wrong shape is refused before the tool runs (a string is no object; an object is no JSON
     * text), and the tool itself threw nothing: then the other shape is the one.
     */
    async function executeNative(tool, args, signal) {
      if (argsAsString) return native.executeTool(tool, JSON.stringify(args), { signal });
      try {
        const text = await native.executeTool(tool, args, { signal });
        argsAsString = false;
        return text;
      } catch (error) {
        const wrongShape = argsAsString === null && ["TypeError", "SyntaxError"].includes(error?.name);
        if (!wrongShape || (await thrownBy(tool.name)) !== undefined) throw error;
        argsAsString = true;
        return native.executeTool(tool, JSON.stringify(args), { signal });
      }
    }

    async function callNative(name, args, signal) {
      const tool = (await native.getTools()).find((candidate) => candidate.name === name);
      if (!tool)
        return {
          error: {
            code: "tool_not_found",
            message: `the page has no tool ${name}`,
          },
        };
      thrown.delete(name);
      try {
        return resultOf(await executeNative(tool, args ?? {}, signal));
      } catch (error) {
        return {
          error: {
            code: "tool_error",
            message: (await thrownBy(name)) ?? errorMessage(error),
          },
        };
      }
    }

    async function callTesting(name, args) {
      try {
        return resultOf(await testing.executeTool(name, JSON.stringify(args ?? {})));
      } catch (error) {
        return { error: { code: "tool_error", message: errorMessage(error) } };
      }
    }

    return {
      native: native !== null,
      /** The document's tools: Chromium's, or the page's polyfilled `pageTools` and the older surface's. */
      async tools(pageTools) {
        const seen = new Set();
        const unique = (tools) => tools.filter((tool) => !seen.has(tool.name) && seen.add(tool.name));
        if (native) return unique((await native.getTools()).map(describeNative));
        return unique([...pageTools, ...(await testingTools())]);
      },
      /** Run the tool `name` where Chromium keeps it; null for one of the page's polyfilled `pageTools`. */
      async call(name, args, signal, pageTools) {
        if (native) return callNative(name, args, signal);
        const polyfilled = pageTools.some((tool) => tool.name === name);
        if (!polyfilled && (await testingTools()).some((tool) => tool.name === name)) return callTesting(name, args);
        return null;
      },
    };
  }

  globalThis[CHROMIUM] = {
    surfaces,
    /** What a tool threw, as polyfill.js heard it: the bridge passes it on. */
    threw: (name, message) => thrown.set(name, message),
  };
})();
