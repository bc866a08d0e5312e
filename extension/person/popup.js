// The toolbar popup: who holds which tab, and the person's controls over AI agents (pause them
// all, end a session, take a tab back). It asks the worker for its state once per opening, again
// every two seconds while open and after every button; the worker owns all state and acts.

import { Popup } from "../base/protocol.js";
import { showPairing } from "./popup_pairing.js";

const REFRESH_MS = 2_000;

// Chromium's tab group colours, as its tab strip draws them.
const GROUP_COLORS = {
  grey: "#5f6368",
  blue: "#1a73e8",
  red: "#d93025",
  yellow: "#e37400",
  green: "#188038",
  pink: "#d01884",
  purple: "#a142f4",
  cyan: "#007b83",
  orange: "#c26401",
};

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

function button(label, className, request) {
  const node = element("button", className, label);
  node.type = "button";
  node.addEventListener("click", async () => {
    node.disabled = true;
    await ask(request);
  });
  return node;
}

/**
 * The agent's name in its tab group's colour, and the credential it connected with: the name is
 * the client's own choice, the credential is not, so two agents calling themselves alike differ here.
 */
function agent(owner) {
  const who = element("span", "who");
  const chip = element("span", "agent", owner.clientName);
  chip.style.setProperty("--group", GROUP_COLORS[owner.color] ?? GROUP_COLORS.grey);
  who.append(chip);
  if (owner.credential) who.append(credential(owner.credential));
  return who;
}

function credential(name) {
  const badge = element("span", "credential", `via ${name}`);
  badge.title =
    name === "owner"
      ? "Connected with the broker's own token"
      : `Connected with the client token "${name}" (browser-mcp mcp-config --client ${name})`;
  return badge;
}

function showPause(paused) {
  const toggle = document.getElementById("pause");
  toggle.textContent = paused ? "Resume agents" : "Pause agents";
  toggle.classList.toggle("on", paused);
  toggle.onclick = () => ask({ kind: Popup.PAUSE, paused: !paused });
  document.getElementById("paused").hidden = !paused;
  document.body.classList.toggle("is-paused", paused);
}

function showSessions(brokers) {
  const sessions = brokers.flatMap((broker) => broker.sessions.map((session) => ({ ...session, port: broker.port })));
  const list = document.getElementById("sessions");
  if (sessions.length === 0) {
    list.replaceChildren(item(element("span", "none", "No AI session.")));
    return;
  }
  list.replaceChildren(
    ...sessions.map((session) => {
      const held = session.tabs === 1 ? "1 tab" : `${session.tabs} tabs`;
      const about = element("div", "grow");
      about.append(agent(session), element("span", "detail", ` ${held} · port ${session.port}`));
      const end = button("End session", "danger", {
        kind: Popup.END_SESSION,
        port: session.port,
        sessionId: session.sessionId,
      });
      const li = item(about, end);
      li.className = "row";
      return li;
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
    ...tabs.map((tab) => {
      const about = element("div", "grow");
      about.append(element("div", "title", tab.title || "(untitled)"), element("div", "url", tab.url));
      if (tab.tools.length) about.append(element("div", "tools", `Tools: ${tab.tools.join(", ")}`));
      const holder = element("div", "holder");
      if (tab.owner) {
        holder.append(agent(tab.owner), button("Release", "", { kind: Popup.RELEASE_TAB, tabId: tab.id }));
      } else {
        holder.append(element("span", "nobody", "No agent"));
      }
      const li = item(about, holder);
      li.className = `row${tab.owner ? " held" : ""}`;
      return li;
    }),
  );
}

function showNative(state) {
  const native = document.getElementById("native");
  native.replaceChildren();
  if (state.nativeHost.installed) {
    native.className = "";
    native.textContent = "Native host: installed.";
    return;
  }
  native.className = "warning";
  native.append(
    "Native host missing — run ",
    element("code", "", state.nativeHostCommand),
    `. Meanwhile the extension probes ports ${state.probing.first}-${state.probing.last}.`,
  );
  if (state.nativeHost.error) native.append(element("div", "detail", state.nativeHost.error));
}

/** `text` with its `quoted` parts as code, as nodes to append. */
function withCode(text) {
  return text.split("`").map((part, index) => (index % 2 ? element("code", "", part) : part));
}

function showBrokers(state) {
  const { brokers, probing } = state;
  const list = document.getElementById("brokers");
  if (brokers.length === 0) {
    const where = probing ? ` on ports ${probing.first}-${probing.last}` : "";
    list.replaceChildren(item(element("span", "state not-found", `No broker found${where}.`)));
    return;
  }
  list.replaceChildren(
    ...brokers.map((broker) => {
      const li = item(
        `Port ${broker.port}: `,
        element("span", `state ${broker.state.replace(" ", "-")}`, broker.state),
      );
      if (broker.version) li.append(element("span", "detail", ` · broker ${broker.version}`));
      if (broker.needs) {
        const told = `This extension (${state.extensionVersion}) is older than this broker needs (${broker.needs}): `;
        const warning = element("div", "warning outdated", told);
        warning.append(...withCode(state.updateAdvice), ".");
        li.append(warning);
      }
      return li;
    }),
  );
}

function show(state) {
  document.getElementById("version").textContent = ` · extension ${state.extensionVersion}`;
  showPause(state.paused);
  showSessions(state.brokers);
  showTabs(state.tabs);
  showNative(state);
  showBrokers(state);
  showPairing(state, ask);
}

/** Send `request` to the worker and show the state it answers with. */
async function ask(request) {
  const error = document.getElementById("error");
  try {
    const state = await chrome.runtime.sendMessage(request);
    if (!state || state.error) throw new Error(state?.error ?? "the service worker gave no answer");
    show(state);
    error.hidden = true;
  } catch (failure) {
    error.textContent = `Cannot reach the service worker: ${failure.message}`;
    error.hidden = false;
  }
}

/**
 * The recordings of the person's actions running now, each with its Stop, as the worker tells them
 * over a port of their own (actions/recording.js's RECORDING_PORT) the moment one starts or ends.
 */
function showRecordings(recordings, port) {
  const list = document.getElementById("recordings");
  document.getElementById("recording-section").hidden = recordings.length === 0;
  list.replaceChildren(
    ...recordings.map(({ tabId, client, title }) => {
      const stop = element("button", "danger", "Stop");
      stop.type = "button";
      stop.addEventListener("click", () => {
        stop.disabled = true;
        port.postMessage({ stop: tabId });
      });
      const li = item(element("span", "grow rec", `Recording for ${client} in ${title}`), stop);
      li.className = "row";
      return li;
    }),
  );
}

const recordingPort = chrome.runtime.connect({ name: "browser-mcp/recording" });
recordingPort.onMessage.addListener((recordings) => showRecordings(recordings, recordingPort));

ask({ kind: Popup.STATE });
setInterval(() => ask({ kind: Popup.STATE }), REFRESH_MS);
