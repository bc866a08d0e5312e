// The person's settings, from the options page: when to ask before a tool runs, the sites where
// they always allow, which ports to probe for brokers and which brokers to leave alone, whether
// browser_evaluate may run at all, and whether AI agents may read their history and bookmarks, and
// their cookies and site storage.
// Kept in chrome.storage.local (they outlive the worker and the browser); this module holds the
// worker's copy and tells its listener what changed.

import { PORT_FIRST, PORT_LAST } from "./protocol.js";

/** The credential name the broker gives its own token (connect.credential). */
export const OWNER = "owner";

export const Policy = Object.freeze({
  DESTRUCTIVE: "destructive", // ask before tools that declare destructiveHint, and browser_evaluate
  NOT_READ_ONLY: "notReadOnly", // ask before every tool that does not declare readOnlyHint
  NEVER: "never",
});

export const DEFAULTS = Object.freeze({
  approvalPolicy: Policy.DESTRUCTIVE,
  // {credential, origin}: the client credential ("owner" or a client token's name) the person
  // always allows on the site, such as {credential: "alice", origin: "https://shop.example"}.
  alwaysAllow: [],
  portFirst: PORT_FIRST,
  portLast: PORT_LAST,
  ignoredPorts: [],
  allowEvaluate: true,
  // The person's history and bookmarks reach AI agents only once they turn this on (records.js).
  shareRecords: false,
  // The person's cookies and site storage reach AI agents only once they turn this on
  // (actions/storage_sites.js), and then only on the sites of each agent's own tabs.
  shareStorage: false,
  // How long an approval window waits for the person; not on the options page (tests shorten it).
  approvalTimeoutMs: 60_000,
  // How long a page's dialog waits for a client's browser_handle_dialog before it is dismissed
  // (actions/dialogs.js); not on the options page.
  dialogTimeoutMs: 60_000,
});

const isPort = (value) => Number.isInteger(value) && value > 0 && value < 65536;

/** Whatever was stored, as settings this worker can use: a bad value falls back to its default. */
export function normalize(stored) {
  const given = stored && typeof stored === "object" ? stored : {};
  const settings = { ...DEFAULTS };
  if (Object.values(Policy).includes(given.approvalPolicy)) settings.approvalPolicy = given.approvalPolicy;
  if (Array.isArray(given.alwaysAllow)) settings.alwaysAllow = allowances(given.alwaysAllow);
  if (isPort(given.portFirst) && isPort(given.portLast) && given.portFirst <= given.portLast) {
    // A range past 100 ports would make each sweep a burst of failing requests.
    settings.portFirst = given.portFirst;
    settings.portLast = Math.min(given.portLast, given.portFirst + 99);
  }
  if (Array.isArray(given.ignoredPorts)) settings.ignoredPorts = [...new Set(given.ignoredPorts.filter(isPort))];
  if (typeof given.allowEvaluate === "boolean") settings.allowEvaluate = given.allowEvaluate;
  if (typeof given.shareRecords === "boolean") settings.shareRecords = given.shareRecords;
  if (typeof given.shareStorage === "boolean") settings.shareStorage = given.shareStorage;
  if (Number.isInteger(given.approvalTimeoutMs) && given.approvalTimeoutMs > 0) {
    settings.approvalTimeoutMs = Math.min(given.approvalTimeoutMs, 600_000);
  }
  if (Number.isInteger(given.dialogTimeoutMs) && given.dialogTimeoutMs > 0) {
    settings.dialogTimeoutMs = Math.min(given.dialogTimeoutMs, 600_000);
  }
  return settings;
}

/**
 * The "always allow" list as {credential, origin} pairs, each once. An entry of an earlier
 * version is a bare origin, from when allowing a site allowed every client there: it is kept for
 * the broker's own token ("owner"), whose clients (the CLI, the stdio relay) are the person's own,
 * so a client with a token of its own is asked again on that site.
 */
function allowances(list) {
  const seen = new Map();
  for (const entry of list) {
    const allowed = typeof entry === "string" ? { credential: OWNER, origin: entry } : entry;
    if (typeof allowed?.credential !== "string" || typeof allowed?.origin !== "string") continue;
    const { credential, origin } = allowed;
    if (credential && origin) seen.set(JSON.stringify([credential, origin]), { credential, origin });
  }
  return [...seen.values()];
}

let current = { ...DEFAULTS };

export const settingsReady = chrome.storage.local
  .get("settings")
  .then(({ settings }) => {
    current = normalize(settings);
  })
  .catch((error) => console.warn("browser-mcp: cannot read the settings", error));

export function settings() {
  return current;
}

/** Whether the person always allows `credential`'s calls on `origin` (an unknown credential: never). */
export function alwaysAllowed(credential, origin) {
  if (!credential || !origin) return false;
  return current.alwaysAllow.some((allowed) => allowed.credential === credential && allowed.origin === origin);
}

export async function updateSettings(change) {
  current = normalize({ ...current, ...change });
  await chrome.storage.local.set({ settings: current });
}

/**
 * chrome.storage.onChanged, for the settings: the names of the settings that changed (none when
 * the change was not theirs). The options page writes the storage; the worker hears it here.
 */
export function settingsChanged(changes, area) {
  if (area !== "local" || !changes.settings) return [];
  const before = current;
  current = normalize(changes.settings.newValue);
  return Object.keys(current).filter((key) => JSON.stringify(before[key]) !== JSON.stringify(current[key]));
}
