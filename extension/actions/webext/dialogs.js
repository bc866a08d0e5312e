// The WebExtension driver's dialogs (Firefox): the page hooks (page_hooks.js) put in
// each frame of the tabs the tools act on, and the blocking webRequest listener that hears their
// dialogs and holds each until dialogs.js has it answered (browser_handle_dialog, or its timeout).
//
// Each document's hooks draw their own secret and hand it to the driver alone, as what the
// injection answers, with the document's id; the listener takes a dialog only from a request of
// that very document (Firefox names it in each request) whose body holds that secret, so a
// frame of another site, or the page with anything it may have seen, opens nothing. The answer
// waits under the dialog's ticket for the same document's one request for it. The secrets, the
// tickets and which tabs are the tools' are mirrored in chrome.storage.session (which content
// scripts cannot read), so that the hooks' dialogs are still heard after the event page unloads
// and a request wakes it. Anything else sent to the answer host is refused at once, and so is a
// second dialog while one is held in the tab (dismissed, and the client told): neither opens a
// dialog, answers one, or waits.

import { dialogClosed, dialogNotHeld, dialogOpened, forgetDialogs } from "../dialogs.js";
import { withTimeout } from "../../base/errors.js";
import { installPageHooks } from "./page_hooks.js";

// A host under .invalid never resolves (RFC 2606): a request the listener misses goes nowhere.
export const ANSWER_HOST = "browser-mcp.invalid";
const DIALOG_TYPES = new Set(["alert", "confirm", "prompt"]);
// Any of the add-on's files a page may load: the answer is the query of the address.
const ANSWERED_AT = chrome.runtime.getURL("actions/webext/page_agent.js");
// The port on which the hooks say a dialog they could not hold: the add-on's own, out of pages' reach.
const NOT_HELD_PORT = "browser-mcp:dialog-not-held";
const CONSOLE_LIMIT = 200;
const TEXT_LIMIT = 2_000;
const SCRIPT_TIMEOUT_MS = 5_000;
const TICKETS_KEPT = 16;
const TOKEN = /^[0-9a-f]{48}$/;
const KEY = "pageHooks";

/** documentId -> {tabId, frameId, secret} of each document the hooks are in */
const documents = new Map();
/** ticket -> {documentId, answer}: a dialog's answer, waiting for its document to ask for it */
const tickets = new Map();
/** tab id -> {requestId, end(blockingResponse)} of the dialog held there */
const held = new Map();
/** tab id -> the hooks' injections under way there, whose documents' secrets are not known yet */
const injecting = new Map();
/** The tabs the tools act on: elsewhere a dialog is Firefox's own, left to the person. */
const hooked = new Set();
/** Resolved once what the last event page saved is back (listenForDialogs starts it). */
let restored = null;

async function restore() {
  const found = (await chrome.storage.session.get(KEY).catch(() => ({})))[KEY];
  for (const [documentId, known] of found?.documents ?? [])
    if (!documents.has(documentId)) documents.set(documentId, known);
  for (const [ticket, waiting] of found?.tickets ?? []) if (!tickets.has(ticket)) tickets.set(ticket, waiting);
  for (const tabId of found?.hooked ?? []) hooked.add(tabId);
}

function save() {
  const saved = { documents: [...documents], tickets: [...tickets], hooked: [...hooked] };
  chrome.storage.session.set({ [KEY]: saved }).catch((error) => console.warn("browser-mcp: cannot save", error));
}

function forgetDocuments(tabId, frameId = null) {
  let changed = false;
  for (const [documentId, known] of documents) {
    if (known.tabId !== tabId || (frameId !== null && known.frameId !== frameId)) continue;
    documents.delete(documentId);
    changed = true;
    for (const [ticket, waiting] of tickets) if (waiting.documentId === documentId) tickets.delete(ticket);
  }
  if (changed) save();
}

function answerFor(ticket, documentId, answer) {
  tickets.set(ticket, { documentId, answer });
  if (tickets.size > TICKETS_KEPT) tickets.delete(tickets.keys().next().value);
  save();
}

function endHeld(tabId, response) {
  const dialog = held.get(tabId);
  if (!dialog) return false;
  held.delete(tabId);
  dialog.end(response);
  return true;
}

/** The frame a dialog came from, as the browser names it: its origin, or null for the tab's page. */
function frameOf({ frameId, documentUrl }) {
  if (frameId === 0) return null;
  try {
    return new URL(documentUrl).origin;
  } catch {
    return "a frame of unknown address";
  }
}

/** What a POST of the hooks holds, where it comes from the document the secret was given: else null. */
async function hooksDialog(details) {
  let said;
  try {
    const decoder = new TextDecoder();
    const parts = (details.requestBody?.raw ?? []).map(({ bytes }) => decoder.decode(bytes, { stream: true }));
    said = JSON.parse(parts.join("") + decoder.decode());
  } catch {
    return null;
  }
  if (!DIALOG_TYPES.has(said?.type) || !TOKEN.test(said.secret) || !TOKEN.test(said.ticket)) return null;
  const { tabId, frameId, documentId } = details;
  const known = () => documents.get(documentId);
  // A page may ask the moment its hooks are in, before their injection has answered with the secret.
  if (!known() && injecting.has(tabId)) await Promise.allSettled([...injecting.get(tabId)]);
  const document = known();
  if (!document || document.tabId !== tabId || document.frameId !== frameId || document.secret !== said.secret) {
    return null;
  }
  return said;
}

/** Blocking onBeforeRequest for the answer host: a dialog held until answered, or refused at once. */
async function heldDialog(details) {
  await restored;
  const { tabId, requestId, documentId, method } = details;
  const path = new URL(details.url).pathname;
  if (method === "GET" && path.startsWith("/answer/")) {
    const ticket = path.slice("/answer/".length);
    const waiting = tickets.get(ticket);
    if (!waiting || waiting.documentId !== documentId) return { cancel: true };
    tickets.delete(ticket);
    save();
    return { redirectUrl: `${ANSWERED_AT}?${encodeURIComponent(JSON.stringify(waiting.answer))}` };
  }
  const said = method === "POST" && path === "/dialog" ? await hooksDialog(details) : null;
  if (!said) return { cancel: true };
  const dialog = { type: said.type, message: String(said.message ?? ""), frame: frameOf(details) };
  if (!hooked.has(tabId)) {
    answerFor(said.ticket, documentId, { native: true });
    return { cancel: true };
  }
  if (held.has(tabId)) {
    answerFor(said.ticket, documentId, { accept: false });
    dialogNotHeld(tabId, dialog, "another dialog was open in the tab");
    return { cancel: true };
  }
  return await new Promise((end) => {
    held.set(tabId, { requestId, end, ticket: said.ticket, documentId });
    const answer = async ({ accept, promptText }) => {
      if (held.get(tabId)?.requestId !== requestId) throw new Error("no dialog is held there any more");
      answerFor(said.ticket, documentId, { accept, text: promptText });
      endHeld(tabId, { cancel: true });
    };
    dialogOpened(tabId, dialog, answer);
  });
}

/** The hooks of a frame could not hold its dialog: dismissed there at once, and the client is told. */
function notHeldPortOpened(port) {
  const { sender } = port;
  if (port.name !== NOT_HELD_PORT || sender?.id !== chrome.runtime.id || !(sender.tab?.id >= 0)) return;
  port.onMessage.addListener((said) => {
    if (!hooked.has(sender.tab.id) || !DIALOG_TYPES.has(said?.type)) return;
    const dialog = {
      type: said.type,
      message: String(said.message ?? ""),
      frame: frameOf({ frameId: sender.frameId, documentUrl: sender.url }),
    };
    dialogNotHeld(
      sender.tab.id,
      dialog,
      "the page hooks' requests that hold a dialog failed (a page's Content-Security-Policy connect-src can block them)",
    );
  });
}

/** Hear the page hooks' dialogs; a held one ends with its request, its document or its tab. */
export function listenForDialogs() {
  restored = restore();
  const filter = { urls: [`https://${ANSWER_HOST}/*`] };
  chrome.webRequest.onBeforeRequest.addListener(heldDialog, filter, ["blocking", "requestBody"]);
  chrome.webRequest.onErrorOccurred.addListener(({ tabId, requestId }) => {
    if (held.get(tabId)?.requestId === requestId && endHeld(tabId, { cancel: true })) dialogClosed(tabId);
  }, filter);
  chrome.runtime.onConnect.addListener(notHeldPortOpened);
  chrome.webNavigation.onCommitted.addListener(({ tabId, frameId }) => {
    forgetDocuments(tabId, frameId === 0 ? null : frameId);
    if (frameId === 0 && endHeld(tabId, { cancel: true })) dialogClosed(tabId);
    // The tools' tab keeps its hooks from one document to the next, put in as early as they can go.
    if (hooked.has(tabId)) hookTab(tabId, frameId);
  });
}

/**
 * Whether every frame of the tab shows a document whose hooks gave their secret: the frames as the
 * browser lists them now (no script in the page), each document known by its id.
 */
async function allHooked(tabId) {
  const frames = await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null);
  if (!frames?.length) return false;
  return frames.every(({ frameId, documentId }) => {
    const known = documentId && documents.get(documentId);
    return known?.tabId === tabId && known.frameId === frameId;
  });
}

/**
 * Put the hooks in the tab's frames that lack them (`frameId`: that frame alone), and learn each
 * document's secret. Frames that cannot be scripted are left out; nothing here fails the action.
 * Where every frame has them already (the tab's actions after its first on a page), no script runs.
 */
export async function hookTab(tabId, frameId = null) {
  await restored;
  if (!hooked.has(tabId)) {
    hooked.add(tabId);
    save();
  }
  if (frameId === null && (await allHooked(tabId))) return;
  const target = frameId === null ? { tabId, allFrames: true } : { tabId, frameIds: [frameId] };
  const options = {
    answerHost: ANSWER_HOST,
    notHeldPort: NOT_HELD_PORT,
    consoleLimit: CONSOLE_LIMIT,
    textLimit: TEXT_LIMIT,
  };
  const injection = chrome.scripting.executeScript({
    target,
    func: installPageHooks,
    args: [options],
    injectImmediately: true,
  });
  let underWay = injecting.get(tabId);
  if (!underWay) injecting.set(tabId, (underWay = new Set()));
  underWay.add(injection);
  let results = [];
  try {
    results = await withTimeout(injection, SCRIPT_TIMEOUT_MS, "the page hooks");
  } catch {
    // a page the add-on may not script, or one held by a dialog: the frames hooked earlier stay so
  } finally {
    underWay.delete(injection);
    if (!underWay.size) injecting.delete(tabId);
  }
  let learnt = false;
  for (const { frameId: frame, documentId, result } of results) {
    if (!documentId || !TOKEN.test(result?.secret ?? "") || documents.get(documentId)?.secret === result.secret)
      continue;
    documents.set(documentId, { tabId, frameId: frame, secret: result.secret });
    learnt = true;
  }
  if (learnt) save();
}

/** The tools let go of the tab: its dialogs are Firefox's own again, the one held now too. */
export function unhookTab(tabId) {
  if (hooked.delete(tabId)) save();
  const dialog = held.get(tabId);
  if (dialog) {
    answerFor(dialog.ticket, dialog.documentId, { native: true });
    endHeld(tabId, { cancel: true });
  }
  forgetDialogs(tabId);
}

/** The tab closed. */
export function forgetTabDialogs(tabId) {
  hooked.delete(tabId);
  forgetDocuments(tabId);
  save();
  endHeld(tabId, { cancel: true });
  forgetDialogs(tabId);
}
