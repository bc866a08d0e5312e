// The toolbar popup: what the service worker knows, shown plainly. It asks the worker once per
// opening (and every two seconds while open); the worker owns all state.

import { Popup } from "./protocol.js";

const REFRESH_MS = 2_000;

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function item(...children) {
  const li = element("li");
  li.append(...children);
  return li;
}

function showNative(state) {
  const native = document.getElementById("native");
  native.replaceChildren();
  if (state.nativeHost.installed) {
    native.textContent = "Native host: installed.";
    return;
  }
  native.className = "warning";
  native.append(
    "Native host missing — run ",
    element("code", "", "browser-mcp install-native-host"),
    `. Meanwhile the extension probes ports ${state.probing.first}-${state.probing.last}.`,
  );
  if (state.nativeHost.error) native.append(element("div", "detail", state.nativeHost.error));
}

function showBrokers(brokers, probing) {
  const list = document.getElementById("brokers");
  if (brokers.length === 0) {
    const where = probing ? ` on ports ${probing.first}-${probing.last}` : "";
    list.replaceChildren(item(element("span", "state not-found", `No broker found${where}.`)));
    return;
  }
  list.replaceChildren(
    ...brokers.map((broker) => {
      const parts = [`Port ${broker.port}: `, element("span", `state ${broker.state.replace(" ", "-")}`, broker.state)];
      const sessions = element("div", "detail");
      sessions.textContent =
        broker.sessions.length === 0
          ? "No AI session."
          : `AI sessions: ${broker.sessions.map((session) => session.clientName).join(", ")}`;
      return item(...parts, sessions);
    }),
  );
}

function showTabs(tabs) {
  const list = document.getElementById("tabs");
  if (tabs.length === 0) {
    list.replaceChildren(item("No tabs."));
    return;
  }
  list.replaceChildren(
    ...tabs.map((tab) =>
      item(
        element("div", "", tab.title || "(untitled)"),
        element("div", "url", tab.url),
        element("div", "tools", tab.tools.length ? `Tools: ${tab.tools.join(", ")}` : "No tools."),
      ),
    ),
  );
}

async function refresh() {
  const error = document.getElementById("error");
  try {
    const state = await chrome.runtime.sendMessage({ kind: Popup.STATE });
    if (!state || state.error) throw new Error(state?.error ?? "the service worker gave no answer");
    showNative(state);
    showBrokers(state.brokers, state.probing);
    showTabs(state.tabs);
    error.hidden = true;
  } catch (failure) {
    error.textContent = `Cannot reach the service worker: ${failure.message}`;
    error.hidden = false;
  }
}

refresh();
setInterval(refresh, REFRESH_MS);
