// Finding brokers: the native messaging host names the live ones with their tokens; without a
// host, the port range of the options (8765-8785 by default) is probed, again and again with
// backoff. Decides which links should be open, leaves alone the brokers the person chose to
// ignore, and forgets brokers that stayed away (with their sessions).

import { BROKER_HEADER, NATIVE_HOST } from "../base/protocol.js";
import { closeLinksExcept, forgetSeen, hasLink, isJoined, lostAt, openLink, seenPorts } from "./links.js";
import { settings, settingsReady } from "../base/settings.js";

const SWEEP_FIRST_MS = 500;
const SWEEP_MAX_MS = 2_000; // a sweep of the range is 21 refused loopback requests: cheap
const PROBE_TIMEOUT_MS = 2_000;
const FORGET_AFTER_MS = 60_000;
export const WAKE_ALARM = "browser-mcp-discover";

const workerStarted = Date.now();
let nativePort = null;
let nativeBrokers = null; // the host's latest list; null until it sends one
let nativeError = null; // why the host could not be reached, for the popup
let sweepTimer = null;
let sweepDelay = SWEEP_FIRST_MS;
const probing = new Set(); // ports with a probe in flight

// The AI sessions stored for each broker, which tabs/ and the page driver keep: a broker holding
// some stays listed, and one forgotten takes them with it. Handed in by the wiring (background.js).
let brokerSessions = { ports: () => [], forget: () => {} };

/**
 * Start finding brokers. `sessions.ports()`: the brokers that sessions are stored for;
 * `sessions.forget(port)`: let go of all of a broker's sessions.
 */
export function startDiscovery(sessions) {
  brokerSessions = sessions;
  chrome.alarms.create(WAKE_ALARM, { periodInMinutes: 0.5 });
  // The options say which ports to probe and which brokers to leave alone.
  settingsReady.then(() => {
    connectNativeHost();
    sweep();
  });
}

const ignored = (port) => settings().ignoredPorts.includes(port);

/** The options changed: links to brokers now ignored close, and the search starts over. */
export function discoverySettingsChanged() {
  closeLinksExcept({ has: (port) => !ignored(port) });
  for (const port of knownPorts()) if (ignored(port)) forgetBroker(port);
  discoverSoon();
}

/** The alarm fired: a native host installed since is picked up, and a stopped search resumes. */
export function wakeDiscovery() {
  if (!nativePort) connectNativeHost();
  if (sweepTimer === null) discoverSoon();
}

/** The native messaging host streams `{type: "brokers", brokers: [{port, token, pid}]}`. */
function connectNativeHost() {
  let port;
  try {
    port = chrome.runtime.connectNative(NATIVE_HOST);
  } catch (error) {
    nativeError = error.message;
    return;
  }
  nativePort = port;
  port.onMessage.addListener((message) => {
    switch (message?.type) {
      case "brokers":
        nativeBrokers = Array.isArray(message.brokers) ? message.brokers : [];
        joinBrokers(nativeBrokers);
        break;
      case "pong":
        break;
      default:
        console.warn("browser-mcp: unknown message from the native host", message?.type);
    }
  });
  port.onDisconnect.addListener(() => {
    // A missing host disconnects at once (chrome.runtime.lastError says why, or in Firefox the
    // port's own error): probe instead.
    const error = chrome.runtime.lastError ?? port.error;
    if (nativePort !== port) return;
    const hostWasServing = nativeBrokers !== null;
    nativeError = error?.message ?? "the native host exited";
    nativePort = null;
    nativeBrokers = null;
    // Only a host that stopped serving changes where brokers are to be found; a host that is still
    // missing at the alarm's retry does not, and must not restart the probing backoff.
    if (hostWasServing || sweepTimer === null) discoverSoon();
  });
}

/** Whether the native host is connected and, if not, why it could not be reached. */
export function nativeHostStatus() {
  return { installed: nativePort !== null, error: nativePort ? null : nativeError };
}

/** The brokers the native host named last; [] before it names any or without a host. */
export function namedBrokers() {
  return nativeBrokers ?? [];
}

/** Join exactly the brokers the host named: open links that are missing, close the others. */
function joinBrokers(brokers) {
  const wanted = new Map();
  for (const broker of brokers) {
    if (Number.isInteger(broker?.port) && !ignored(broker.port)) wanted.set(broker.port, broker.token ?? null);
  }
  closeLinksExcept(wanted);
  for (const port of knownPorts()) {
    if (!wanted.has(port)) forgetBroker(port);
  }
  for (const [port, token] of wanted) openLink(port, token);
}

/** Every broker the popup lists: joined, recently lost, or holding sessions stored for it. */
export function knownPorts() {
  const ports = new Set(seenPorts());
  for (const port of brokerSessions.ports()) ports.add(port);
  return ports;
}

/** A broker that is gone for good: it leaves the popup, and its sessions with it. */
function forgetBroker(port) {
  forgetSeen(port);
  brokerSessions.forget(port);
}

/** Probed brokers that did not come back within FORGET_AFTER_MS are taken as stopped. */
function forgetLostBrokers() {
  const now = Date.now();
  for (const port of knownPorts()) {
    if (isJoined(port)) continue;
    if (now - (lostAt(port) || workerStarted) >= FORGET_AFTER_MS) forgetBroker(port);
  }
}

/**
 * Open a link to `port` if a broker listens there. A plain request finds out first: Chromium
 * delays new WebSockets by seconds once most of a worker's WebSockets have failed, and a sweep of
 * empty ports, or of another program's server, would make nearly all of them fail.
 */
async function probe(port) {
  probing.add(port);
  let response;
  try {
    const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
    response = await fetch(`http://127.0.0.1:${port}/`, { cache: "no-store", signal });
  } catch {
    return; // nothing listens there
  } finally {
    probing.delete(port);
  }
  // Any answer of a broker will do (its error status for a plain request included).
  if (!response.headers.has(BROKER_HEADER)) return;
  if (!nativePort && !ignored(port)) openLink(port, null);
}

/** Open a link to every broker not joined yet, then again later, backing off to SWEEP_MAX_MS. */
function sweep() {
  sweepTimer = null;
  if (nativePort) {
    if (nativeBrokers) joinBrokers(nativeBrokers); // reconnects links that dropped
  } else {
    forgetLostBrokers();
    const { portFirst, portLast } = settings();
    for (let port = portFirst; port <= portLast; port++) {
      if (!hasLink(port) && !probing.has(port) && !ignored(port)) probe(port);
    }
  }
  sweepTimer = setTimeout(sweep, sweepDelay);
  sweepDelay = Math.min(sweepDelay * 2, SWEEP_MAX_MS);
}

/** Look again soon, with the backoff reset: a link closed, or the discovery source changed. */
export function discoverSoon() {
  sweepDelay = SWEEP_FIRST_MS;
  clearTimeout(sweepTimer);
  sweepTimer = setTimeout(sweep, SWEEP_FIRST_MS);
}
