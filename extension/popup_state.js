// The popup's view of this worker, in plain data it shows as it is: each broker with its state
// and AI sessions, each tab with its tools' names, and how brokers are found.

import { PORT_FIRST, PORT_LAST } from "./protocol.js";
import { knownPorts, namedBrokers, nativeHostStatus } from "./discovery.js";
import { isJoined } from "./links.js";
import { toolsOf } from "./page_tools.js";
import { ready } from "./rebuild.js";
import { sessionsOf } from "./sessions.js";

export async function popupState() {
  await ready;
  const ports = knownPorts();
  for (const broker of namedBrokers()) if (Number.isInteger(broker?.port)) ports.add(broker.port);
  const brokers = [...ports]
    .sort((a, b) => a - b)
    .map((port) => ({ port, state: isJoined(port) ? "connected" : "reconnecting", sessions: sessionsOf(port) }));
  const tabs = (await chrome.tabs.query({}))
    .filter((tab) => tab.id >= 0)
    .map((tab) => ({
      id: tab.id,
      title: tab.title ?? "",
      url: tab.url || tab.pendingUrl || "",
      tools: toolsOf(tab.id).map((tool) => tool.name),
    }));
  const nativeHost = nativeHostStatus();
  return {
    nativeHost,
    probing: nativeHost.installed ? null : { first: PORT_FIRST, last: PORT_LAST },
    brokers,
    tabs,
  };
}
