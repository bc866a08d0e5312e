// The popup's view of this worker, in plain data it shows as it is: whether the person paused AI
// agents, this extension's version, each broker with its state, version (and the newer extension
// it needs, when this one is older) and AI sessions (client name, the credential that opened it,
// tab group colour, tabs held), each tab with its tools and the session holding it, and how
// brokers are found.

import { knownPorts, namedBrokers, nativeHostStatus } from "../link/discovery.js";
import { brokerVersions, isJoined, untrusted } from "../link/links.js";
import { toolsOf } from "../page_tools/page_tools.js";
import { isPaused, pauseReady } from "./person.js";
import { ready } from "../tabs/rebuild.js";
import { ownerOf, sessionColor, sessionCredential, sessionName, sessionsOf } from "../tabs/sessions.js";
import { settings, settingsReady } from "../base/settings.js";
import { NATIVE_HOST_COMMAND, UPDATE_ADVICE } from "../base/build_advice.js";
import { EXTENSION_VERSION, olderThan } from "../link/versions.js";

/** What a broker said of versions; `needs` is the version it needs when this extension is older. */
function versionsOf(port) {
  const said = brokerVersions(port);
  const minimum = said?.minExtensionVersion ?? null;
  return { version: said?.serverVersion ?? null, needs: olderThan(EXTENSION_VERSION, minimum) ? minimum : null };
}

async function holder(tab) {
  const owner = ownerOf(tab.id);
  if (!owner) return null;
  const color = await sessionColor(owner.port, owner.sessionId, tab.groupId);
  const { port, sessionId } = owner;
  return { ...owner, clientName: sessionName(port, sessionId), credential: sessionCredential(port, sessionId), color };
}

export async function popupState() {
  await Promise.all([ready, pauseReady, settingsReady]);
  const ports = knownPorts();
  for (const broker of namedBrokers()) if (Number.isInteger(broker?.port)) ports.add(broker.port);
  const tabs = await Promise.all(
    (await chrome.tabs.query({}))
      .filter((tab) => tab.id >= 0)
      .map(async (tab) => ({
        id: tab.id,
        title: tab.title ?? "",
        url: tab.url || tab.pendingUrl || "",
        tools: toolsOf(tab.id).map((tool) => tool.name),
        owner: await holder(tab),
      })),
  );
  const held = (port, sessionId) => tabs.filter((t) => t.owner?.port === port && t.owner.sessionId === sessionId);
  const brokers = await Promise.all(
    [...ports]
      .sort((a, b) => a - b)
      .map(async (port) => ({
        port,
        state: isJoined(port) ? "connected" : "reconnecting",
        ...versionsOf(port),
        sessions: await Promise.all(
          sessionsOf(port).map(async (session) => ({
            ...session,
            color: await sessionColor(port, session.sessionId),
            tabs: held(port, session.sessionId).length,
          })),
        ),
      })),
  );
  const nativeHost = nativeHostStatus();
  const { portFirst, portLast } = settings();
  return {
    extensionVersion: EXTENSION_VERSION,
    updateAdvice: UPDATE_ADVICE,
    nativeHostCommand: NATIVE_HOST_COMMAND,
    paused: isPaused(),
    nativeHost,
    probing: nativeHost.installed ? null : { first: portFirst, last: portLast },
    brokers,
    tabs,
    // Brokers found but not believed: waiting to be paired, or dropped for a failed proof.
    pairing: untrusted(),
  };
}
