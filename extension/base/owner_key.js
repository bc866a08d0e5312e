// The key an AI session is known by across the worker: its broker's port and its id ("8765/abc"),
// as the sessions, the tabs' owners, the approvals and the page drivers hold it. Stored in
// chrome.storage.session, so its spelling outlives a worker: built and read back only here.

/** The key of session `sessionId` of the broker on `port`. */
export function ownerKey(port, sessionId) {
  return `${port}/${sessionId}`;
}

/** The session id in `key` when `key` is a session of the broker on `port`; else null. */
export function sessionOf(key, port) {
  const prefix = `${port}/`;
  return typeof key === "string" && key.startsWith(prefix) ? key.slice(prefix.length) : null;
}

/** The broker's port and the session's id that `key` names. */
export function readOwnerKey(key) {
  const slash = key.indexOf("/");
  return { port: Number(key.slice(0, slash)), sessionId: key.slice(slash + 1) };
}
