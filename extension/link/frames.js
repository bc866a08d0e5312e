// The frames a broker sends, read once where they arrive (broker_requests.js) into records whose
// fields have the types the modules that carry them out rely on, so that those modules take the
// record and check nothing again. A frame's other fields are read from the frame itself until
// their type has a record here.

/**
 * A `connect`: the link's own (no sessionId: the broker's versions and the sessions it still
 * holds) or a session's start.
 * @typedef {object} ConnectFrame
 * @property {unknown} sessionId The session that starts; falsy on the link's own connect.
 * @property {unknown} clientName The client's name, else the session id.
 * @property {string | null} credential The credential that opened the session, when a string.
 * @property {unknown[] | null} sessionIds The sessions the broker holds, when a list.
 * @property {string | null} serverVersion The broker's version, when a string.
 * @property {string | null} minExtensionVersion The oldest extension it works with, when a string.
 */

const stringOrNull = (value) => (typeof value === "string" ? value : null);

/** @returns {ConnectFrame} */
export function connectFrame(frame) {
  return {
    sessionId: frame.sessionId,
    clientName: frame.clientName || frame.sessionId,
    credential: stringOrNull(frame.credential),
    sessionIds: Array.isArray(frame.sessionIds) ? frame.sessionIds : null,
    serverVersion: stringOrNull(frame.serverVersion),
    minExtensionVersion: stringOrNull(frame.minExtensionVersion),
  };
}
