// A link's handshake, before anything a broker sends is obeyed: the broker proves it holds its
// link key (broker_auth.js's proofs), or, without a token from the native host and not yet
// paired, waits for the person to pair it with a code over the same link. A server that fails
// its proof is refused and not asked again for a while. Those waiting to be paired and those
// refused are the brokers found but not believed, which the popup shows.

import { FromBroker, ToBroker } from "../base/protocol.js";
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

export const TrustState = Object.freeze({ UNPAIRED: "not paired", REFUSED: "refused" });

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

/** Why the link on `port` is not believed: {state, brokerId, reason, at}, or undefined. */
export function trustOf(port) {
  return trust.get(port);
}

/** Whether the server on `port` failed its proof too lately to be asked again. */
export function refusedLately(port) {
  const refused = trust.get(port);
  return refused?.state === TrustState.REFUSED && Date.now() - refused.at < REFUSED_FOR_MS;
}

/** Brokers found but not believed, `linked(port)` saying whether a link to one is open. */
export function notBelieved(linked) {
  const now = Date.now();
  for (const [port, state] of trust) {
    if (state.state === TrustState.REFUSED && now - state.at > 6 * REFUSED_FOR_MS) trust.delete(port);
    const gone = state.closedAt && !linked(port) && now - state.closedAt > UNPAIRED_KEPT_MS;
    if (state.state === TrustState.UNPAIRED && gone) trust.delete(port);
  }
  return [...trust].map(([port, state]) => ({ port, ...state }));
}

/**
 * The handshake's part of a link (links.js's Link, which gives it `port`, `token`, `ws`, the
 * `handshake` timer, `send`, `sendHandshake` and `carryOut`).
 */
export class HandshakeLink {
  constructor() {
    // Until the broker proves it holds its link key, nothing of its frames is obeyed: they wait
    // here, and are carried out once it has (they came over the same socket).
    this.proven = false;
    this.held = [];
    this.steps = Promise.resolve(); // handshake frames, one after another
    this.expected = null; // {types, resolve, reject}: a pairing step waiting for the broker's answer
    this.challenges = 0; // authChallenges the broker has not answered yet
    this.pairing = false;
  }

  /** Ask the broker to prove it holds its link key, over a fresh nonce. */
  challenge() {
    this.nonce = newNonce();
    this.challenges += 1;
    this.sendHandshake({ type: ToBroker.AUTH_CHALLENGE, nonce: this.nonce });
  }

  /** The link closed: one waiting to be paired is kept a while, one that never proved itself refused. */
  closedUnproven(code) {
    const unpaired = trust.get(this.port);
    if (unpaired?.state === TrustState.UNPAIRED) unpaired.closedAt = Date.now();
    else if (this.opened && !this.proven && !trust.has(this.port) && code !== TRY_AGAIN_LATER) {
      trust.set(this.port, {
        state: TrustState.REFUSED,
        reason: "it never proved it is the broker (an older broker, or not one)",
        at: Date.now(),
      });
    }
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
