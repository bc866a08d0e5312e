// AI sessions and their tab groups: the client name each broker gave a session, and the groups
// that show a session's tabs, one per session and window, titled with that name. Keys are
// "port/sessionId" because two brokers mint their session ids independently. Both are mirrored in
// chrome.storage.session so that a restarted worker keeps using the groups it made.

/** "port/sessionId" -> client name; "port/sessionId" -> its tab group ids. */
let sessions = {};
let groups = {};

export async function restoreSessions() {
  const stored = await chrome.storage.session.get(["sessions", "groups"]).catch(() => ({}));
  sessions = stored.sessions ?? {};
  groups = stored.groups ?? {};
}

function saveSessions() {
  chrome.storage.session.set({ sessions, groups }).catch((error) => console.warn("browser-mcp: cannot save", error));
}

export function rememberSession(port, sessionId, clientName) {
  sessions[`${port}/${sessionId}`] = clientName;
  saveSessions();
}

function sessionName(port, sessionId) {
  return sessions[`${port}/${sessionId}`] ?? "AI client";
}

/** The sessions of the broker on `port`, as the popup lists them. */
export function sessionsOf(port) {
  return Object.entries(sessions)
    .filter(([key]) => key.startsWith(`${port}/`))
    .map(([key, clientName]) => ({ sessionId: key.slice(key.indexOf("/") + 1), clientName }));
}

/** Ports of the brokers that have sessions stored for them. */
export function sessionPorts() {
  return Object.keys(sessions).map((key) => Number(key.split("/")[0]));
}

/**
 * Put an AI session's tab into that session's group in the tab's own window, titled with the
 * client's name. A session has one group per window, so claiming a tab never moves it.
 */
export async function groupTab(port, sessionId, tabId) {
  if (!sessionId) return;
  const key = `${port}/${sessionId}`;
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
  await chrome.tabGroups.update(groupId, { title: sessionName(port, sessionId) });
  groups[key] = [...new Set([...live.map((group) => group.id), groupId])];
  saveSessions();
}

/** Take a tab out of the session's groups; a tab the person moved to another group stays there. */
export async function ungroupTab(port, sessionId, tabId) {
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (tab && (groups[`${port}/${sessionId}`] ?? []).includes(tab.groupId)) await chrome.tabs.ungroup(tabId);
}

/**
 * Forget the ended sessions of the broker on `port` that `ended(sessionId)` picks. The broker
 * released their tabs: they leave the sessions' groups, which Chromium then removes.
 */
export async function forgetSessions(port, ended) {
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
