// Links to brokers: one WebSocket per broker port, the events that wait for a link's first
// snapshot, the keepalive, and when each broker was last joined. What a broker's message means is
// decided elsewhere (onLinkMessage), and so is where to look for a broker that went away
// (onLinkLost): a link only carries frames.

import { ToBroker } from "./protocol.js";

const KEEPALIVE_MS = 20_000;
const HANDSHAKE_MS = 5_000;

/** port -> Link, one per broker. */
const links = new Map();
/** port -> when its link closed (0 while joined): what the popup reports; rebuilt as links open. */
const brokerSeen = new Map();

let handleMessage = async () => {};
let handleLost = () => {};

/** `handler(link, message)` for every message a broker sends; it answers through `link`. */
export function onLinkMessage(handler) {
  handleMessage = handler;
}

/** `handler()` when a joined broker goes away. */
export function onLinkLost(handler) {
  handleLost = handler;
}

class Link {
  constructor(port, token) {
    this.port = port;
    this.ready = false; // the first snapshot went out; until then events wait in `queue`
    this.queue = [];
    // The token comes from the native host; a broker started with --require-extension-token needs it.
    const query = token ? `?token=${encodeURIComponent(token)}` : "";
    this.ws = new WebSocket(`ws://127.0.0.1:${port}/${query}`);
    this.handshake = setTimeout(() => this.ws.close(), HANDSHAKE_MS);
    this.ws.onmessage = (event) => this.receive(event.data);
    this.ws.onclose = () => this.closed();
    this.ws.onerror = () => {}; // onclose follows; a probe of an empty port fails this way
  }

  get open() {
    return this.ws.readyState === WebSocket.OPEN;
  }

  send(message) {
    if (this.open) this.ws.send(JSON.stringify(message));
  }

  sendEvent(message) {
    if (this.ready) this.send(message);
    else if (this.open) this.queue.push(message);
  }

  /** The first snapshot went out: the broker now knows every tab, so the events held back follow it. */
  joined() {
    if (this.ready) return;
    clearTimeout(this.handshake);
    this.ready = true;
    brokerSeen.set(this.port, 0);
    for (const queued of this.queue.splice(0)) this.send(queued);
  }

  closed() {
    clearTimeout(this.handshake);
    if (links.get(this.port) !== this) return;
    links.delete(this.port);
    if (this.ready) {
      brokerSeen.set(this.port, Date.now());
      console.info(`browser-mcp: broker on port ${this.port} went away`);
      handleLost();
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
    handleMessage(this, message).catch((error) => console.warn(`browser-mcp: handling ${message?.type} failed`, error));
  }
}

/** Open a link to the broker on `port`, unless one is open or opening already. */
export function openLink(port, token) {
  if (!links.has(port)) links.set(port, new Link(port, token));
}

export function hasLink(port) {
  return links.has(port);
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

/** An answer of type `message` to `request`, in the AI session the request came from. */
export function reply(message, request, fields) {
  const answer = { type: message, ...fields };
  if (request.sessionId) answer.sessionId = request.sessionId;
  return answer;
}

export function startKeepalive() {
  setInterval(() => {
    for (const link of links.values()) link.send({ type: ToBroker.PING });
  }, KEEPALIVE_MS);
}
