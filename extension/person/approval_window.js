// The approval window: one extension window per call that waits for the person (approvals.js
// decides which do), settled once by their answer, by closing it, by the approval time running
// out, or by the broker calling the call off or its session ending, each closing the window.

import { PersonRefusal } from "../base/protocol.js";

const WINDOW = { type: "popup", width: 600, height: 700, focused: true };

let nextId = 1;
/** id -> {details, owner (base/owner_key.js), windowId, timer, finish(outcome)} */
const waiting = new Map();

export function notApproved(details, why) {
  return {
    code: PersonRefusal.NOT_APPROVED,
    message: `the person did not approve ${details.tool} on ${details.site}: ${why}`,
  };
}

/** Open the approval window and settle with "once", "always", or the error to answer with. */
export function ask(details, owner, call) {
  const id = nextId++;
  return new Promise((resolve) => {
    const entry = { details: { ...details, id }, owner, call, windowId: null };
    entry.finish = (outcome) => {
      if (!waiting.delete(id)) return;
      clearTimeout(entry.timer);
      if (entry.windowId !== null) chrome.windows.remove(entry.windowId).catch(() => {});
      resolve(outcome);
    };
    const seconds = Math.round(details.timeoutMs / 1000);
    entry.timer = setTimeout(
      () => entry.finish(notApproved(details, `no answer within ${seconds} s`)),
      details.timeoutMs,
    );
    waiting.set(id, entry);
    chrome.windows
      .create({ ...WINDOW, url: chrome.runtime.getURL(`person/approval.html?id=${id}`) })
      .then((window) => {
        if (waiting.has(id)) entry.windowId = window.id;
        else chrome.windows.remove(window.id).catch(() => {});
      })
      .catch((error) => entry.finish(notApproved(details, `the approval window did not open (${error.message})`)));
  });
}

/** What the approval window shows; null once it is answered or gone. */
export function approvalDetails(id) {
  return waiting.get(id)?.details ?? null;
}

/**
 * The person's answer from the approval window: "once", "always", "httponly" (a read of cookies
 * with their HttpOnly values, where the window offers it) or "deny". "Always allow" is no answer
 * to a request of the person's cookies and site storage, which never offers it.
 */
export function answerApproval(id, decision) {
  const entry = waiting.get(id);
  if (!entry) return;
  if (decision === "always" && entry.details.storage) {
    entry.finish(notApproved(entry.details, "“Always allow” is never given for cookies and site storage"));
  } else if (decision === "once" || decision === "always") entry.finish(decision);
  else if (decision === "httponly" && entry.details.httpOnly) entry.finish(decision);
  else entry.finish(notApproved(entry.details, "they denied it"));
}

/** chrome.windows.onRemoved: closing an approval window is a no. */
export function approvalWindowClosed(windowId) {
  for (const entry of waiting.values()) {
    if (entry.windowId === windowId) {
      entry.windowId = null;
      entry.finish(notApproved(entry.details, "they closed the approval window"));
    }
  }
}

/** Settle every waiting approval whose "port/sessionId" `match` picks with `error`, closing its window. */
export function cancelApprovals(match, error) {
  for (const entry of [...waiting.values()]) if (match(entry.owner)) entry.finish(error);
}

/** Settle the approval the call "port/callId" waits for, if any, closing its window: the broker called it off. */
export function cancelApprovalOf(call, error) {
  for (const entry of [...waiting.values()]) if (entry.call === call) entry.finish(error);
}
