// Links to brokers: one WebSocket per broker port, the handshake that makes a broker prove who it
// is before anything else (broker_auth.js; pairing runs over the link too), the events that wait
// for a link's first snapshot, the keepalive, and when each broker was last joined. What a broker's message means is
// decided elsewhere (onLinkMessage), and so is where to look for a broker that went away
// (onLinkLost): a link only carries frames.

import { FromBroker, ToBroker } from "./protocol.js";
import {
  Role,
  checkProof,
  newNonce,
  pairedKey,
  pairingKeys,
  proof,
  rememberPairing,
  tokenKeys,
  unwrapLinkKey,
} from "./broker_auth.js";

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

/** Why links to brokers were refused or wait for pairing: port -> {state, brokerId, reason, at}. */
const trust = new Map();
const REFUSED_FOR_MS = 10_000; // a server that failed its proof is not asked again before this
const HELD_LIMIT = 64; // frames a broker may send before it has proven itself
const PAIRING_STEP_MS = 15_000;
// A broker closes a link that has not proven itself within a few seconds (the one waiting to be
// paired too), and the sweep opens another: the popup keeps showing it as not paired meanwhile.
const UNPAIRED_KEPT_MS = 15_000;
// The close code a broker gives a link it had no room for or whose time to prove itself ran out:
// no sign the server is not the broker.
const TRY_AGAIN_LATER = 1013;

class Link {
  constructor(port, token) {
    this.port = port;
    this.token = token; // from the native host; without one, only a paired broker is believed
    this.ready = false; // the first snapshot went out; until then events wait in `queue`
    this.queue = [];
    // Until the broker proves it holds its link key, nothing of its frames is obeyed: they wait
    // here, and are carried out once it has (they came over the same socket).
    this.proven = false;
    this.held = [];
    this.steps = Promise.resolve(); // handshake frames, one after another
    this.expected = null; // {types, resolve, reject}: a pairing step waiting for the broker's answer
    this.challenges = 0; // authChallenges the broker has not answered yet
    this.pairing = false;
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

  /** Ask the broker to prove it holds its link key, over a fresh nonce. */
  challenge() {
    this.nonce = newNonce();
    this.challenges += 1;
    this.sendHandshake({ type: ToBroker.AUTH_CHALLENGE, nonce: this.nonce });
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
    const unpaired = trust.get(this.port);
    if (unpaired?.state === TrustState.UNPAIRED) unpaired.closedAt = Date.now();
    else if (this.opened && !this.proven && !trust.has(this.port) && code !== TRY_AGAIN_LATER) {
      trust.set(this.port, {
        state: TrustState.REFUSED,
        reason: "it never proved it is the broker (an older broker, or not one)",
        at: Date.now(),
      });
    }
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

  async beforeProof(message) {
    if (this.expected?.types.includes(message?.type)) {
      const { resolve } = this.expected;
      this.expected = null;
      resolve(message);
      return;
    }
    switch (message?.type) {
      case FromBroker.AUTH_PROOF:
        // The broker answers challenges in turn, and only the latest one's nonce is kept: the
        // answer to a challenge sent again since (pairing stored the key meanwhile) is not checked.
        this.challenges = Math.max(this.challenges - 1, 0);
        if (this.challenges === 0) await this.checkBroker(message);
        break;
      case FromBroker.PING:
        this.sendHandshake({ type: ToBroker.PONG });
        break;
      case FromBroker.ERROR:
        console.warn(`browser-mcp: port ${this.port} before its proof: ${message.code}: ${message.message}`);
        break;
      default:
        if (this.held.length >= HELD_LIMIT) this.refuse("it sent too much before proving itself");
        else this.held.push(message);
    }
  }

  /** The broker's answer to our challenge: believed only with the key of the broker it names. */
  async checkBroker({ brokerId, nonce, proof: presented }) {
    if (typeof brokerId !== "string" || typeof nonce !== "string" || !/^[0-9a-f]{32}$/.test(brokerId)) {
      this.refuse("its authProof is malformed");
      return;
    }
    let key;
    if (this.token) {
      const derived = await tokenKeys(this.token);
      if (derived.brokerId !== brokerId) {
        this.refuse("it is not the broker the native host named for this port");
        return;
      }
      key = derived.key;
    } else {
      key = await pairedKey(brokerId);
      if (!key) {
        // Nothing is sent and nothing obeyed; the link stays open for the person to pair it.
        clearTimeout(this.handshake);
        trust.set(this.port, { state: TrustState.UNPAIRED, brokerId, at: Date.now() });
        return;
      }
    }
    if (!(await checkProof(presented, key, Role.BROKER, this.port, this.nonce, nonce))) {
      this.refuse("its proof of the broker's key is wrong");
      return;
    }
    this.proven = true;
    trust.delete(this.port);
    this.send({ type: ToBroker.AUTH_RESPONSE, proof: await proof(key, Role.EXTENSION, this.port, this.nonce, nonce) });
    for (const message of this.held.splice(0)) this.carryOut(message);
  }

  /** Drop a server that failed to prove it is the broker; it is not asked again for a while. */
  refuse(reason) {
    console.warn(`browser-mcp: dropped the server on port ${this.port}: ${reason}`);
    trust.set(this.port, { state: TrustState.REFUSED, reason, at: Date.now() });
    this.held = [];
    this.ws.close();
  }

  /** The next handshake frame of one of `types` (or the broker's error), for a pairing step. */
  expect(types) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the broker did not answer")), PAIRING_STEP_MS);
      this.expected = {
        types: [...types, FromBroker.ERROR],
        resolve: (message) => {
          clearTimeout(timer);
          if (message.type === FromBroker.ERROR) reject(new Error(message.message));
          else resolve(message);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
    });
  }

  /** Pair with the code the person typed: the broker proves it knows it, and hands over its link key. */
  async pair(code) {
    this.pairing = true;
    try {
      await this.exchange(code);
    } finally {
      this.pairing = false;
    }
  }

  async exchange(code) {
    const ours = newNonce();
    const offered = this.expect([FromBroker.PAIR_NONCE]);
    this.sendHandshake({ type: ToBroker.PAIR_CHALLENGE, nonce: ours });
    const offer = await offered;
    const keys = await pairingKeys(code, offer.brokerId, this.port, ours, offer.nonce);
    const answered = this.expect([FromBroker.PAIR_KEY]);
    this.sendHandshake({ type: ToBroker.PAIR_PROOF, proof: keys.extensionProof });
    const answer = await answered;
    if (answer.proof !== keys.brokerProof) throw new Error("the broker's proof of the code is wrong");
    const key = await unwrapLinkKey(keys.wrapKey, answer.iv, answer.wrappedKey, offer.brokerId);
    await rememberPairing(offer.brokerId, key);
    trust.delete(this.port);
    this.challenge(); // now as a paired broker: it proves its key, and is joined
  }
}

export const TrustState = Object.freeze({ UNPAIRED: "not paired", REFUSED: "refused" });

/** Brokers found but not believed: those waiting to be paired, and servers dropped for a failed proof. */
export function untrusted() {
  const now = Date.now();
  for (const [port, state] of trust) {
    if (state.state === TrustState.REFUSED && now - state.at > 6 * REFUSED_FOR_MS) trust.delete(port);
    const gone = state.closedAt && !links.has(port) && now - state.closedAt > UNPAIRED_KEPT_MS;
    if (state.state === TrustState.UNPAIRED && gone) trust.delete(port);
  }
  return [...trust].map(([port, state]) => ({ port, ...state }));
}

/** Pair the broker waiting on `port` with `code`. Throws, saying why, when that fails. */
export async function pairLink(port, code) {
  // The broker may have closed the link that waited (it had not proven itself in time): pair over a new one.
  if (!links.has(port) && trust.get(port)?.state === TrustState.UNPAIRED) openLink(port, null);
  const link = links.get(port);
  if (!link || !(await link.opening)) throw new Error(`no broker is linked on port ${port}: is it still running?`);
  if (link.proven) return;
  await link.pair(code);
}

/** The paired keys changed: brokers that waited to be paired are asked again. */
export function retryUnpaired() {
  for (const link of links.values()) {
    // A link pairing now asks again itself once the key is stored.
    if (!link.proven && !link.pairing && trust.get(link.port)?.state === TrustState.UNPAIRED) link.challenge();
  }
}

/** Open a link to the broker on `port`, unless one is open or opening already. */
export function openLink(port, token) {
  if (links.has(port)) return;
  const refused = trust.get(port);
  if (refused?.state === TrustState.REFUSED && Date.now() - refused.at < REFUSED_FOR_MS) return;
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

/** An answer of type `message` to `request`, in the AI session the request came from. */
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
