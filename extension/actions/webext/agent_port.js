// The page agent's port (Firefox): the agent (page_agent.js), once a frame's document has it,
// holds a port open to the driver, and a call to it is one message each way rather than a
// chrome.scripting.executeScript, which Firefox makes a round trip of several processes and a
// compilation each time (2-9 ms a call on this machine; a message, about 1 ms). A frame whose
// document has no agent yet, or whose port went, is reached through executeScript as before
// (scripts.js), which loads the agent, and the agent opens its port.
//
// A port is its document's: the driver takes the ports of its own content scripts alone (this
// add-on's, from a tab's frame; a page has no way to open one), drops a frame's port as soon as
// the frame commits another document (all the tab's, when its top frame does: Firefox keeps the
// ports of a page it holds for going back open, and that page answers nothing), and a document
// that goes closes its port, which fails the call under way as a frame that navigated. A frame
// answers each message as a task of its page, after what the page had to do before it.

import { ActionError, Code, withTimeout } from "../../base/errors.js";
import { pageLost } from "../page_scripts.js";

export const AGENT_PORT = "browser-mcp:agent";
const ANSWER_TIMEOUT_MS = 15_000;

/** "tabId:frameId" -> {port, calls: Map(id -> {resolve, reject})} */
const ports = new Map();
let lastCall = 0;

const keyOf = (tabId, frameId) => `${tabId}:${frameId}`;

function dropPort(key) {
  const held = ports.get(key);
  if (!held) return;
  ports.delete(key);
  held.port.disconnect();
  for (const call of held.calls.values()) call.reject(null);
  held.calls.clear();
}

function agentConnected(port) {
  const { name, sender } = port;
  if (name !== AGENT_PORT) return;
  if (sender?.id !== chrome.runtime.id || !(sender.tab?.id >= 0) || !Number.isInteger(sender.frameId)) {
    port.disconnect();
    return;
  }
  const key = keyOf(sender.tab.id, sender.frameId);
  dropPort(key);
  const held = { port, calls: new Map() };
  ports.set(key, held);
  port.onMessage.addListener((answer) => {
    const call = held.calls.get(answer?.id);
    if (!call) return;
    held.calls.delete(answer.id);
    call.resolve(answer);
  });
  port.onDisconnect.addListener(() => {
    if (ports.get(key) === held) ports.delete(key);
    for (const call of held.calls.values()) call.reject(null);
    held.calls.clear();
  });
}

/**
 * The ports of the frame's documents gone with its commit: its own, and for the tab's top frame
 * every frame's (a page kept for going back keeps its frames' ports open, and would hold a call).
 */
function committed({ tabId, frameId }) {
  if (frameId !== 0) return dropPort(keyOf(tabId, frameId));
  for (const key of [...ports.keys()]) if (key.startsWith(`${tabId}:`)) dropPort(key);
}

/** Take the agents' ports; a frame's goes when it commits a new document. */
export function listenForAgents() {
  chrome.runtime.onConnect.addListener(agentConnected);
  chrome.webNavigation.onCommitted.addListener(committed);
}

/**
 * The answer of the agent of frame `frameId` to `request` ({task, target, args}: page_agent.js's
 * runTask), through its port: {value} or {missing}; undefined when the frame has no agent's port
 * (ask through scripting). The page's own error is thrown with `pageError`, as runIn throws it.
 */
export async function askAgent(tabId, frameId, request) {
  const held = ports.get(keyOf(tabId, frameId));
  if (!held) return undefined;
  const id = ++lastCall;
  const answered = new Promise((resolve, reject) => held.calls.set(id, { resolve, reject }));
  let answer;
  try {
    held.port.postMessage({ ...request, id });
    answer = await withTimeout(answered, ANSWER_TIMEOUT_MS, "the page's script");
  } catch (error) {
    held.calls.delete(id);
    // As runIn tells them: a tab that closed, else a page that did not answer in time, else one that went.
    const lost = await pageLost(tabId);
    throw lost.code === Code.ACTION_FAILED || !(error instanceof ActionError) ? lost : error;
  }
  if (answer.error !== undefined) throw Object.assign(new Error(answer.error), { pageError: answer.error });
  return answer;
}
