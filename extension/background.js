// The browser-mcp service worker: joins every local broker and tells it about this browser's
// tabs and their page tools, and carries out what the broker asks (the README's "The extension
// link"). This entry owns only the wiring: which module hears which event.
//
// MV3 workers can be stopped at any moment, so every listener is registered here, at top level,
// while the worker's first turn runs, and all state is rebuilt on start: tool lists by asking each
// tab's bridge, AI sessions and their tab groups from chrome.storage.session, brokers by
// discovery. Chromium 116+ keeps a worker alive while its WebSockets carry messages; an
// application-level ping every 20 s guarantees that (WebSocket-level pings do not count), and an
// alarm wakes a worker that found no broker.

import { debuggerDetached, debuggerEvent, tabGone } from "./actions/debugger.js";
import { handleBrokerMessage } from "./broker_requests.js";
import { WAKE_ALARM, discoverSoon, startDiscovery, wakeDiscovery } from "./discovery.js";
import { onLinkLost, onLinkMessage, startKeepalive } from "./links.js";
import { injectBridges, toolsReported } from "./page_tools.js";
import { popupState } from "./popup_state.js";
import { Bridge, Popup } from "./protocol.js";
import { tabActivated, tabCreated, tabRemoved, tabReplaced, tabUpdated } from "./tabs.js";

chrome.tabs.onCreated.addListener(tabCreated);
chrome.tabs.onUpdated.addListener(tabUpdated);
chrome.tabs.onRemoved.addListener(tabRemoved);
chrome.tabs.onReplaced.addListener(tabReplaced);
chrome.tabs.onActivated.addListener(tabActivated);
// The built-in browser tools' DevTools protocol links (actions/).
chrome.tabs.onRemoved.addListener(tabGone);
chrome.debugger.onEvent.addListener(debuggerEvent);
chrome.debugger.onDetach.addListener(debuggerDetached);

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  switch (message?.kind) {
    case Bridge.TOOLS:
      toolsReported(sender, message.tools);
      break;
    case Popup.STATE:
      popupState().then(sendResponse, (error) => sendResponse({ error: String(error) }));
      return true; // answers asynchronously
    default:
      console.warn("browser-mcp: unknown runtime message", message?.kind);
  }
  return false;
});

chrome.runtime.onInstalled.addListener(injectBridges);

onLinkMessage(handleBrokerMessage);
// A broker that went away may come back on another port, or another may take its place.
onLinkLost(discoverSoon);
startKeepalive();

// The alarm wakes a worker that Chromium stopped while no broker was there to talk to, and
// picks up a native host installed since.
chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === WAKE_ALARM) wakeDiscovery();
});
startDiscovery();
