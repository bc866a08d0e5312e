// Runs extension/page_tools/bridge.js (after bridge_chromium.js, as the worker puts them in) against scripted
// fakes of Chromium's WebMCP surfaces, the shapes this
// machine's Chromium does not have: executeTool taking a JSON string (Chromium 150-154), and the
// older navigator.modelContextTesting. Prints what the bridge reported and answered, as JSON.
// Usage: node bridge_shapes.mjs SHAPE SCRIPT...   (SHAPE: string-args | object-args | testing; the scripts in order)
import { readFileSync } from "node:fs";
import vm from "node:vm";

const [shape, ...scripts] = process.argv.slice(2);
const calls = [];
const reports = [];
let onMessage = null;
let changed = null;

const tools = [
  { name: "echo", description: "Echo", inputSchema: '{"type":"object","properties":{"text":{"type":"string"}}}' },
];

function execute(name, args) {
  if (name === "boom") throw new Error("it blew up");
  return JSON.stringify({ echoed: args.text });
}

const modelContext = {
  getTools: async () => tools,
  addEventListener: () => {},
  async executeTool(tool, args) {
    calls.push(typeof args);
    if (shape === "string-args") {
      // As Chromium's bindings would: an object is made a string, which is no JSON text.
      const text = String(args);
      let parsed;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new SyntaxError("Failed to parse the input arguments");
      }
      return execute(tool.name, parsed);
    }
    if (typeof args !== "object") throw new TypeError("parameter 2 is not of type 'object'");
    return execute(tool.name, args);
  },
};

const modelContextTesting = {
  listTools: () => tools,
  async executeTool(name, json) {
    calls.push(typeof json);
    return execute(name, JSON.parse(json));
  },
  registerToolsChangedCallback(callback) {
    changed = callback;
  },
};

const pageListeners = [];
const window = {
  addEventListener: (type, listener) => type === "message" && pageListeners.push(listener),
  postMessage: () => {},
};
window.top = window; // a top-level document
const sandbox = {
  window,
  document: shape === "testing" ? {} : { modelContext },
  navigator: shape === "testing" ? { modelContextTesting } : {},
  chrome: {
    runtime: {
      onMessage: { addListener: (listener) => (onMessage = listener) },
      sendMessage: async (message) => reports.push(message.tools.map((tool) => tool.name)),
    },
  },
  console,
  setTimeout,
  Symbol,
  AbortController,
  DOMException,
};
sandbox.globalThis = sandbox;
vm.createContext(sandbox);
for (const script of scripts) vm.runInContext(readFileSync(script, "utf8"), sandbox);

// The bridge is idle until the page has a tool; what the worker asks through chrome.scripting.
const bridge = vm.runInContext(`globalThis[Symbol.for("browser-mcp.bridge")]`, sandbox);
const idle = { listening: onMessage !== null, reported: reports.length };
// polyfill.js tells the bridge that Chromium's tools changed, as the page registers one.
for (const listener of pageListeners)
  listener({ source: window, data: { source: "browser-mcp-page", kind: "changed" } });
await new Promise((resolve) => setTimeout(resolve, 10));
const ask = (message) => new Promise((resolve) => onMessage(message, {}, resolve));
const listed = { tools: await bridge.tools() };
const first = await ask({ kind: "browser-mcp/call", name: "echo", args: { text: "one" } });
const second = await ask({ kind: "browser-mcp/call", name: "echo", args: { text: "two" } });
if (changed) {
  tools.push({ name: "later", description: "", inputSchema: { type: "object" } });
  changed();
  await new Promise((resolve) => setTimeout(resolve, 50));
}
console.log(JSON.stringify({ idle, listed, first, second, calls, reports }));
