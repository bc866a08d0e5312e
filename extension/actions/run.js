// One browserAction from a broker, start to answer: which tool it names, run on its tab after the
// tab's earlier actions, and a toolResult that always goes back exactly once, with an MCP
// CallToolResult or an error {code, message} (errors.js) whatever the request held.
//
// Input actions (click, type...) answer with the page as it is afterwards, as Playwright MCP does;
// reading tools (console, network, evaluate, screenshot) answer with what they read: how each
// answers is its declaration's (tools.js `answer`), so a tool needs code here only when it is
// `shared`. The page's part is the page driver's (driver.js): the DevTools one in Chromium, the
// WebExtension one in Firefox, each a member named after the tool (contract.js); a tool the
// declaration does not give the driver is refused with not_supported before anything runs.

import { ToBroker } from "../base/protocol.js";
import { ownerKey } from "../base/owner_key.js";
import { reply, sendTo } from "../link/links.js";
import { isScriptable } from "../page_tools/page_bridges.js";
import { pageChanged } from "../tabs/documents.js";
import { driver } from "./driver.js";
import { ActionError, Code, calledOff, invalidArguments, sleep, withTimeout } from "../base/errors.js";
import { sections, textResult } from "./results.js";
import { watchingNewTabs } from "../tabs/new_tabs.js";
import { firstPageOf } from "../tabs/first_pages.js";
import { describeDownload, downloadsOf } from "./downloads.js";
import { memberOf } from "./contract.js";
import { toolNamed } from "./tools.js";
import { captionAction } from "./video.js";

// Below the broker's default 30 s deadline, so that a slow action still gets its own answer.
const ACTION_TIMEOUT_MS = 28_000;
const RESTRICTED_LOAD_MS = 15_000;
// Pages the debugger may act in beside http(s) ones.
const OPEN_PAGE = /^(about:blank|data:)/;

/** The page's report, or null when it moved on while it was read: it has then landed (or given up). */
async function reportUnlessMoved(tabId, options) {
  try {
    return await driver.pageReport(tabId, options);
  } catch (error) {
    if (error.code !== Code.NAVIGATED) throw error;
  }
  await driver.waitForReady(tabId).catch(() => {});
  return null;
}

/** The page after an action; a page that is still moving on gets a moment and a second look. */
async function pageAfter(tabId, result = []) {
  const report = await reportUnlessMoved(tabId, { result });
  if (report) return report;
  try {
    return await driver.pageReport(tabId, { result });
  } catch {
    const page = ["- The page is still loading: call browser_snapshot to see it"];
    return textResult(sections(["Result", result], ["Page", page]));
  }
}

// The driver's members are looked up as they are called, so that both drivers share these.
// Input a driver makes up in the page rather than sends as a person's says so in its answer.
const inputNotes = () => (driver.inputNote ? [driver.inputNote] : []);

const memberFor = (tool) => driver[memberOf(tool.name)];

async function snapshot(tabId, args) {
  if (args.depth !== undefined && !(Number.isInteger(args.depth) && args.depth >= 0)) {
    throw invalidArguments("depth must be a whole number, 0 or more");
  }
  // As in Playwright MCP, depth 0 sets no limit.
  const depth = args.depth || undefined;
  const boxes = args.boxes === true;
  if (args.target !== undefined) {
    const root = await driver.elementFor(tabId, args.target);
    return driver.pageReport(tabId, { root, target: args.target, depth, boxes });
  }
  // A page that moves on while it is read (a redirect, a page that navigates by itself) is read
  // again once it has landed; an element of a ref is gone with its page, so not that. A tab just
  // opened is waited for before (tabs/first_pages.js).
  return (await reportUnlessMoved(tabId, { depth, boxes })) ?? driver.pageReport(tabId, { depth, boxes });
}

/** How a tool answers, by its declaration's `answer`: (tool, tabId, args, signal) -> its result. */
const ANSWERS = {
  report: (tool, tabId, args) => snapshot(tabId, args),
  async input(tool, tabId, args) {
    await driver.withNavigationWatch(tabId, () => memberFor(tool)(tabId, args));
    return pageAfter(tabId, inputNotes());
  },
  async moves(tool, tabId, args) {
    await memberFor(tool)(tabId, args);
    return pageAfter(tabId);
  },
  own: (tool, tabId, args, signal) => memberFor(tool)(tabId, args, signal),
  shared: (tool, tabId, args, signal) => SHARED[tool.name](tabId, args, signal),
};

/** The tools whose answer is code of their own (`shared`), each calling its driver's member. */
const SHARED = {
  wait_for: async (tabId, args, signal) => pageAfter(tabId, [await driver.waitFor(tabId, args, signal)]),
  async console_messages(tabId, args) {
    await driver.prepare(tabId); // the messages logged before come as it attaches
    return textResult(sections(["Result", [await driver.consoleMessages(tabId, args)]]));
  },
  async network_requests(tabId, args) {
    await driver.prepare(tabId);
    return textResult(
      sections(["Result", [await driver.networkRequests(tabId, args)]], ["Downloads", await downloadsOf(tabId)]),
    );
  },
  async file_upload(tabId, args) {
    let said;
    await driver.withNavigationWatch(tabId, async () => (said = await driver.fileUpload(tabId, args)));
    return pageAfter(tabId, [said, ...inputNotes()]);
  },
  async drop(tabId, args) {
    let said;
    await driver.withNavigationWatch(tabId, async () => (said = await driver.drop(tabId, args)));
    return pageAfter(tabId, [said]);
  },
};

/**
 * A tab showing a page no extension may touch (chrome://, the Web Store) can still be sent
 * elsewhere: through the tabs API, which needs no debugger, without making it the active tab.
 */
async function leaveRestrictedPage(tabId, args) {
  if (typeof args.url !== "string" || !/^https?:/.test(args.url)) {
    throw invalidArguments("from a browser page, only an http or https address can be opened");
  }
  await chrome.tabs.update(tabId, { url: args.url });
  const deadline = Date.now() + RESTRICTED_LOAD_MS;
  for (;;) {
    const tab = await chrome.tabs.get(tabId);
    if (tab.status === "complete" && isScriptable(tab.url)) return;
    if (Date.now() > deadline) throw new ActionError(Code.TIMEOUT, `${args.url} did not load within 15 s`);
    await sleep(100);
  }
}

async function stillApproved(approved) {
  const changed = await pageChanged(approved);
  if (changed) throw new ActionError(changed.code, changed.message);
}

/**
 * Throws not_approved unless the tab still shows the document the person approved the action in;
 * looked at again once attached, so that nothing slow stands between the last look and the action.
 */
async function checkApproved(tabId, url, approved) {
  await stillApproved(approved);
  if (isScriptable(url) || OPEN_PAGE.test(url)) {
    await driver.prepare(tabId);
    await stillApproved(approved);
  }
}

async function run(tabId, tool, args, owner, approved, signal, handler) {
  const action = tool.name;
  // Its turn came after the broker called it off: nothing of it happens.
  if (signal?.aborted) throw calledOff();
  // A navigation replaces the page a tab was opened on, so it need not wait for it.
  const waited = action !== "navigate" && (await firstPageOf(tabId, signal));
  if (signal?.aborted) throw calledOff();
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (!tab) throw new ActionError(Code.ACTION_FAILED, `tab ${tabId} does not exist`);
  if (owner) driver.ownTab(tabId, owner);
  const url = tab.url || tab.pendingUrl || "";
  // A tab just opened is acted in once loaded, as Playwright MCP's new tab is (it waits for its load).
  if (waited && isScriptable(url)) await driver.waitForReady(tabId).catch(() => {});
  if (approved) await checkApproved(tabId, url, approved);
  if (!isScriptable(url) && !OPEN_PAGE.test(url)) {
    if (action !== "navigate") {
      throw new ActionError(Code.ACTION_FAILED, `the tab shows ${url}, a page the browser keeps extensions out of`);
    }
    await leaveRestrictedPage(tabId, args);
    return pageAfter(tabId);
  }
  captionAction(tabId, tool, args); // on the tab's video, if its actions are shown
  try {
    const { result, opened } = await watchingNewTabs(tabId, () =>
      driver.watchingDownloads(tabId, () => handler(tabId, args, signal), { clicked: tool.focuses }),
    );
    return withAftermath(result.result, [
      [
        "New tabs",
        opened.map(({ id, url }) => `- Tab ${id}: ${url || "about:blank"} (yours; name it with tab: ${id})`),
      ],
      ["Downloads", result.downloads.map(describeDownload)],
    ]);
  } finally {
    await driver.afterAction(tabId);
  }
}

/**
 * The call's result, telling of the dialogs dismissed for want of an answer since the tab's last
 * one, and of a file chooser waiting for browser_file_upload. Taken here, not where the page is
 * reported, so that an action a dialog cut short (which runs on once it is answered, its result
 * unread) takes nothing.
 */
function withModalNotes(tabId, result) {
  const notes = [...driver.takeDialogNotes(tabId), ...driver.fileChooserLines(tabId)];
  if (!notes.length) return result;
  const said = sections(["Modal state", notes]);
  const [first, ...rest] = result.content;
  if (first?.type !== "text") return { ...result, content: [{ type: "text", text: said }, ...result.content] };
  return { ...result, content: [{ ...first, text: `${first.text}\n${said}` }, ...rest] };
}

/** The answer of a call that a dialog in its page cut short: the dialog, left open for the client. */
async function dialogResult(tabId, dialog) {
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  const page = tab?.url ? [`- Page URL: ${tab.url}`] : [];
  return textResult(sections(["Page", page], ["Modal state", [driver.modalLine(dialog)]]));
}

/**
 * Run the action after the tab's earlier ones, ending it early if the page opens a dialog. An open
 * dialog holds the tab's queue (the page waits for it, and so does the action that opened it), so
 * browser_handle_dialog answers it at once and only then waits its turn to report the page.
 */
async function perform(tabId, tool, args, owner, approved, signal) {
  if (!tool.drivers.includes(driver.name)) {
    throw new ActionError(Code.NOT_SUPPORTED, `${driver.browser}'s extension cannot do browser_${tool.name} yet`);
  }
  let handler = (...called) => ANSWERS[tool.answer](tool, ...called);
  if (tool.answer === "dialog") {
    const answered = await memberFor(tool)(tabId, args);
    handler = () => pageAfter(tabId, [answered]);
  } else {
    driver.refuseWhileDialogOpen(tabId, tool.name);
  }
  const ended = await driver.untilDialog(
    tabId,
    driver.serialized(tabId, () => run(tabId, tool, args, owner, approved, signal, handler)),
  );
  return withModalNotes(tabId, ended.dialog ? await dialogResult(tabId, ended.dialog) : ended.value);
}

/**
 * An action's result with what else it did: the tabs its page opened meanwhile (they are the
 * client's, as the page is) and the downloads it started.
 */
function withAftermath(result, parts) {
  const section = sections(...parts);
  if (!section) return result;
  const [first, ...rest] = result.content;
  if (first?.type === "text") return { ...result, content: [{ ...first, text: `${first.text}\n${section}` }, ...rest] };
  return { ...result, content: [...result.content, { type: "text", text: section }] };
}

/**
 * `performing`, or a cancelled ActionError as soon as `signal` fires: the broker answered its
 * client already. A page the action is loading stops loading; a wait stops waiting by itself.
 */
function untilCalledOff(tabId, tool, performing, signal) {
  if (!signal) return performing;
  const stopped = new Promise((_, reject) => {
    signal.addEventListener(
      "abort",
      () => {
        if (tool.answer === "moves") driver.stopLoading(tabId).catch(() => {});
        reject(calledOff());
      },
      { once: true },
    );
  });
  // What the action ends with after it was called off is nobody's.
  performing.catch(() => {});
  return Promise.race([performing, stopped]);
}

function errorOf(error) {
  if (error instanceof ActionError) return { code: error.code, message: error.message };
  return { code: Code.ACTION_FAILED, message: error?.message ? String(error.message) : String(error) };
}

/**
 * Carry out a broker's browserAction; the toolResult to send back. `approved`, when the person
 * approved it: the document they saw, the only one it may run in. A frame that cannot be carried
 * out as sent (its record's `invalid`) is the caller's to answer (broker_requests.js).
 * @param {import("../link/frames.js").BrowserActionFrame} frame
 */
export async function runBrowserAction(port, frame, approved, signal) {
  const answer = reply(ToBroker.TOOL_RESULT, frame, { callId: frame.callId });
  try {
    const { tabId, action, args } = frame;
    const tool = toolNamed(action);
    const owner = frame.sessionId ? ownerKey(port, frame.sessionId) : null;
    // A tool that waits for the person (tools.js `waitsForPerson`) tells the broker, which holds
    // its deadline back as for an approval (and its tab from other calls meanwhile).
    const personMs = tool.waitsForPerson ?? 0;
    if (personMs) {
      sendTo(port, reply(ToBroker.APPROVAL_PENDING, frame, { callId: frame.callId, timeout: personMs / 1000 }));
    }
    const { page, ...result } = await withTimeout(
      untilCalledOff(tabId, tool, perform(tabId, tool, args, owner, approved, signal), signal),
      ACTION_TIMEOUT_MS + personMs,
      `browser_${action}`,
    );
    return { ...answer, result, page: page ?? null, error: null };
  } catch (error) {
    return { ...answer, error: errorOf(error) };
  }
}
