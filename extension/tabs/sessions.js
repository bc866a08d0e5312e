// AI sessions, their tabs and their tab groups: the client name each broker gave a session and the
// credential that opened it (the client token's name, or "owner" for the broker's own), which
// session holds which tab (as the broker said: a tab it opened or claimed for the session), and the
// groups that show a session's tabs, one per session and window, titled with that name. Keyed by
// port and session id (base/owner_key.js) because two brokers mint their session ids
// independently. All three are mirrored in chrome.storage.session so that a restarted worker
// keeps using the groups it made.

import { ownerKey, readOwnerKey, sessionOf } from "../base/owner_key.js";

/**
 * "port/sessionId" -> {name, credential}; "port/sessionId" -> its tab group ids; tab id -> "port/sessionId".
 * A credential is null when the broker did not name it (one older than connect.credential).
 */
let sessions = {};
let groups = {};
let owners = {};
/** "port/sessionId" -> its groups' colour: one per agent, the same in every window. */
let colors = {};

// Grey is left out: the popup shows tabs nobody holds in grey.
const PALETTE = ["blue", "red", "green", "purple", "orange", "cyan", "pink", "yellow"];

export async function restoreSessions() {
  const stored = await chrome.storage.session.get(["sessions", "groups", "owners", "colors"]).catch(() => ({}));
  sessions = Object.fromEntries(Object.entries(stored.sessions ?? {}).map(([key, held]) => [key, asSession(held)]));
  groups = stored.groups ?? {};
  owners = stored.owners ?? {};
  colors = stored.colors ?? {};
}

function saveSessions() {
  chrome.storage.session
    .set({ sessions, groups, owners, colors })
    .catch((error) => console.warn("browser-mcp: cannot save", error));
}

/** A stored session; a worker of an earlier version stored the name alone. */
function asSession(held) {
  if (typeof held === "string") return { name: held, credential: null };
  return {
    name: String(held?.name ?? "AI client"),
    credential: typeof held?.credential === "string" ? held.credential : null,
  };
}

export function rememberSession(port, sessionId, clientName, credential) {
  sessions[ownerKey(port, sessionId)] = asSession({ name: clientName, credential });
  saveSessions();
}

export function sessionName(port, sessionId) {
  return sessions[ownerKey(port, sessionId)]?.name ?? "AI client";
}

/** The credential that opened the session ("owner", or a client token's name); null when not known. */
export function sessionCredential(port, sessionId) {
  return sessions[ownerKey(port, sessionId)]?.credential ?? null;
}

/** The sessions of the broker on `port`, as the popup lists them. */
export function sessionsOf(port) {
  return Object.entries(sessions)
    .filter(([key]) => sessionOf(key, port) !== null)
    .map(([key, { name, credential }]) => ({
      sessionId: sessionOf(key, port),
      clientName: name,
      credential,
    }));
}

/** The session holding a tab, as {port, sessionId}, or null when it is the person's. */
export function ownerOf(tabId) {
  const key = owners[tabId];
  if (!key) return null;
  return readOwnerKey(key);
}

/**
 * Whether the broker on `port` told this browser that its live session `sessionId` holds tab
 * `tabId`: it opened the tab for the session or said the session claimed it (tabClaimed), and
 * neither released it, nor ended the session, nor did the person take it back.
 */
export function holds(port, sessionId, tabId) {
  const key = ownerKey(port, sessionId);
  return Boolean(sessionId) && owners[tabId] === key && Object.hasOwn(sessions, key);
}

/** The live session of a broker other than the one on `port` that holds tab `tabId`, as {port, sessionId}; else null. */
export function heldElsewhere(port, tabId) {
  const key = owners[tabId];
  const holder = ownerOf(tabId);
  if (!holder || holder.port === port || !Object.hasOwn(sessions, key)) return null;
  return holder;
}

/**
 * The colour of the session's tab group that `groupId` names, else of any of its live groups (the
 * person may recolour one), else the one chosen for it.
 */
export async function sessionColor(port, sessionId, groupId) {
  if (!canGroup) return colors[ownerKey(port, sessionId)] ?? null;
  const ids = groups[ownerKey(port, sessionId)] ?? [];
  for (const id of ids.includes(groupId) ? [groupId, ...ids] : ids) {
    const group = await chrome.tabGroups.get(id).catch(() => null);
    if (group) return group.color;
  }
  return colors[ownerKey(port, sessionId)] ?? null;
}

// Tab groups came to Firefox with 139 (Chromium has had them long before 116): where the browser
// has none, a session's tabs are still its own (owners), only not grouped.
const canGroup = Boolean(chrome.tabs.group && chrome.tabGroups);

/** The session's colour, chosen once: the one fewest live sessions have, so agents look apart. */
function colorOf(key) {
  if (!colors[key]) {
    const used = Object.values(colors);
    const count = (color) => used.filter((other) => other === color).length;
    colors[key] = PALETTE.reduce((best, color) => (count(color) < count(best) ? color : best));
  }
  return colors[key];
}

/** A closed tab is nobody's. */
export function forgetOwner(tabId) {
  if (owners[tabId] === undefined) return;
  delete owners[tabId];
  saveSessions();
}

/** Ports of the brokers that have sessions stored for them. */
export function sessionPorts() {
  return Object.keys(sessions).map((key) => readOwnerKey(key).port);
}

/**
 * Put an AI session's tab into that session's group in the tab's own window, titled with the
 * client's name. A session has one group per window, so claiming a tab never moves it.
 */
export async function groupTab(port, sessionId, tabId) {
  if (!sessionId) return;
  const key = ownerKey(port, sessionId);
  // Held whether or not grouping works (a tab of a popup window cannot be grouped).
  owners[tabId] = key;
  saveSessions();
  const tab = await chrome.tabs.get(tabId);
  // Grouping would unpin it: a pinned tab stays where the person or the agent pinned it.
  if (tab.pinned || !canGroup) return;
  const live = (await Promise.all((groups[key] ?? []).map((id) => chrome.tabGroups.get(id).catch(() => null)))).filter(
    Boolean,
  );
  const existing = live.find((group) => group.windowId === tab.windowId);
  const groupId = await chrome.tabs.group(
    existing
      ? { tabIds: [tabId], groupId: existing.id }
      : { tabIds: [tabId], createProperties: { windowId: tab.windowId } },
  );
  await chrome.tabGroups.update(groupId, { title: sessionName(port, sessionId), color: colorOf(key) });
  groups[key] = [...new Set([...live.map((group) => group.id), groupId])];
  saveSessions();
}

/** Take a tab out of the session's groups; a tab the person moved to another group stays there. */
export async function ungroupTab(port, sessionId, tabId) {
  if (owners[tabId] === ownerKey(port, sessionId)) {
    delete owners[tabId];
    saveSessions();
  }
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (canGroup && tab && (groups[ownerKey(port, sessionId)] ?? []).includes(tab.groupId))
    await chrome.tabs.ungroup(tabId);
}

/**
 * Forget the ended sessions of the broker on `port` that `ended(sessionId)` picks. The broker
 * released their tabs: they leave the sessions' groups, which Chromium then removes.
 */
export async function forgetSessions(port, ended) {
  const keys = Object.keys(sessions).filter((key) => {
    const sessionId = sessionOf(key, port);
    return sessionId !== null && ended(sessionId);
  });
  if (!keys.length) return;
  // Forgotten at once, before the groups are undone: nothing is done for them meanwhile.
  const groupIds = keys.flatMap((key) => groups[key] ?? []);
  for (const key of keys) {
    delete sessions[key];
    delete groups[key];
    delete colors[key];
  }
  for (const [tabId, owner] of Object.entries(owners)) if (keys.includes(owner)) delete owners[tabId];
  saveSessions();
  if (!canGroup) return;
  for (const groupId of groupIds) {
    const tabs = await chrome.tabs.query({ groupId }).catch(() => []);
    if (tabs.length) await chrome.tabs.ungroup(tabs.map((tab) => tab.id)).catch(() => {});
  }
}
