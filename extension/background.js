// The browser-mcp service worker: joins every local broker and tells it about this browser's
// tabs and their page tools, and carries out what the broker asks (the README's "The extension
// link").
//
// MV3 workers can be stopped at any moment, so every listener is registered at top level and all
// state is rebuilt on start: tool lists by asking each tab's bridge, AI sessions and their tab
// groups from chrome.storage.session, brokers by discovery. Chromium 116+ keeps a worker alive
// while its WebSockets carry messages; an application-level ping every 20 s guarantees that
// (WebSocket-level pings do not count), and an alarm wakes a worker that found no broker.

import { BROKER_HEADER, Bridge, FromBroker, NATIVE_HOST, PORT_FIRST, PORT_LAST, Popup, ToBroker } from "./protocol.js";

const KEEPALIVE_MS = 20_000;
const SWEEP_FIRST_MS = 500;
const SWEEP_MAX_MS = 2_000; // a sweep of the range is 21 refused loopback requests: cheap
const HANDSHAKE_MS = 5_000;
const PROBE_TIMEOUT_MS = 2_000;
const BRIDGE_TIMEOUT_MS = 2_000;
const WAKE_ALARM = "browser-mcp-discover";
const FORGET_AFTER_MS = 60_000;

// ---------------------------------------------------------------------------------------------
// State: nothing here outlives the worker that cannot be rebuilt.

/** port -> Link, one per broker. */
const links = new Map();
/** tab id -> that tab's page tools, as last reported by its bridge. */
const toolsByTab = new Map();
/** "port/sessionId" -> client name; "port/sessionId" -> its tab group ids. Mirrored in storage.session. */
let sessions = {};
let groups = {};
/** port -> when its link closed (0 while joined): what the popup reports; rebuilt as links open. */
const brokerSeen = new Map();
const workerStarted = Date.now();

// Promises made once per worker: two brokers asking at once must see the same instance id.
const browserInfo = describeBrowser();
const instance = instanceId();
const ready = rebuild().catch((error) => console.warn("browser-mcp: rebuilding state failed", error));

async function rebuild() {
  const stored = await chrome.storage.session.get(["sessions", "groups"]).catch(() => ({}));
  sessions = stored.sessions ?? {};
  groups = stored.groups ?? {};
  const tabs = await chrome.tabs.query({});
  await Promise.all(
    tabs
      .filter((tab) => tab.id >= 0)
      .map(async (tab) => {
        const tools = await askTools(tab.id);
        // A bridge that reported meanwhile knows at least as much.
        if (!toolsByTab.has(tab.id)) toolsByTab.set(tab.id, tools);
      }),
  );
}

function saveSessions() {
  chrome.storage.session.set({ sessions, groups }).catch((error) => console.warn("browser-mcp: cannot save", error));
}

/** The browser's brand and full version (the user agent string gives only the major one). */
async function describeBrowser() {
  const data = navigator.userAgentData;
  const high = await data?.getHighEntropyValues(["fullVersionList"]).catch(() => null);
  const brands = high?.fullVersionList ?? data?.brands ?? [];
  const brand =
    brands.find((b) => !/not.?a.?brand|chromium/i.test(b.brand)) ?? brands.find((b) => /chromium/i.test(b.brand));
  const version = brand?.version ?? /Chrome\/([\d.]+)/.exec(navigator.userAgent)?.[1] ?? "";
  return { name: brand?.brand ?? "Chromium", version };
}

async function instanceId() {
  const { instanceId: stored } = await chrome.storage.local.get("instanceId");
  if (stored) return stored;
  const created = crypto.randomUUID();
  await chrome.storage.local.set({ instanceId: created });
  return created;
}

// ---------------------------------------------------------------------------------------------
// Tabs and their tools

function isScriptable(url) {
  return (
    /^https?:/.test(url ?? "") && !/^https:\/\/(chrome\.google\.com\/webstore|chromewebstore\.google\.com)/.test(url)
  );
}

function tabInfo(tab) {
  return {
    id: tab.id,
    title: tab.title ?? "",
    url: tab.url || tab.pendingUrl || "",
    windowId: tab.windowId,
    active: tab.active,
    tools: toolsByTab.get(tab.id) ?? [],
  };
}

/** Keep only what the broker accepts, so one odd tool cannot spoil a whole message. */
function cleanTools(tools) {
  if (!Array.isArray(tools)) return [];
  const clean = [];
  for (const tool of tools) {
    if (!tool || typeof tool.name !== "string" || tool.name === "") continue;
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

/** The tab's tools as its bridge sees them now; [] where no bridge runs (restricted pages). */
async function askTools(tabId) {
  try {
    const answer = await withTimeout(
      chrome.tabs.sendMessage(tabId, { kind: Bridge.LIST }, { frameId: 0 }),
      BRIDGE_TIMEOUT_MS,
      "the page",
    );
    return cleanTools(answer?.tools);
  } catch {
    return [];
  }
}

function setTools(tabId, tools) {
  const before = toolsByTab.get(tabId);
  toolsByTab.set(tabId, tools);
  if (JSON.stringify(before ?? []) !== JSON.stringify(tools)) {
    broadcast({ type: ToBroker.TOOLS_CHANGED, tabId, tools });
  }
}

/** For answers that arrive late: a tab closed meanwhile must not come back as a ghost. */
async function setToolsIfOpen(tabId, tools) {
  if (await chrome.tabs.get(tabId).catch(() => null)) setTools(tabId, tools);
}

chrome.tabs.onCreated.addListener((tab) => {
  if (tab.id >= 0) broadcast({ type: ToBroker.TAB_CREATED, tab: tabInfo(tab) });
});

chrome.tabs.onUpdated.addListener((tabId, change, tab) => {
  if (change.url !== undefined && !isScriptable(change.url)) setTools(tabId, []);
  if (change.url !== undefined || change.title !== undefined || change.status !== undefined) {
    broadcast({ type: ToBroker.TAB_UPDATED, tab: tabInfo(tab) });
  }
  // A page that loaded without a bridge (an error page, a restricted site) has no tools: ask,
  // rather than keep what the previous page declared.
  if (change.status === "complete") askTools(tabId).then((tools) => setToolsIfOpen(tabId, tools));
});

chrome.tabs.onRemoved.addListener((tabId) => {
  toolsByTab.delete(tabId);
  broadcast({ type: ToBroker.TAB_CLOSED, tabId });
});

chrome.tabs.onReplaced.addListener(async (addedId, removedId) => {
  toolsByTab.delete(removedId);
  broadcast({ type: ToBroker.TAB_CLOSED, tabId: removedId });
  const tab = await chrome.tabs.get(addedId).catch(() => null);
  if (tab) {
    toolsByTab.set(addedId, await askTools(addedId));
    broadcast({ type: ToBroker.TAB_CREATED, tab: tabInfo(tab) });
  }
});

chrome.tabs.onActivated.addListener(({ tabId }) => {
  broadcast({ type: ToBroker.TAB_FOCUSED, tabId, tools: toolsByTab.get(tabId) ?? [] });
});

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  switch (message?.kind) {
    case Bridge.TOOLS:
      // Only the top document speaks for a tab.
      if (sender.tab?.id >= 0 && sender.frameId === 0) setTools(sender.tab.id, cleanTools(message.tools));
      break;
    case Popup.STATE:
      popupState().then(sendResponse, (error) => sendResponse({ error: String(error) }));
      return true; // answers asynchronously
    default:
      console.warn("browser-mcp: unknown runtime message", message?.kind);
  }
  return false;
});

// Tabs that were open before the extension was installed or updated have no content scripts.
chrome.runtime.onInstalled.addListener(async () => {
  for (const tab of await chrome.tabs.query({})) {
    if (!(tab.id >= 0) || !isScriptable(tab.url)) continue;
    const target = { tabId: tab.id };
    chrome.scripting
      .executeScript({ target, files: ["polyfill.js"], world: "MAIN" })
      .then(() => chrome.scripting.executeScript({ target, files: ["bridge.js"] }))
      .catch(() => {});
  }
});

// ---------------------------------------------------------------------------------------------
// Links to brokers

class Link {
  constructor(port, token) {
    this.port = port;
    this.ready = false; // the first snapshot went out; until then events wait in `queue`
    this.queue = [];
    // The token comes from the native host; a broker started with --require-extension-token needs it.
    const query = token ? `?token=${encodeURIComponent(token)}` : "";
    this.ws = new WebSocket(`ws://127.0.0.1:${port}/${query}`);
    this.handshake = setTimeout(() => this.ws.close(), HANDSHAKE_MS);
    this.ws.onmessage = (event) => this.receive(event.data);
    this.ws.onclose = () => this.closed();
    this.ws.onerror = () => {}; // onclose follows; a probe of an empty port fails this way
  }

  get open() {
    return this.ws.readyState === WebSocket.OPEN;
  }

  send(message) {
    if (this.open) this.ws.send(JSON.stringify(message));
  }

  sendEvent(message) {
    if (this.ready) this.send(message);
    else if (this.open) this.queue.push(message);
  }

  closed() {
    clearTimeout(this.handshake);
    if (links.get(this.port) !== this) return;
    links.delete(this.port);
    if (this.ready) {
      brokerSeen.set(this.port, Date.now());
      console.info(`browser-mcp: broker on port ${this.port} went away`);
      discoverSoon();
    }
  }

  receive(data) {
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      console.warn("browser-mcp: a frame that is not JSON from port", this.port);
      return;
    }
    handleBrokerMessage(this, message).catch((error) =>
      console.warn(`browser-mcp: handling ${message?.type} failed`, error),
    );
  }

  sessionName(sessionId) {
    return sessions[`${this.port}/${sessionId}`] ?? "AI client";
  }
}

async function sendSnapshot(link, sessionId) {
  await ready;
  const [tabs, id, browser] = await Promise.all([chrome.tabs.query({}), instance, browserInfo]);
  const message = {
    type: ToBroker.CONNECTED,
    browser: { ...browser, instanceId: id },
    tabs: tabs.filter((tab) => tab.id >= 0).map(tabInfo),
  };
  if (sessionId) message.sessionId = sessionId;
  link.send(message);
  if (!link.ready) {
    clearTimeout(link.handshake);
    link.ready = true;
    brokerSeen.set(link.port, 0);
    for (const queued of link.queue.splice(0)) link.send(queued);
  }
}

function broadcast(message) {
  for (const link of links.values()) link.sendEvent(message);
}

function reply(message, request, fields) {
  const answer = { type: message, ...fields };
  if (request.sessionId) answer.sessionId = request.sessionId;
  return answer;
}

async function handleBrokerMessage(link, message) {
  switch (message?.type) {
    case FromBroker.CONNECT:
      if (message.sessionId) {
        sessions[`${link.port}/${message.sessionId}`] = message.clientName || message.sessionId;
        saveSessions();
      } else if (Array.isArray(message.sessionIds)) {
        // A broker that restarted on this port has none of the sessions stored for it.
        await forgetSessions(link.port, (sessionId) => !message.sessionIds.includes(sessionId));
      }
      await sendSnapshot(link, message.sessionId);
      break;
    case FromBroker.DISCONNECT:
      await forgetSessions(link.port, (sessionId) => sessionId === message.sessionId);
      link.send(reply(ToBroker.DISCONNECTED, message, {}));
      break;
    case FromBroker.OPEN_TAB:
      await openTab(link, message);
      break;
    case FromBroker.CLOSE_TAB:
      // onRemoved reports the closing; a tab that is already gone is reported here.
      await chrome.tabs
        .remove(message.tabId)
        .catch(() => link.send({ type: ToBroker.TAB_CLOSED, tabId: message.tabId }));
      break;
    case FromBroker.FOCUS_TAB:
      await focusTab(link, message);
      break;
    case FromBroker.TAB_CLAIMED:
      await groupTab(link, message.sessionId, message.tabId);
      break;
    case FromBroker.TAB_RELEASED:
      await ungroupTab(link, message.sessionId, message.tabId);
      break;
    case FromBroker.CALL_TOOL:
      link.send(await callTool(message));
      break;
    case FromBroker.DISCOVER_TOOLS:
      link.send(await discoverTools(message));
      break;
    case FromBroker.PING:
      link.send({ type: ToBroker.PONG });
      break;
    case FromBroker.PONG:
      break;
    case FromBroker.ERROR:
      console.warn(`browser-mcp: broker on port ${link.port} refused a message: ${message.code}: ${message.message}`);
      break;
    default:
      console.warn("browser-mcp: unknown message type from the broker", message?.type);
  }
}

async function openTab(link, message) {
  const focus = message.focus !== false;
  let tab;
  try {
    tab = await chrome.tabs.create({ url: message.url, active: focus });
  } catch (error) {
    // The protocol has no failure answer to openTab yet; a broker that accepts toolResult for
    // the requestId reports it at once, others let the request time out.
    link.send(
      reply(ToBroker.TOOL_RESULT, message, {
        callId: message.requestId,
        error: { code: "open_failed", message: `cannot open ${message.url}: ${error.message}` },
      }),
    );
    return;
  }
  if (focus) await chrome.windows.update(tab.windowId, { focused: true }).catch(() => {});
  try {
    await groupTab(link, message.sessionId, tab.id);
    tab = await chrome.tabs.get(tab.id);
  } catch (error) {
    console.warn("browser-mcp: cannot group the tab", error);
  }
  link.send(reply(ToBroker.TAB_CREATED, message, { requestId: message.requestId, tab: tabInfo(tab) }));
}

/**
 * Put an AI session's tab into that session's group in the tab's own window, titled with the
 * client's name. A session has one group per window, so claiming a tab never moves it.
 */
async function groupTab(link, sessionId, tabId) {
  if (!sessionId) return;
  const key = `${link.port}/${sessionId}`;
  const tab = await chrome.tabs.get(tabId);
  const live = (await Promise.all((groups[key] ?? []).map((id) => chrome.tabGroups.get(id).catch(() => null)))).filter(
    Boolean,
  );
  const existing = live.find((group) => group.windowId === tab.windowId);
  const groupId = await chrome.tabs.group(
    existing
      ? { tabIds: [tabId], groupId: existing.id }
      : { tabIds: [tabId], createProperties: { windowId: tab.windowId } },
  );
  await chrome.tabGroups.update(groupId, { title: link.sessionName(sessionId) });
  groups[key] = [...new Set([...live.map((group) => group.id), groupId])];
  saveSessions();
}

/** Take a tab out of the session's groups; a tab the person moved to another group stays there. */
async function ungroupTab(link, sessionId, tabId) {
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (tab && (groups[`${link.port}/${sessionId}`] ?? []).includes(tab.groupId)) await chrome.tabs.ungroup(tabId);
}

/**
 * Forget the ended sessions of the broker on `port` that `ended(sessionId)` picks. The broker
 * released their tabs: they leave the sessions' groups, which Chromium then removes.
 */
async function forgetSessions(port, ended) {
  const prefix = `${port}/`;
  const keys = Object.keys(sessions).filter((key) => key.startsWith(prefix) && ended(key.slice(prefix.length)));
  for (const key of keys) {
    for (const groupId of groups[key] ?? []) {
      const tabs = await chrome.tabs.query({ groupId }).catch(() => []);
      if (tabs.length) await chrome.tabs.ungroup(tabs.map((tab) => tab.id)).catch(() => {});
    }
    delete sessions[key];
    delete groups[key];
  }
  if (keys.length) saveSessions();
}

async function focusTab(link, message) {
  let tab;
  try {
    tab = await chrome.tabs.update(message.tabId, { active: true });
  } catch {
    link.send({ type: ToBroker.TAB_CLOSED, tabId: message.tabId });
    return;
  }
  await chrome.windows.update(tab.windowId, { focused: true }).catch(() => {});
  link.send(reply(ToBroker.TAB_FOCUSED, message, { tabId: tab.id, tools: toolsByTab.get(tab.id) ?? [] }));
}

async function callTool(message) {
  const answer = reply(ToBroker.TOOL_RESULT, message, { callId: message.callId });
  const tab = await chrome.tabs.get(message.tabId).catch(() => null);
  if (!tab) return { ...answer, error: { code: "tab_not_found", message: `tab ${message.tabId} does not exist` } };
  if (!isScriptable(tab.url)) {
    return { ...answer, error: { code: "no_page_tools", message: `the page ${tab.url} cannot have page tools` } };
  }
  let outcome;
  try {
    outcome = await chrome.tabs.sendMessage(
      message.tabId,
      { kind: Bridge.CALL, name: message.toolName, args: message.args ?? {} },
      { frameId: 0 },
    );
  } catch (error) {
    // The bridge's context died before it answered: the page navigated, reloaded or closed.
    return {
      ...answer,
      error: {
        code: "page_gone",
        message: `the page went away before ${message.toolName} answered (${error.message})`,
      },
    };
  }
  if (!outcome) return { ...answer, error: { code: "page_gone", message: "the page gave no answer" } };
  if (outcome.error) {
    const { code, message: text } = outcome.error;
    return { ...answer, error: { code: String(code ?? "tool_error"), message: String(text ?? "the tool failed") } };
  }
  return { ...answer, result: outcome.result ?? null, error: null };
}

async function discoverTools(message) {
  const tab = await chrome.tabs.get(message.tabId).catch(() => null);
  if (!tab) {
    return reply(ToBroker.TOOL_RESULT, message, {
      callId: message.callId,
      error: { code: "tab_not_found", message: `tab ${message.tabId} does not exist` },
    });
  }
  const tools = await askTools(message.tabId);
  toolsByTab.set(message.tabId, tools);
  return reply(ToBroker.TOOLS_DISCOVERED, message, { callId: message.callId, tabId: message.tabId, tools });
}

setInterval(() => {
  for (const link of links.values()) link.send({ type: ToBroker.PING });
}, KEEPALIVE_MS);

// ---------------------------------------------------------------------------------------------
// Discovery: the native host names the live brokers; without one, probe the broker port range.

let nativePort = null;
let nativeBrokers = null; // the host's latest list; null until it sends one
let nativeError = null; // why the host could not be reached, for the popup
let sweepTimer = null;
let sweepDelay = SWEEP_FIRST_MS;
const probing = new Set(); // ports with a probe in flight

/** The native messaging host streams `{type: "brokers", brokers: [{port, token, pid}]}`. */
function connectNativeHost() {
  let port;
  try {
    port = chrome.runtime.connectNative(NATIVE_HOST);
  } catch (error) {
    nativeError = error.message;
    return;
  }
  nativePort = port;
  port.onMessage.addListener((message) => {
    switch (message?.type) {
      case "brokers":
        nativeBrokers = Array.isArray(message.brokers) ? message.brokers : [];
        joinBrokers(nativeBrokers);
        break;
      case "pong":
        break;
      default:
        console.warn("browser-mcp: unknown message from the native host", message?.type);
    }
  });
  port.onDisconnect.addListener(() => {
    // A missing host disconnects at once (chrome.runtime.lastError says why): probe instead.
    const error = chrome.runtime.lastError;
    if (nativePort !== port) return;
    const hostWasServing = nativeBrokers !== null;
    nativeError = error?.message ?? "the native host exited";
    nativePort = null;
    nativeBrokers = null;
    // Only a host that stopped serving changes where brokers are to be found; a host that is still
    // missing at the alarm's retry does not, and must not restart the probing backoff.
    if (hostWasServing || sweepTimer === null) discoverSoon();
  });
}

/** Join exactly the brokers the host named: open links that are missing, close the others. */
function joinBrokers(brokers) {
  const wanted = new Map();
  for (const broker of brokers) {
    if (Number.isInteger(broker?.port)) wanted.set(broker.port, broker.token ?? null);
  }
  for (const [port, link] of links) {
    if (wanted.has(port)) continue;
    links.delete(port); // so that its closing is not taken for a broker to wait for
    link.ws.close();
  }
  for (const port of knownPorts()) {
    if (!wanted.has(port)) forgetBroker(port);
  }
  for (const [port, token] of wanted) {
    if (!links.has(port)) links.set(port, new Link(port, token));
  }
}

/** Every broker the popup lists: joined, recently lost, or holding sessions stored for it. */
function knownPorts() {
  const ports = new Set(brokerSeen.keys());
  for (const key of Object.keys(sessions)) ports.add(Number(key.split("/")[0]));
  return ports;
}

/** A broker that is gone for good: it leaves the popup, and its sessions with it. */
function forgetBroker(port) {
  brokerSeen.delete(port);
  forgetSessions(port, () => true).catch((error) => console.warn("browser-mcp: cannot forget sessions", error));
}

/** Probed brokers that did not come back within FORGET_AFTER_MS are taken as stopped. */
function forgetLostBrokers() {
  const now = Date.now();
  for (const port of knownPorts()) {
    if (links.get(port)?.ready) continue;
    if (now - (brokerSeen.get(port) || workerStarted) >= FORGET_AFTER_MS) forgetBroker(port);
  }
}

/**
 * Open a link to `port` if a broker listens there. A plain request finds out first: Chromium
 * delays new WebSockets by seconds once most of a worker's WebSockets have failed, and a sweep of
 * empty ports, or of another program's server, would make nearly all of them fail.
 */
async function probe(port) {
  probing.add(port);
  let response;
  try {
    const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
    response = await fetch(`http://127.0.0.1:${port}/`, { cache: "no-store", signal });
  } catch {
    return; // nothing listens there
  } finally {
    probing.delete(port);
  }
  // Any answer of a broker will do (its error status for a plain request included).
  if (!response.headers.has(BROKER_HEADER)) return;
  if (!nativePort && !links.has(port)) links.set(port, new Link(port, null));
}

/** Open a link to every broker not joined yet, then again later, backing off to SWEEP_MAX_MS. */
function sweep() {
  sweepTimer = null;
  if (nativePort) {
    if (nativeBrokers) joinBrokers(nativeBrokers); // reconnects links that dropped
  } else {
    forgetLostBrokers();
    for (let port = PORT_FIRST; port <= PORT_LAST; port++) {
      if (!links.has(port) && !probing.has(port)) probe(port);
    }
  }
  sweepTimer = setTimeout(sweep, sweepDelay);
  sweepDelay = Math.min(sweepDelay * 2, SWEEP_MAX_MS);
}

/** Look again soon, with the backoff reset: a link closed, or the discovery source changed. */
function discoverSoon() {
  sweepDelay = SWEEP_FIRST_MS;
  clearTimeout(sweepTimer);
  sweepTimer = setTimeout(sweep, SWEEP_FIRST_MS);
}

// ---------------------------------------------------------------------------------------------
// The popup: what this worker knows, in plain data.

async function popupState() {
  await ready;
  const ports = knownPorts();
  for (const broker of nativeBrokers ?? []) if (Number.isInteger(broker?.port)) ports.add(broker.port);
  const brokers = [...ports]
    .sort((a, b) => a - b)
    .map((port) => {
      const state = links.get(port)?.ready ? "connected" : "reconnecting";
      const clients = Object.entries(sessions)
        .filter(([key]) => key.startsWith(`${port}/`))
        .map(([key, clientName]) => ({ sessionId: key.slice(key.indexOf("/") + 1), clientName }));
      return { port, state, sessions: clients };
    });
  const tabs = (await chrome.tabs.query({}))
    .filter((tab) => tab.id >= 0)
    .map((tab) => ({
      id: tab.id,
      title: tab.title ?? "",
      url: tab.url || tab.pendingUrl || "",
      tools: (toolsByTab.get(tab.id) ?? []).map((tool) => tool.name),
    }));
  return {
    nativeHost: { installed: nativePort !== null, error: nativePort ? null : nativeError },
    probing: nativePort ? null : { first: PORT_FIRST, last: PORT_LAST },
    brokers,
    tabs,
  };
}

// The alarm wakes a worker that Chromium stopped while no broker was there to talk to, and
// picks up a native host installed since.
chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name !== WAKE_ALARM) return;
  if (!nativePort) connectNativeHost();
  if (sweepTimer === null) discoverSoon();
});
chrome.alarms.create(WAKE_ALARM, { periodInMinutes: 0.5 });

connectNativeHost();
sweep();
