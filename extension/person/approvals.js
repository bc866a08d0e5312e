// Approvals: what may run in a page, asked of the person before a broker's request runs. A call
// they must allow (a page tool declaring destructiveHint, browser_evaluate, browser_file_upload,
// browser_drop of files, or under the stricter policy every tool not declared read-only) waits for
// their answer in an
// approval window, an extension page naming the agent and the credential it connected with, the
// tool, its arguments whole (a function's source as written, an upload's files with their sizes),
// and the tab's site and title. The broker hears that the
// call waits (approvalPending), so it does not time the call out meanwhile. Deny, closing the
// window, or no answer within the approval time fails the call with `not_approved`; "always allow"
// adds that credential on that site to the options' list, and never covers an upload: each asks,
// its files listed with the flagged ones first. Nor does it cover deleting the person's history or
// bookmarks (record_deletions.js): each deletion asks, showing what goes, and while one waits (or
// runs) the browser takes no other (`records_busy`), so no window can stand in for another. Read-only
// tools never ask, but for the person's cookies: the storage tools (actions/storage_sites.js) ask
// before every change and every read of cookies, whatever the policy, naming the site and each
// cookie or key, never with "Always allow", and with a button of its own when a read would give
// HttpOnly values.
//
// An approval is for what then runs: the tab takes no other call while one waits for the person or
// runs with their approval (`tab_busy`, as the broker refuses them too), and the approved call runs
// only if the tab still shows the document the person saw (documents.js); else `not_approved`.
// Arguments too large to show whole (over 1 MiB) are refused, never shown in part.
//
// Waiting approvals live only in this worker: if it stops, its links close and the broker fails
// their calls at once, so nothing is left to rebuild.

import { FromBroker, Refusal, ToBroker } from "../base/protocol.js";
import { ownerKey } from "../base/owner_key.js";
import { reply } from "../link/links.js";
import { toolsOf } from "../page_tools/page_tools.js";
import { isPaused, pausedError } from "./person.js";
import { RECORD_REQUESTS, notShared } from "../tabs/records.js";
import { DELETION_REQUESTS, deletionOf } from "../tabs/record_deletions.js";
import { documentIn } from "../tabs/documents.js";
import { frameOfTool } from "../page_tools/frame_tools.js";
import { sessionCredential, sessionName } from "../tabs/sessions.js";
import { Policy, alwaysAllowed, settings, settingsReady, updateSettings } from "../base/settings.js";
import { uploadedFiles } from "../actions/uploads.js";
import { toolNamed } from "../actions/tools.js";
import { describeStorage, grantStorage, isStorageAction } from "../actions/storage_sites.js";
import { ask, notApproved } from "./approval_window.js";

// The browser's own requests (browser_wide.js) as the approval window names them, and which only read.
const BROWSER_REQUESTS = Object.freeze({
  listWindows: { tool: "browser_windows list", readOnly: true },
  focusWindow: { tool: "browser_windows focus", readOnly: false },
  closeWindow: { tool: "browser_windows close", readOnly: false },
  resizeWindow: { tool: "browser_resize", readOnly: false },
  searchHistory: { tool: "browser_history_search", readOnly: true },
  searchBookmarks: { tool: "browser_bookmarks search", readOnly: true },
  createBookmark: { tool: "browser_bookmarks create", readOnly: false },
  bookmarkTree: { tool: "browser_bookmarks tree", readOnly: true },
  deleteHistory: { tool: "browser_history_delete", readOnly: false },
  deleteBookmark: { tool: "browser_bookmarks delete", readOnly: false },
});
// Far above any function or arguments a person could read; a call past it is refused, not cut.
const MAX_SHOWN = 1024 * 1024;

/** tab id -> how many calls there wait for the person or run with their approval */
const busyTabs = new Map();
/** How many deletions of the person's records wait for them or run with their approval: 0 or 1. */
let deletionsHeld = 0;

/**
 * What the window shows of a call's arguments: a function's source as written, the files an
 * upload sends (listed on their own, by name and size), the rest as JSON.
 */
/** Whether the call sends the person's files to the page: browser_file_upload, browser_drop with paths. */
function sendsFiles(message) {
  if (message.type !== FromBroker.BROWSER_ACTION) return false;
  if (message.action === "file_upload") return true;
  return message.action === "drop" && Array.isArray(message.args?.paths) && message.args.paths.length > 0;
}

function shownArguments(message, deletion, storage) {
  const { args } = message;
  if (deletion) return { code: deletion.shown, args: JSON.stringify(args, null, 2), codeLabel: "Deletes" };
  if (storage) {
    return { code: storage.shown, args: storage.args ?? JSON.stringify(args, null, 2), codeLabel: storage.label };
  }
  if (message.type === FromBroker.BROWSER_ACTION && typeof args.function === "string") {
    const { function: code, ...rest } = args;
    return { code, args: Object.keys(rest).length ? JSON.stringify(rest, null, 2) : "" };
  }
  if (sendsFiles(message)) {
    const { files, paths, ...rest } = args;
    // Flagged files first (hidden, outside the project folder, large, through a symlink): one
    // among many is not to be missed.
    const described = uploadedFiles({ files, paths });
    const ordered = [
      ...described.filter((file) => file.flags.length),
      ...described.filter((file) => !file.flags.length),
    ];
    const listed = ordered.map((file) => {
      const line = `${file.name}, ${file.size}: ${file.path}`;
      return file.flags.length ? `⚠ ${file.flags.join(", ")}: ${line}` : line;
    });
    const code = listed.join("\n") || "(none: the file chooser is cancelled)";
    return { code, args: Object.keys(rest).length ? JSON.stringify(rest, null, 2) : "", codeLabel: "Files" };
  }
  return { code: "", args: JSON.stringify(args, null, 2) ?? "" };
}

/** What the window asks of the person before their own actions in a tab are recorded for an agent. */
function recordingConsent(agent, place) {
  const code =
    `${agent} asks to record what you do in the tab "${place.title || place.url}" (${place.url}):` +
    " your clicks, typing, choices and key presses, and the pages you open, written as Playwright code." +
    " What you type into password fields is left out. The toolbar shows REC while it records;" +
    " the popup's Stop ends it.";
  return { code, args: "", codeLabel: "Record your actions" };
}

/**
 * What a tool's annotations say of it for the approval policy: Chromium's `consequentialHint`
 * counts as `destructiveHint`, and a tool that claims to read only and to destroy too destroys.
 */
export function hintsOf(annotations) {
  const destructive = annotations?.destructiveHint === true || annotations?.consequentialHint === true;
  return { destructive, readOnly: annotations?.readOnlyHint === true && !destructive };
}

function needsApproval(annotations, origin, credential, everyTime) {
  const { approvalPolicy } = settings();
  const { destructive, readOnly } = hintsOf(annotations);
  if (approvalPolicy === Policy.NEVER || readOnly) return false;
  // "Always allow", whatever it was given for, never covers the person's files nor deleting their
  // records: each upload and each deletion asks.
  if (everyTime) return true;
  if (alwaysAllowed(credential, origin)) return false;
  if (approvalPolicy === Policy.NOT_READ_ONLY) return true;
  return destructive;
}

/** The tool a request names and what it declares about itself; an error when it may not run at all. */
async function describe(message) {
  if (message.type === FromBroker.BROWSER_REQUEST) {
    // Nobody is asked to approve what the person's switch refuses anyway.
    const refused = Object.hasOwn(RECORD_REQUESTS, message.request) ? await notShared() : null;
    if (refused) return { refused };
    if (Object.hasOwn(DELETION_REQUESTS, message.request)) {
      // Nor to approve deleting what is not there, or may not go: the person is asked about what is.
      try {
        const deletion = await deletionOf(message.request, message.args);
        const { tool } = BROWSER_REQUESTS[message.request];
        return { name: tool, annotations: { destructiveHint: true }, wholeBrowser: true, deletion };
      } catch (error) {
        return { refused: { code: error?.code ?? "request_failed", message: String(error?.message ?? error) } };
      }
    }
    // An unknown request asks nothing: runBrowserRequest answers it with what is wrong.
    const known = Object.hasOwn(BROWSER_REQUESTS, message.request) ? BROWSER_REQUESTS[message.request] : null;
    return {
      name: known?.tool ?? String(message.request),
      annotations: { readOnlyHint: known?.readOnly ?? true },
      wholeBrowser: true,
    };
  }
  if (message.type !== FromBroker.BROWSER_ACTION) {
    const tool = toolsOf(message.tabId).find((t) => t.name === message.toolName);
    return { name: message.toolName, annotations: tool?.annotations };
  }
  if (message.action === "evaluate" && !settings().allowEvaluate) {
    return {
      refused: {
        code: "not_supported",
        message: "the person turned browser_evaluate off in this browser (the browser-mcp extension's options)",
      },
    };
  }
  // Which built-in tools only read, and which are asked about as a page tool declaring
  // destructiveHint is (JavaScript of the agent's choosing, the person's files sent to the site), is
  // the extension's own declaration's: the broker knows it too, but the person's safeguard takes no
  // broker's word for it.
  const tool = toolNamed(message.action);
  // Recording the person's own actions needs their word every time, whatever the policy.
  if (message.action === "start_recording")
    return { name: "browser_start_recording", annotations: {}, recording: true };
  // browser_drop destroys only when it sends files: typed data alone is as typing is.
  const destructive = tool?.destructive && (message.action !== "drop" || sendsFiles(message));
  const annotations = destructive ? { destructiveHint: true } : { readOnlyHint: tool?.readOnly ?? false };
  return { name: `browser_${message.action}`, annotations };
}

function busyError(tabId) {
  return {
    code: Refusal.TAB_BUSY,
    message:
      `cannot act in tab ${tabId} now: an approval is waiting there (another call waits for the person's` +
      " approval, or runs with it); the tab takes no other action until that call ends",
  };
}

function deletionBusyError(tool) {
  return {
    code: "records_busy",
    message:
      `${tool} was not asked: another deletion of the person's history or bookmarks waits for their approval` +
      " (or runs with it); the browser takes one at a time, so ask again once it has ended",
  };
}

function holdTab(tabId) {
  busyTabs.set(tabId, (busyTabs.get(tabId) ?? 0) + 1);
}

/** The approved call ended (`admit`'s `approved`): its tab takes other calls again. */
export function approvalEnded(approved) {
  if (approved?.bound) deletionsHeld -= 1;
  if (!Number.isInteger(approved?.tabId)) return;
  const left = (busyTabs.get(approved.tabId) ?? 1) - 1;
  if (left > 0) busyTabs.set(approved.tabId, left);
  else busyTabs.delete(approved.tabId);
}

/**
 * Whether a broker's callTool, browserAction or browserRequest may run now: `{error}` when it may
 * not, else `{approved}`, where `approved` is what the person approved (the tab's document, the
 * tool and the site; `pageChanged` checks it right before the call runs, and `approvalEnded`
 * frees the tab once it has run), or undefined when no approval was asked. Waits for the person
 * when the call needs their approval.
 * @param {import("../link/frames.js").CallToolFrame | import("../link/frames.js").BrowserActionFrame
 *   | import("../link/frames.js").BrowserRequestFrame} message
 */
export async function admit(link, message) {
  if (isPaused()) return { error: pausedError() };
  if (busyTabs.has(message.tabId)) return { error: busyError(message.tabId) };
  await settingsReady;
  const { name, annotations, refused, wholeBrowser, deletion, recording } = await describe(message);
  if (refused) return { error: refused };
  // A frame's tool is approved for the frame's document and site.
  const frame = message.type === FromBroker.CALL_TOOL ? frameOfTool(message.tabId, message.toolName) : null;
  const place = wholeBrowser ? null : await documentIn(message.tabId, frame?.frameId ?? 0);
  // A request without a proper tab is answered by the call itself, which says what is wrong.
  if (!wholeBrowser && !place) return {};
  const stored = message.type === FromBroker.BROWSER_ACTION && isStorageAction(message.action);
  const storage = stored ? await describeStorage(link.port, message.sessionId, message, place) : null;
  if (storage?.refused) return { error: storage.refused };
  if (storage && !storage.ask) {
    grantStorage(message.args, storage.grant);
    return {};
  }
  const origin = place?.origin ?? "";
  const credential = sessionCredential(link.port, message.sessionId);
  const upload = sendsFiles(message);
  if (!storage && !recording && !needsApproval(annotations, origin, credential, upload || Boolean(deletion))) {
    return {};
  }
  const site = origin || place?.url || "the whole browser";
  const {
    code,
    args,
    codeLabel = "Function",
  } = recording
    ? recordingConsent(sessionName(link.port, message.sessionId), place)
    : shownArguments(message, deletion, storage);
  if (code.length + args.length > MAX_SHOWN) {
    const size = Math.ceil((code.length + args.length) / 1024);
    return {
      error: notApproved(
        { tool: name, site },
        `its arguments (${size} KiB) are over the 1 MiB an approval window shows whole`,
      ),
    };
  }
  if (deletion && deletionsHeld) return { error: deletionBusyError(name) };
  const approved = place ? { ...place, tool: name } : { tool: name, bound: deletion?.bound };
  if (place) holdTab(place.tabId);
  if (deletion) deletionsHeld += 1;
  const timeoutMs = settings().approvalTimeoutMs;
  link.send(reply(ToBroker.APPROVAL_PENDING, message, { callId: message.callId, timeout: timeoutMs / 1000 }));
  const details = {
    agent: sessionName(link.port, message.sessionId),
    credential,
    tool: name,
    // A page tool's name is the page's choice; a built-in tool's is ours.
    toolByPage: message.type === FromBroker.CALL_TOOL,
    code,
    codeLabel,
    args,
    site,
    url: place?.url ?? "",
    title: place?.title ?? "",
    // "Always allow" is for one credential on one site; a request of the whole browser, of a
    // session whose credential the broker did not name, or an upload, is allowed once at a time.
    // Nor is a request of the person's cookies and site storage.
    perSite: Boolean(origin && credential && !upload && !storage && !recording),
    storage: Boolean(storage),
    // A read that would give HttpOnly cookies' values offers them on a button of its own.
    httpOnly: Boolean(storage?.httpOnly),
    timeoutMs,
  };
  const answer = await ask(details, ownerKey(link.port, message.sessionId), `${link.port}/${message.callId}`);
  if (answer === "always" && details.perSite) {
    await updateSettings({ alwaysAllow: [...settings().alwaysAllow, { credential, origin }] });
  }
  const allowed = answer === "once" || answer === "always" || answer === "httponly";
  const outcome = allowed ? (isPaused() ? pausedError() : null) : answer;
  if (outcome) {
    approvalEnded(approved);
    return { error: outcome };
  }
  if (storage) grantStorage(message.args, { ...storage.grant, httpOnly: answer === "httponly" });
  return { approved };
}
