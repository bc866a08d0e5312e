// The isolated-world half of the page-tool relay. Not a content script: the worker puts it in a
// document that has a tool or a tool form (polyfill.js asks for it with the page's first one), in
// the tabs that were open when the extension came, and in a document whose request was lost when a
// client asks for its tools. Documents without tools never hold a script of ours in this world.
//
// Idle until its document has a tool (in a tab open when the extension came, it may have none):
// it only listens for polyfill.js's window messages; it does not touch the document, the navigator
// or the extension's messaging (each of which would build objects in this world, some 50 KB in
// all), and the worker does not hear from it. The polyfill's messages wake it: the page's tools (or,
// where Chromium keeps the tools, a change in them). The worker asks an idle bridge through
// chrome.scripting (`tools()` below), as it does after it restarts.
//
// Awake, it reports the tool list on every change and answers CALL and CANCEL. Where Chromium
// keeps the tools (bridge_chromium.js), it reads them there; without native WebMCP,
// `document.modelContext` is undefined here (the polyfill lives in the MAIN world) and the bridge
// relays to polyfill.js with window.postMessage.
//
// When the page navigates away during a call this context dies, the message channel closes and
// the worker turns that into an error. Content scripts cannot import protocol.js; the names match
// its Bridge.
(() => {
  "use strict";

  const TOOLS = "browser-mcp/tools";
  const CALL = "browser-mcp/call";
  const CANCEL = "browser-mcp/cancel";
  const FRAME_PORT = "browser-mcp/frame";
  const PAGE = "browser-mcp-page";
  const BRIDGE = "browser-mcp-bridge";
  const MARK = Symbol.for("browser-mcp.bridge");
  const CHROMIUM = Symbol.for("browser-mcp.bridge-chromium");
  const PAGE_ANSWER_MS = 200;
  // The place may hold a loader from an earlier version of the extension, which this replaces.
  if (globalThis[MARK]?.tools) return;

  const inFrame = window !== window.top;
  // Chromium's WebMCP surfaces (bridge_chromium.js), looked up once the bridge wakes (see wake()).
  let chromium = null;
  let awake = false;
  let pageTools = [];
  // Until the polyfill has told this bridge its tools (it tells them as they change, or when asked):
  // the resolves of those who wait for them.
  let heardPage = false;
  const awaitingPage = [];
  // A document that declares no tools says nothing: the worker takes silence for none.
  let lastReport = "[]";
  let nextCallId = 1;
  const pending = new Map(); // polyfill call id -> resolve
  const calls = new Map(); // the worker's call id -> AbortController, while the call runs

  async function currentTools() {
    return chromium ? chromium.tools(pageTools) : pageTools;
  }

  // The rule of page_tool_names.js, for Chromium's own WebMCP, which does not check names: said
  // in the page's console, where its author looks.
  function named(tool) {
    if (!tool || typeof tool !== "object") return false;
    const name = String(tool.name);
    const plain = name.length <= 128 && /^[A-Za-z0-9_.-]+$/.test(name);
    if (plain && !/(^|[_.-])(tabs|page_tools|call_page_tool)$|browser_/i.test(name)) return true;
    console.warn(
      `browser-mcp: the tool ${JSON.stringify(name.slice(0, 200))} is left out: a tool's name is at most 128` +
        " letters, digits, _, - and ., and tabs, page_tools, call_page_tool and browser_* name the browser's own tools",
    );
    return false;
  }

  let framePort = null;
  /**
   * In a frame, a port to the worker held open: Firefox often drops the message a removed frame's
   * document sends as it goes (pagehide), but always closes its ports, which tells the worker.
   * Opened again on the next report after the worker restarted (its closing on this side).
   */
  function holdFramePort() {
    if (!inFrame || framePort) return;
    try {
      framePort = chrome.runtime.connect({ name: FRAME_PORT });
      framePort.onDisconnect.addListener(() => (framePort = null));
    } catch {
      // This context is orphaned (the extension was reloaded): nothing to tell.
    }
  }

  function report(all) {
    holdFramePort();
    const tools = all.filter(named);
    const text = JSON.stringify(tools);
    if (text === lastReport) return;
    lastReport = text;
    listen();
    // Fails only when the extension was reloaded and this context is orphaned: nothing to tell.
    chrome.runtime.sendMessage({ kind: TOOLS, tools }).catch(() => {});
  }

  async function callAny(name, args, signal) {
    return (await chromium?.call(name, args, signal, pageTools)) ?? callPage(name, args, signal);
  }

  /** Run the worker's call `id`, whose AbortSignal fires if the worker calls it off. */
  async function run(id, name, args) {
    const controller = new AbortController();
    calls.set(id, controller);
    try {
      return await callAny(name, args, controller.signal);
    } finally {
      calls.delete(id);
    }
  }

  function callPage(name, args, signal) {
    return new Promise((resolve) => {
      const id = nextCallId++;
      pending.set(id, resolve);
      window.postMessage({ source: BRIDGE, kind: "call", id, name, args: args ?? {} }, "*");
      signal?.addEventListener(
        "abort",
        () => {
          window.postMessage({ source: BRIDGE, kind: "cancel", id }, "*");
          pending.delete(id);
          resolve({
            error: { code: "cancelled", message: `${name} was called off` },
          });
        },
        { once: true },
      );
    });
  }

  /** The worker's requests: CALL and CANCEL. */
  function answer(message, _sender, sendResponse) {
    switch (message?.kind) {
      case CALL:
        run(message.id, message.name, message.args).then(sendResponse);
        return true;
      case CANCEL:
        calls.get(message.id)?.abort(new DOMException("the call was called off", "AbortError"));
        return false;
      default:
        return false;
    }
  }

  let listening = false;
  /** Hear the worker, and tell it when the document goes away or comes back. */
  function listen() {
    if (listening) return;
    listening = true;
    chrome.runtime.onMessage.addListener(answer);
    // A frame going away (removed, or navigating) takes its tools with it; the worker follows the
    // top document's navigations itself.
    if (inFrame) window.addEventListener("pagehide", () => report([]));
    // A document restored from the back-forward cache declares its tools again.
    window.addEventListener("pageshow", (event) => {
      if (!event.persisted) return;
      lastReport = null;
      currentTools().then(report);
    });
  }

  /** The page has (or had) a tool: find Chromium's surfaces, and follow their changes. */
  function wake() {
    if (awake) return;
    awake = true;
    chromium = globalThis[CHROMIUM].surfaces(inFrame, refresh);
  }

  function refresh() {
    currentTools().then(report, (error) => console.warn("browser-mcp: getTools failed", error));
  }

  window.addEventListener("message", (event) => {
    const data = event.data;
    if (event.source !== window || !data || data.source !== PAGE) return;
    switch (data.kind) {
      case "tools":
        wake();
        pageTools = Array.isArray(data.tools) ? data.tools : [];
        heardPage = true;
        for (const resolve of awaitingPage.splice(0)) resolve();
        // Where Chromium keeps the tools, its word counts, not a message the page could write.
        if (chromium) refresh();
        else report(pageTools);
        break;
      case "changed":
        wake();
        refresh();
        break;
      case "error":
        if (typeof data.name === "string" && typeof data.message === "string") {
          globalThis[CHROMIUM].threw(data.name, data.message);
        }
        break;
      case "result": {
        const resolve = pending.get(data.id);
        pending.delete(data.id);
        resolve?.(data.error ? { error: data.error } : { result: data.result ?? null });
        break;
      }
      default:
        break;
    }
  });

  // What the worker reaches through chrome.scripting, which runs its functions in this world.
  globalThis[MARK] = {
    /**
     * The document's tools now, whether or not the bridge woke. A bridge just put in asks the
     * polyfill first, and waits a little for its answer: a page that never touched the polyfill's
     * registry has none to give.
     */
    async tools() {
      wake();
      if (!chromium?.native && !heardPage) {
        await new Promise((resolve) => {
          awaitingPage.push(resolve);
          setTimeout(resolve, PAGE_ANSWER_MS);
          window.postMessage({ source: BRIDGE, kind: "list" }, "*");
        });
      }
      return currentTools();
    },
    /**
     * Put in after its document started, where the page may hold tools already: ask the polyfill,
     * and in a top document Chromium's registry too.
     */
    relist() {
      if (!inFrame) wake();
      if (chromium) refresh();
      if (!chromium?.native) window.postMessage({ source: BRIDGE, kind: "list" }, "*");
    },
  };
})();
