// The dialogs (alert, confirm, prompt, beforeunload) of the tabs a client acts on, left for the
// client to answer with browser_handle_dialog, as Playwright MCP leaves them. Both page drivers
// report theirs here (dialogOpened): the DevTools one from the protocol's events, answered with
// Page.handleJavaScriptDialog; the WebExtension one from its page hooks (webext/dialogs.js), each
// dialog with the function that answers it.
//
// A dialog stops the page's scripts, and with them whatever a tool was doing there, until someone
// answers it. One that opens during a call ends that call with a result naming it (the action
// does not wait for the page); one that opens between calls (a timer) is held the same way. While
// one is open the tab takes no other built-in tool or page tool (`dialog_open`, naming it; the
// page could not run them), and one left unanswered for the `dialogTimeoutMs` setting (60 s) is
// dismissed, which the tab's next result says. Only tabs the debugger is attached to are heard,
// so a dialog in a tab no client acts on is the person's, shown by Chromium and left to them; so
// is one whose tab the client lets go.

import { Refusal } from "../base/protocol.js";
import { settings } from "../base/settings.js";
import { mainFrameOf, onTabEvent, onTabForgotten, send } from "./devtools/debugger.js";
import { ActionError, Code, invalidArguments } from "../base/errors.js";

/** tab id -> {open: {type, message, timer, answer} | null, last: how the last one closed, notes: [], waiters} */
const tabs = new Map();

function stateOf(tabId) {
  let state = tabs.get(tabId);
  if (!state) {
    state = { open: null, last: null, notes: [], waiters: new Set() };
    tabs.set(tabId, state);
  }
  return state;
}

function describe(dialog) {
  // A frame's dialog is the frame's page speaking, not the tab's: named, so the client can tell.
  const where = dialog.frame ? ` in a frame from ${dialog.frame}` : "";
  return `"${dialog.type}" dialog with message "${dialog.message}"${where}`;
}

function closed(state, how) {
  clearTimeout(state.open.timer);
  state.last = `the ${describe(state.open)} was ${how}`;
  state.open = null;
}

/**
 * A dialog opened in the tab: {type, message, frame?} (`frame`: the origin of the frame it came
 * from, where that is not the tab's page), and `answer({accept, promptText?})`, which closes it in
 * the page (it rejects with a message saying "no dialog" when the page closed it already).
 */
export function dialogOpened(tabId, params, answer) {
  const state = stateOf(tabId);
  clearTimeout(state.open?.timer);
  const dialog = { type: params.type, message: params.message, frame: params.frame ?? null, answer };
  const timeoutMs = settings().dialogTimeoutMs;
  dialog.timer = setTimeout(() => expire(tabId, dialog, timeoutMs), timeoutMs);
  state.open = dialog;
  for (const waiter of [...state.waiters]) waiter(dialog);
}

async function expire(tabId, dialog, timeoutMs) {
  const state = tabs.get(tabId);
  if (state?.open !== dialog) return;
  const how = `dismissed after ${timeoutMs / 1000} s without an answer`;
  closed(state, how);
  state.notes.push(`${describe(dialog)}: ${how}`);
  await dialog.answer({ accept: false }).catch(() => {});
}

/**
 * A dialog of the tab that the page driver could not hold for the client ({type, message,
 * frame?}), dismissed in the page at once: the tab's next result says so, and `why`.
 */
export function dialogNotHeld(tabId, params, why) {
  const state = stateOf(tabId);
  const dialog = { type: params.type, message: params.message, frame: params.frame ?? null };
  state.last = `the ${describe(dialog)} was dismissed at once, not held: ${why}`;
  state.notes.push(`${describe(dialog)}: dismissed at once, not held for browser_handle_dialog: ${why}`);
}

/** Closed by someone else: the person at a visible dialog, or the page going away. */
export function dialogClosed(tabId) {
  if (tabs.get(tabId)?.open) closed(tabs.get(tabId), "closed in the browser");
}

/** The tools let go of the tab (released or closed): a dialog still open there is not theirs. */
export function forgetDialogs(tabId) {
  clearTimeout(tabs.get(tabId)?.open?.timer);
  tabs.delete(tabId);
}

const answerInDevTools = (tabId) => (params) => send(tabId, "Page.handleJavaScriptDialog", params);

/** The origin of the frame a DevTools dialog event names, or null where it is the tab's page. */
function devToolsFrame(tabId, { frameId, url }) {
  if (!frameId || frameId === mainFrameOf(tabId)) return null;
  try {
    return new URL(url).origin;
  } catch {
    return "a frame of unknown address";
  }
}

// Chromium tells the page's own session of every frame's dialog, out-of-process frames' included.
onTabEvent((tabId, method, params) => {
  if (method === "Page.javascriptDialogOpening") {
    dialogOpened(tabId, { ...params, frame: devToolsFrame(tabId, params) }, answerInDevTools(tabId));
  } else if (method === "Page.javascriptDialogClosed") dialogClosed(tabId);
});

// Detached (released) or closed: a dialog still open there is the person's now.
onTabForgotten(forgetDialogs);

/** The modal state line Playwright MCP gives an open dialog. */
export function modalLine(dialog) {
  return `- [${describe(dialog)}]: can be handled by browser_handle_dialog`;
}

/** What happened to the tab's dialogs since its last result (dismissed for want of an answer). */
export function takeDialogNotes(tabId) {
  return (tabs.get(tabId)?.notes.splice(0) ?? []).map((note) => `- [${note}]`);
}

/** The dialog_open error {code, message} for `what` in the tab while a dialog waits there, else null. */
export function dialogOpenError(tabId, what) {
  const dialog = tabs.get(tabId)?.open;
  if (!dialog) return null;
  return {
    code: Refusal.DIALOG_OPEN,
    message:
      `${what} cannot run in tab ${tabId}: a ${describe(dialog)} is open there; answer it with` +
      " browser_handle_dialog (accept true or false, promptText for a prompt) first",
  };
}

/** Throws dialog_open while a dialog waits in the tab: nothing else can run there until it is answered. */
export function refuseWhileDialogOpen(tabId, action) {
  const refusal = dialogOpenError(tabId, `browser_${action}`);
  if (refusal) throw new ActionError(refusal.code, refusal.message);
}

/**
 * Resolve with what `task` resolves to, or, if a dialog opens in the tab first (the task then
 * waits for it to be answered), with the open dialog: `{dialog}`. The task runs on unawaited.
 */
export function untilDialog(tabId, task) {
  const state = stateOf(tabId);
  let waiter;
  const dialogOpened = new Promise((resolve) => {
    waiter = (dialog) => resolve({ dialog });
    state.waiters.add(waiter);
  });
  task.catch(() => {}); // once a dialog ends the call, nobody awaits the task's own failure
  return Promise.race([task.then((value) => ({ value })), dialogOpened]).finally(() => state.waiters.delete(waiter));
}

/** browser_handle_dialog {accept, promptText?}: answer the tab's open dialog; the line saying how. */
export async function handleDialog(tabId, args) {
  if (typeof args.accept !== "boolean") throw invalidArguments("accept must be true or false");
  if (args.promptText !== undefined && typeof args.promptText !== "string") {
    throw invalidArguments("promptText must be a string");
  }
  const state = tabs.get(tabId);
  const dialog = state?.open;
  if (!dialog) {
    const earlier = state?.last ? `: ${state.last}` : "";
    throw new ActionError(Code.NO_DIALOG, `no dialog is open in tab ${tabId}${earlier}`);
  }
  const params = { accept: args.accept };
  if (args.promptText !== undefined) params.promptText = args.promptText;
  closed(state, "answered already");
  await dialog.answer(params).catch((error) => {
    // Closed in between by the person (a visible dialog) or by the page going away.
    if (/no dialog/i.test(error.message))
      throw new ActionError(Code.NO_DIALOG, `the ${describe(dialog)} closed before the answer came`);
    throw error;
  });
  const typed = dialog.type === "prompt" && args.accept && args.promptText !== undefined;
  return `${args.accept ? "Accepted" : "Dismissed"} the ${describe(dialog)}${typed ? `, answering "${args.promptText}"` : ""}`;
}

/** The page driver's dialog members (contract.js), the same for every driver: each driver hears
 * its browser's dialogs its own way and reports them through dialogOpened. browser_handle_dialog's
 * member, handleDialog, is found here by its name, as every tool's is in a driver's modules. */
export const dialogSeam = Object.freeze({
  modalLine,
  refuseWhileDialogOpen,
  takeDialogNotes,
  untilDialog,
});
