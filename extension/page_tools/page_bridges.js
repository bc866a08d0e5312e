// The bridges, from the worker's side. What runs inside the page from its start is polyfill.js
// alone, in the MAIN world of every frame; the bridge (bridge.js) and the forms' machinery
// (tool_forms.js) are put in here, only in the documents that ask for them with their first tool
// or tool form (wakeBridge), and in the tabs that were open before the extension came
// (injectBridges). Where the worker cannot know a document's tools (it restarted, a tab was
// swapped in, a broker asks), it reads the polyfill's hooks in the MAIN world through
// chrome.scripting, and asks the bridge only where the page asked for one (askTools): a look in
// the isolated world would build that world in a page that has no tool. What a bridge reports is
// kept to what the broker accepts (cleanTools).

import { nameRefusal } from "./page_tool_names.js";

const BRIDGE_TIMEOUT_MS = 2_000;
// Whatever the worker runs in a document runs there at once, not once the document is idle: a
// page still loading has declared what it declares so far, and one that never finishes loading
// would hold each injection for good, its tools never heard of.
const injectImmediately = true;

/** documentId -> whether another request came while the bridge was being put in (wakeBridge). */
const waking = new Map();
// Requests a tab's documents may make: each asks once, so only a page that makes document after
// document gets near this.
const TAB_WAKES = { burst: 50, perSecond: 5 };
/** tab id -> {tokens, at}: what is left of its TAB_WAKES. */
const wakesByTab = new Map();

function tabMayWake(tabId, now) {
  const bucket = wakesByTab.get(tabId) ?? { tokens: TAB_WAKES.burst, at: now };
  bucket.tokens = Math.min(TAB_WAKES.burst, bucket.tokens + ((now - bucket.at) / 1000) * TAB_WAKES.perSecond);
  bucket.at = now;
  wakesByTab.set(tabId, bucket);
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

/** Forget what the tab's documents asked (TAB_WAKES): the tab is gone. */
export function forgetWakes(tabId) {
  wakesByTab.delete(tabId);
}

export function isScriptable(url) {
  return (
    /^https?:/.test(url ?? "") && !/^https:\/\/(chrome\.google\.com\/webstore|chromewebstore\.google\.com)/.test(url)
  );
}

/** Keep only what the broker accepts, so one odd tool cannot spoil a whole message. */
export function cleanTools(tools) {
  if (!Array.isArray(tools)) return [];
  const clean = [];
  for (const tool of tools) {
    if (!tool || typeof tool !== "object") continue;
    // Chromium's own WebMCP does not check names as the polyfill does.
    const refusal = nameRefusal(tool.name);
    if (refusal) {
      console.warn(
        `browser-mcp: a page's tool ${JSON.stringify(String(tool.name).slice(0, 200))} is left out: ${refusal}`,
      );
      continue;
    }
    const item = {
      name: tool.name,
      description: typeof tool.description === "string" ? tool.description : "",
      inputSchema:
        tool.inputSchema && typeof tool.inputSchema === "object"
          ? tool.inputSchema
          : { type: "object", properties: {} },
    };
    if (typeof tool.title === "string") item.title = tool.title;
    if (tool.annotations && typeof tool.annotations === "object") item.annotations = tool.annotations;
    clean.push(item);
  }
  return clean;
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * In the document's MAIN world: "none" where the page never asked for a bridge and was given none,
 * "missing" where what it asked for (its bridge, the forms' machinery) did not come, else "ready".
 */
function bridgeState() {
  const hooks = Document.prototype[Symbol.for("browser-mcp.polyfill")];
  if (!hooks?.woken && !hooks?.bridged) return "none";
  return !hooks.bridged || (hooks.wantsForms && !hooks.forms) ? "missing" : "ready";
}

/** In the document, in the isolated world: its tools, as its bridge sees them. */
function bridgeTools() {
  return globalThis[Symbol.for("browser-mcp.bridge")]?.tools?.() ?? [];
}

/**
 * The tab's top document's tools as its bridge sees them now, and that document's id: none where
 * the page never asked for a bridge, or none can run (restricted pages).
 */
export async function askTools(tabId) {
  const inPage = (target, world, func) =>
    withTimeout(
      chrome.scripting.executeScript({ target, world, func, injectImmediately }),
      BRIDGE_TIMEOUT_MS,
      "the page",
    );
  try {
    const [state] = await inPage({ tabId, frameIds: [0] }, "MAIN", bridgeState);
    const documentId = state?.documentId ?? null;
    if (!documentId || !["missing", "ready"].includes(state.result)) return { tools: [], documentId };
    const target = { tabId, documentIds: [documentId] };
    // The page's request was lost (the worker stopped meanwhile): what it asked for comes now.
    if (state.result === "missing") await withTimeout(bridgeDocument(target), BRIDGE_TIMEOUT_MS, "the page");
    const [answer] = await inPage(target, "ISOLATED", bridgeTools);
    return { tools: cleanTools(answer?.result), documentId };
  } catch {
    return { tools: [], documentId: null };
  }
}

const askPolyfill = () => globalThis[Symbol.for("browser-mcp.bridge")]?.relist?.();
/**
 * In the document's MAIN world, once its bridge is in: note it (see bridgeState), and say whether
 * it needs the forms' machinery: where the polyfill keeps the tools, it comes with the bridge, so
 * that a tool form found later needs no second request (waker.js carries one per document).
 */
function bridgedWantsForms() {
  const hooks = Document.prototype[Symbol.for("browser-mcp.polyfill")];
  if (!hooks) return false;
  hooks.bridged = true;
  return Boolean(hooks.modelContext && !hooks.forms);
}

/**
 * Put the bridge in the `target` document (one already there stays as it is), and the forms'
 * machinery where the polyfill keeps the tools, then have the bridge ask for the page's tools, which
 * it reports.
 */
async function bridgeDocument(target) {
  const files = ["page_tools/bridge_chromium.js", "page_tools/bridge.js"];
  await chrome.scripting.executeScript({ target, files, injectImmediately });
  const [forms] = await chrome.scripting.executeScript({
    target,
    world: "MAIN",
    func: bridgedWantsForms,
    injectImmediately,
  });
  if (forms?.result) {
    const machinery = ["page_tools/tool_forms.js"];
    await chrome.scripting.executeScript({ target, world: "MAIN", files: machinery, injectImmediately });
  }
  await chrome.scripting.executeScript({ target, func: askPolyfill, injectImmediately });
}

/**
 * A page's request (polyfill.js, through waker.js, once per document): its document has a tool, a
 * tool form, or a change in Chromium's own tools, and wants its bridge. The document is the one
 * Chromium says sent it, top document or frame; the message says nothing more. A tab whose
 * documents ask more than TAB_WAKES allows (a page making frame after frame, or reloading itself)
 * is not heard a while: its tools are then looked for when a client asks (bridgeState).
 * Addressed to that document: one that replaced it meanwhile is left alone. One at a time per
 * document, and one more for those that came meanwhile: a page that asks again and again costs
 * the worker a look at its document per answer, never a pile of them.
 */
export async function wakeBridge(sender) {
  const tabId = sender.tab?.id;
  const documentId = sender.documentId;
  if (!(tabId >= 0) || typeof documentId !== "string" || !isScriptable(sender.url)) return;
  if (!tabMayWake(tabId, Date.now())) return;
  if (waking.has(documentId)) {
    waking.set(documentId, true);
    return;
  }
  try {
    do {
      waking.set(documentId, false);
      await bridgeDocument({ tabId, documentIds: [documentId] }).catch(() => {});
    } while (waking.get(documentId));
  } finally {
    waking.delete(documentId);
  }
}

/** Tabs that were open before the extension was installed or updated have no content scripts. */
export async function injectBridges() {
  for (const tab of await chrome.tabs.query({})) {
    if (!(tab.id >= 0) || !isScriptable(tab.url)) continue;
    const target = { tabId: tab.id };
    chrome.scripting
      .executeScript({ target, files: ["page_tools/polyfill.js", "page_tools/navigator_context.js"], world: "MAIN" })
      .then(() => bridgeDocument(target))
      .catch(() => {});
  }
}
