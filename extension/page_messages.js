// What a web page may send the worker. Every http(s) page can message it (the manifest's
// externally_connectable, which the polyfill in the page's own world needs to ask for its bridge),
// so a hostile page can send as much as it likes: 100,000 messages kept the worker busy for minutes,
// and every client's actions in every other tab waited behind them.
//
// Chromium hands onMessageExternal a message it has already parsed (the page's JSON, up to its own
// 64 MB limit): its size cannot be known, or refused, before that cost is paid, and the worker is
// woken for every message, listener or not. What is bounded here is everything after: a message
// costs a few map lookups, and nothing else unless it is a WAKE, exactly `{kind}`, from a sender
// within its rate; anything larger or of another kind is dropped unread. A sender (its document,
// and its origin across its documents) over its rate is ignored for a while, and its document's
// messaging is cut off in its own world (see silence()), which stops a flood that yields between
// messages; one sent in a single loop, or with a reference kept to sendMessage, runs until it
// ends, and what it costs is Chromium's (docs/security.md).

import { Bridge } from "./protocol.js";

// The polyfill sends at most two per document (its first tool, its first tool form); frames and
// tabs of one site add up, hence the origin's larger share.
const DOCUMENT_LIMIT = { burst: 8, perSecond: 2 };
const ORIGIN_LIMIT = { burst: 100, perSecond: 20 };
const IGNORED_MS = 60_000;
// Buckets kept at most (see prune).
const MAX_BUCKETS = 2_000;

/** key ("d:<documentId>", "o:<origin>") -> {tokens, at, ignoredUntil} */
const buckets = new Map();

/** Whether `message` is the polyfill's WAKE and nothing more, read at the cost of its first extra key. */
function isWake(message) {
  if (typeof message !== "object" || message === null || message.kind !== Bridge.WAKE) return false;
  for (const key in message) if (key !== "kind") return false;
  return true;
}

function bucketOf(key, limit, now) {
  let bucket = buckets.get(key);
  if (!bucket) {
    if (buckets.size >= MAX_BUCKETS) prune(now);
    bucket = { tokens: limit.burst, at: now, ignoredUntil: 0 };
    buckets.set(key, bucket);
  }
  return bucket;
}

/** Take one message from the bucket `key`: false when it is over its rate (then ignored a while), or ignored. */
function take(key, limit, now) {
  const bucket = bucketOf(key, limit, now);
  if (bucket.ignoredUntil > now) return false;
  bucket.tokens = Math.min(limit.burst, bucket.tokens + ((now - bucket.at) / 1000) * limit.perSecond);
  bucket.at = now;
  if (bucket.tokens < 1) {
    bucket.ignoredUntil = now + IGNORED_MS;
    return false;
  }
  bucket.tokens -= 1;
  return true;
}

/** Make room: buckets that ignore no one go first (such a sender starts again from a full one). */
function prune(now) {
  for (const [key, bucket] of buckets) {
    if (bucket.ignoredUntil <= now) buckets.delete(key);
    if (buckets.size < MAX_BUCKETS / 2) return;
  }
  // Every one of them is ignoring a flood: the oldest goes.
  buckets.delete(buckets.keys().next().value);
}

/**
 * Whether the sender may be heard: its document and its origin (across its documents and frames)
 * within their rates. A document found over either is ignored a while, and `overRate(sender)` told once.
 */
function admitted(sender, now, overRate) {
  const document = sender.documentId ? `d:${sender.documentId}` : `d:${sender.tab?.id}/${sender.frameId}`;
  if ((buckets.get(document)?.ignoredUntil ?? 0) > now) return false;
  const origin = `o:${sender.origin ?? sender.url ?? ""}`;
  if (take(document, DOCUMENT_LIMIT, now) && take(origin, ORIGIN_LIMIT, now)) return true;
  bucketOf(document, DOCUMENT_LIMIT, now).ignoredUntil = now + IGNORED_MS;
  overRate(sender);
  return false;
}

/**
 * In the flooding document's own world: sendMessage and connect no longer reach any extension.
 * A page that keeps its own reference to them, or gets them afresh from a new frame (a document
 * of its own, with a rate of its own), is not stopped by this.
 */
function silence() {
  const runtime = globalThis.chrome?.runtime;
  if (!runtime) return;
  for (const name of ["sendMessage", "connect"]) {
    try {
      Object.defineProperty(runtime, name, { value: () => undefined, writable: false, configurable: false });
    } catch {
      // what the page made unchangeable stays as it is
    }
  }
}

function cutOff(sender) {
  const tabId = sender.tab?.id;
  if (!(tabId >= 0) || typeof sender.documentId !== "string") return;
  console.warn("browser-mcp: ignoring a page that floods the extension with messages", sender.origin ?? sender.url);
  chrome.scripting
    .executeScript({
      target: { tabId, documentIds: [sender.documentId] },
      world: "MAIN",
      injectImmediately: true,
      func: silence,
    })
    .catch(() => {});
}

/**
 * onMessageExternal's listener: `wake(sender)` for a WAKE from a sender within its rate, every
 * other message dropped. Answers nothing, so a page learns nothing through this but that the
 * extension is installed.
 */
export function pageMessage(message, sender, wake) {
  if (!admitted(sender, Date.now(), cutOff)) return;
  if (isWake(message)) wake(sender);
}
