// The WebExtension driver's dialogs and console (Firefox): the page hooks (page_hooks.js) put in
// each frame of the tabs the tools act on, and the blocking webRequest listener that hears their
// dialogs and holds each until dialogs.js has it answered (browser_handle_dialog, or its timeout).
//
// Each action gives the frames of its tab a new secret for their answer address (the last few a
// tab's frames were given are kept, for a frame that missed an action). The secrets, and which
// tabs are the tools', are mirrored in chrome.storage.session (which content scripts cannot
// read), so that the hooks' dialogs are still heard after the event page unloads and a request
// wakes it; and the tab's next action gives them a new secret all the same. A request to the
// answer host that names no secret of its tab's documents (a page's own, which cannot read one)
// is refused at once, and so is a second dialog while one is held in the tab: neither opens a
// dialog, answers one, or waits.

import { dialogClosed, dialogOpened, forgetDialogs } from "./dialogs.js";
import { withTimeout } from "./errors.js";
import { installPageHooks } from "./page_hooks.js";

// A host under .invalid never resolves (RFC 2606): a request the listener misses goes nowhere.
const ANSWER_HOST = "browser-mcp.invalid";
const DIALOG_TYPES = new Set(["alert", "confirm", "prompt"]);
// Any of the add-on's files a page may load: the answer is the query of the address.
const ANSWERED_AT = chrome.runtime.getURL("actions/page_agent.js");
const CONSOLE_LIMIT = 200;
const TEXT_LIMIT = 2_000;
const SCRIPT_TIMEOUT_MS = 5_000;
const SECRETS_KEPT = 8;
const KEY = "pageHooks";

/** tab id -> the secrets given to its current documents' hooks */
const secrets = new Map();
/** tab id -> {requestId, end(blockingResponse)} of the dialog held there */
const held = new Map();
/** The tabs the tools act on: elsewhere a dialog is Firefox's own, left to the person. */
const hooked = new Set();
/** Resolved once what the last event page saved is back (listenForDialogs starts it). */
let restored = null;

async function restore() {
  const found = (await chrome.storage.session.get(KEY).catch(() => ({})))[KEY];
  for (const [tabId, saved] of Object.entries(found?.secrets ?? {})) {
    const id = Number(tabId);
    secrets.set(id, new Set([...saved, ...(secrets.get(id) ?? [])]));
  }
  for (const tabId of found?.hooked ?? []) hooked.add(tabId);
}

function save() {
  const saved = {
    secrets: Object.fromEntries([...secrets].map(([tabId, kept]) => [tabId, [...kept]])),
    hooked: [...hooked],
  };
  chrome.storage.session.set({ [KEY]: saved }).catch((error) => console.warn("browser-mcp: cannot save", error));
}

function newSecret() {
  return Array.from(crypto.getRandomValues(new Uint8Array(24)), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

const answered = (answer) => ({ redirectUrl: `${ANSWERED_AT}?${encodeURIComponent(JSON.stringify(answer))}` });

function endHeld(tabId, response) {
  const dialog = held.get(tabId);
  if (!dialog) return false;
  held.delete(tabId);
  dialog.end(response);
  return true;
}

/** Blocking onBeforeRequest for the answer host: a dialog held until answered, or refused at once. */
async function heldDialog(details) {
  await restored;
  const { tabId, requestId } = details;
  const url = new URL(details.url);
  const [, kind, secret] = url.pathname.split("/");
  const type = url.searchParams.get("type");
  if (kind !== "dialog" || !secrets.get(tabId)?.has(secret) || !DIALOG_TYPES.has(type) || held.has(tabId)) {
    return { cancel: true };
  }
  if (!hooked.has(tabId)) return answered({ native: true });
  return await new Promise((end) => {
    held.set(tabId, { requestId, end });
    const answer = async ({ accept, promptText }) => {
      if (held.get(tabId)?.requestId !== requestId) throw new Error("no dialog is held there any more");
      endHeld(tabId, answered({ accept, text: promptText }));
    };
    dialogOpened(tabId, { type, message: url.searchParams.get("message") ?? "" }, answer);
  });
}

/** Hear the page hooks' dialogs; a held one ends with its request, its document or its tab. */
export function listenForDialogs() {
  restored = restore();
  const filter = { urls: [`https://${ANSWER_HOST}/*`] };
  chrome.webRequest.onBeforeRequest.addListener(heldDialog, filter, ["blocking"]);
  chrome.webRequest.onErrorOccurred.addListener(({ tabId, requestId }) => {
    if (held.get(tabId)?.requestId === requestId && endHeld(tabId, { cancel: true })) dialogClosed(tabId);
  }, filter);
  chrome.webNavigation.onCommitted.addListener(({ tabId, frameId }) => {
    if (frameId === 0) {
      if (secrets.delete(tabId)) save();
      if (endHeld(tabId, { cancel: true })) dialogClosed(tabId);
    }
    // The tools' tab keeps its hooks from one document to the next, put in as early as they can go.
    if (hooked.has(tabId)) hookTab(tabId, frameId);
  });
}

/**
 * Put the hooks in the tab's frames that lack them, and give all of them a new secret (`frameId`:
 * that frame alone). Frames that cannot be scripted are left out; nothing here fails the action.
 */
export async function hookTab(tabId, frameId = null) {
  await restored;
  hooked.add(tabId);
  const secret = newSecret();
  let tabSecrets = secrets.get(tabId);
  if (!tabSecrets) secrets.set(tabId, (tabSecrets = new Set()));
  // Known before the hooks can use it: a page may call alert the moment they are in.
  tabSecrets.add(secret);
  if (tabSecrets.size > SECRETS_KEPT) tabSecrets.delete(tabSecrets.values().next().value);
  save();
  const target = frameId === null ? { tabId, allFrames: true } : { tabId, frameIds: [frameId] };
  const options = {
    answerUrl: `https://${ANSWER_HOST}/dialog/${secret}`,
    consoleLimit: CONSOLE_LIMIT,
    textLimit: TEXT_LIMIT,
  };
  let results = [];
  try {
    const injecting = chrome.scripting.executeScript({
      target,
      func: installPageHooks,
      args: [options],
      injectImmediately: true,
    });
    results = await withTimeout(injecting, SCRIPT_TIMEOUT_MS, "the page hooks");
  } catch {
    // a page the add-on may not script, or one held by a dialog: the frames hooked earlier stay so
  }
  if (!results.some((frame) => frame.result) && tabSecrets.delete(secret)) save();
}

/** The tools let go of the tab: its dialogs are Firefox's own again, the one held now too. */
export function unhookTab(tabId) {
  if (hooked.delete(tabId)) save();
  endHeld(tabId, answered({ native: true }));
  forgetDialogs(tabId);
}

/** The tab closed. */
export function forgetTabDialogs(tabId) {
  hooked.delete(tabId);
  secrets.delete(tabId);
  save();
  endHeld(tabId, { cancel: true });
  forgetDialogs(tabId);
}
