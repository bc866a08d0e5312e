// Links to brokers: one WebSocket per broker port, which a broker must prove who it is over before
// anything else (handshake.js; pairing runs over the link too), the events that wait for a link's
// first snapshot, the keepalive, and when each broker was last joined. What a broker's message means is
// decided elsewhere (onLinkMessage), and so is where to look for a broker that went away
// (onLinkLost): a link only carries frames.

import { ToBroker } from "../base/protocol.js";
import { HandshakeLink, TrustState, notBelieved, refusedLately, trustOf } from "./handshake.js";

const KEEPALIVE_MS = 20_000;
const HANDSHAKE_MS = 5_000;

/** port -> Link, one per broker. */
const links = new Map();
/** port -> when its link closed (0 while joined): what the popup reports; rebuilt as links open. */
const brokerSeen = new Map();

let handleMessage = async () => {};
let handleLost = () => {};
let handleJoinedChange = () => {};

/** `handler(link, message)` for every message a broker sends; it answers through `link`. */
export function onLinkMessage(handler) {
  handleMessage = handler;
}

/** `handler()` when a joined broker goes away. */
export function onLinkLost(handler) {
  handleLost = handler;
}

/** `handler()` whenever a link joins its broker or a joined one closes (the toolbar icon follows). */
export function onJoinedChange(handler) {
  handleJoinedChange = handler;
}

class Link extends HandshakeLink {
  constructor(port, token) {
    super();
    this.port = port;
    this.token = token; // from the native host; without one, only a paired broker is believed
    this.ready = false; // the first snapshot went out; until then events wait in `queue`
    this.queue = [];
    this.opening = new Promise((resolve) => {
      this.whenOpen = resolve; // true once open, false if it closed first
    });
    this.ws = new WebSocket(`ws://127.0.0.1:${port}/`);
    this.handshake = setTimeout(() => this.ws.close(), HANDSHAKE_MS);
    this.ws.onopen = () => {
      this.opened = true;
      this.whenOpen(true);
      this.challenge();
    };
    this.ws.onmessage = (event) => this.receive(event.data);
    this.ws.onclose = (event) => {
      this.whenOpen(false);
      this.closed(event.code);
    };
    this.ws.onerror = () => {}; // onclose follows; a probe of an empty port fails this way
  }

  get open() {
    return this.ws.readyState === WebSocket.OPEN;
  }

  send(message) {
    if (this.open && this.proven) this.ws.send(JSON.stringify(message));
  }

  /** A handshake frame: the only kind that goes to a broker that has not proven itself. */
  sendHandshake(message) {
    if (this.open) this.ws.send(JSON.stringify(message));
  }

  sendEvent(message) {
    if (this.ready) this.send(message);
    // Before the broker's proof nothing is kept for it: the snapshot that follows the proof says it all.
    else if (this.open && this.proven) this.queue.push(message);
  }

  /** The first snapshot went out: the broker now knows every tab, so the events held back follow it. */
  joined() {
    if (this.ready) return;
    clearTimeout(this.handshake);
    this.ready = true;
    brokerSeen.set(this.port, 0);
    for (const queued of this.queue.splice(0)) this.send(queued);
    handleJoinedChange();
  }

  closed(code) {
    clearTimeout(this.handshake);
    this.expected?.reject(new Error(`the broker on port ${this.port} closed the link`));
    if (links.get(this.port) !== this) return;
    links.delete(this.port);
    this.closedUnproven(code);
    if (this.ready) {
      brokerSeen.set(this.port, Date.now());
      console.info(`browser-mcp: broker on port ${this.port} went away`);
      handleLost();
      handleJoinedChange();
    }
  }

  receive(data) {
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      console.warn("browser-mcp: a frame that is not JSON from port", this.port);
      return;
    }
    if (!this.proven) {
      this.steps = this.steps
        .then(() => this.beforeProof(message))
        .catch((error) => console.warn(`browser-mcp: port ${this.port}: ${message?.type}:`, error));
      return;
    }
    this.carryOut(message);
  }

  carryOut(message) {
    handleMessage(this, message).catch((error) => console.warn(`browser-mcp: handling ${message?.type} failed`, error));
  }
}

/** Brokers found but not believed: those waiting to be paired, and servers dropped for a failed proof. */
export function untrusted() {
  return notBelieved((port) => links.has(port));
}

/** Pair the broker waiting on `port` with `code`. Throws, saying why, when that fails. */
export async function pairLink(port, code) {
  // The broker may have closed the link that waited (it had not proven itself in time): pair over a new one.
  if (!links.has(port) && trustOf(port)?.state === TrustState.UNPAIRED) openLink(port, null);
  const link = links.get(port);
  if (!link || !(await link.opening)) throw new Error(`no broker is linked on port ${port}: is it still running?`);
  if (link.proven) return;
  await link.pair(code);
}

/** The paired keys changed: brokers that waited to be paired are asked again. */
export function retryUnpaired() {
  for (const link of links.values()) {
    // A link pairing now asks again itself once the key is stored.
    if (!link.proven && !link.pairing && trustOf(link.port)?.state === TrustState.UNPAIRED) link.challenge();
  }
}

/** Open a link to the broker on `port`, unless one is open or opening already. */
export function openLink(port, token) {
  if (links.has(port)) return;
  if (refusedLately(port)) return;
  links.set(port, new Link(port, token));
}

export function hasLink(port) {
  return links.has(port);
}

/**
 * What the broker on `port` said of versions on its link's `connect`: its own (`serverVersion`),
 * and the oldest extension it works with (`minExtensionVersion`); null while it has said nothing.
 */
export function brokerVersions(port) {
  return links.get(port)?.versions ?? null;
}

/** Whether the broker on `port` got its first snapshot over a link that is still there. */
export function isJoined(port) {
  return Boolean(links.get(port)?.ready);
}

/** Close the link to every broker whose port `wanted` lacks. */
export function closeLinksExcept(wanted) {
  for (const [port, link] of links) {
    if (wanted.has(port)) continue;
    links.delete(port); // so that its closing is not taken for a broker to wait for
    link.ws.close();
    if (link.ready) handleJoinedChange();
  }
}

/** Ports of the brokers joined now or lost since this worker started. */
export function seenPorts() {
  return brokerSeen.keys();
}

/** When the link to the broker on `port` closed: 0 while joined, undefined if never joined. */
export function lostAt(port) {
  return brokerSeen.get(port);
}

export function forgetSeen(port) {
  brokerSeen.delete(port);
}

/** Send an event to every broker; a link still opening sends it after its first snapshot. */
export function broadcast(message) {
  for (const link of links.values()) link.sendEvent(message);
}

/** The links whose broker got its first snapshot. */
export function joinedLinks() {
  return [...links.values()].filter((link) => link.ready);
}

/** Send an event to the broker on `port` only; nothing when it is not joined. */
export function sendTo(port, message) {
  links.get(port)?.sendEvent(message);
}

/**
 * An answer of type `message` to `request`, in the AI session the request came from.
 * @param {string} message
 * @param {import("./frames.js").BrokerFrame} request A broker's frame as decoded (frames.js).
 * @param {object} fields
 */
export function reply(message, request, fields) {
  const answer = { type: message, ...fields };
  if (request.sessionId) answer.sessionId = request.sessionId;
  return answer;
}

export function startKeepalive() {
  setInterval(() => {
    for (const link of links.values()) link.sendHandshake({ type: ToBroker.PING });
  }, KEEPALIVE_MS);
}
