// The page driver's contract: every member a page driver has, named once, here. The actions layer
// (run.js, driver.js) asks a driver for nothing else, and both drivers (devtools/driver.js,
// webext/driver.js) are checked against it without a browser (tests/js/page_drivers.mjs): a
// driver that lacks a member, has one more, or answers not_supported for a tool the declaration
// (tools.js) says it carries out fails the check.
//
// The members are of two kinds. The driver's own (PAGE_DRIVER_MEMBERS) every driver has. A tool's
// member is its wire name in camelCase (`mouse_wheel`: `mouseWheel`), the one rule that finds it:
// a driver has the members of the tools it carries out and no others, so one it lacks is answered
// not_supported by the actions layer from the declaration, never by a hand-written refusal. A
// driver gathers its tools' members from its modules by that rule (toolMembers), so adding a tool
// is a line in tools.js and a function in one module of each driver that carries it out.
//
// It imports only the declaration, so that Node reads it without a browser.

import { TOOLS, toolsOf } from "./tools.js";

/**
 * The page a tool answers with, or a result with no page.
 * @typedef {{content: object[], page?: {yaml: string} | null, isError?: boolean}} ToolResult
 */

/**
 * A tool's member: it carries out the tool named in tools.js (its wire name in camelCase), with the
 * call's arguments (those beside `tab`), and answers as the tool's `answer` says: `input` and
 * `moves` with nothing (run.js answers with the page), `own` with the tool's result, `shared` and
 * `dialog` with what run.js's code of the tool makes of it (a line, a listing).
 * @typedef {(tabId: number, args: object, signal?: AbortSignal) => Promise<ToolResult | string | void>} ToolMember
 */

/**
 * A page driver: how the built-in tools reach a browser's pages. Its own members are these; beside
 * them it has the member of each tool it carries out (ToolMember), and no other.
 * @typedef {PageDriverOwn & Object<string, ToolMember>} PageDriver
 */

/**
 * The members every page driver has.
 * @typedef {object} PageDriverOwn
 * @property {string} name The driver's name, as `connected` announces it and tools.js's `drivers` name it.
 * @property {readonly string[]} actions The tools it carries out (tools.js), announced in `connected.actions`.
 * @property {string} browser The browser a tool it lacks is refused in the name of ("Firefox's extension cannot ...").
 * @property {() => void} listen Hear the browser's events for the tabs the tools act on (the worker's first turn).
 * @property {(tabId: number) => void} tabGone Forget all it kept of a closed tab.
 * @property {(tabId: number) => Promise<void>} releaseTab Let go of a tab its client released, after its running action.
 * @property {(port: number, ended: (sessionId: string) => boolean) => Promise<void>} releaseSessions Let go of the tabs last used by the ended sessions of the broker on `port`.
 * @property {(tabId: number) => Promise<void>} prepare Make the tab ready to be acted in (attach, start keeping its requests).
 * @property {(tabId: number, owner: string) => void} ownTab Note the `port/sessionId` the tab's actions now run for.
 * @property {<T>(tabId: number, task: () => Promise<T>) => Promise<T>} serialized Run `task` after the tab's earlier actions.
 * @property {(tabId: number) => Promise<void>} stopLoading Stop the page the tab is loading (an action called off).
 * @property {(tabId: number) => Promise<void>} afterAction Let go of what one action held in the page.
 * @property {string | null} inputNote The line an input tool's answer adds about its input (synthetic), or null.
 * @property {(tabId: number, options?: {root?: unknown, target?: string, depth?: number, result?: string[]}) => Promise<ToolResult>} pageReport The page as a tool answers with it: its snapshot, sections and `page`; throws `navigated` when the page moved on while it was read.
 * @property {(tabId: number) => Promise<void>} waitForReady Wait until the tab's page is ready to use.
 * @property {(tabId: number, act: () => Promise<unknown>) => Promise<void>} withNavigationWatch Run `act`, then wait for a navigation it set off to arrive.
 * @property {<T>(tabId: number, task: () => Promise<T>, options?: {clicked?: boolean}) => Promise<{result: T, downloads: object[]}>} watchingDownloads Run `task`, with the downloads it started.
 * @property {(tabId: number, target: string) => Promise<unknown>} elementFor The element a `target` (ref or selector) names, checked to be there; a snapshot's root.
 * @property {(tabId: number) => string[]} fileChooserLines The modal state lines of a file chooser waiting for browser_file_upload.
 * @property {(dialog: object) => string} modalLine The modal state line of an open dialog.
 * @property {(tabId: number, action: string) => void} refuseWhileDialogOpen Throws dialog_open while a dialog waits in the tab.
 * @property {(tabId: number) => string[]} takeDialogNotes What happened to the tab's dialogs since its last result.
 * @property {<T>(tabId: number, task: Promise<T>) => Promise<{value?: T, dialog?: object}>} untilDialog `task`'s value, or the dialog that opened first.
 */

/** The members every page driver has, beside its tools'. */
export const PAGE_DRIVER_MEMBERS = Object.freeze([
  "name",
  "actions",
  "browser",
  "listen",
  "tabGone",
  "releaseTab",
  "releaseSessions",
  "prepare",
  "ownTab",
  "serialized",
  "stopLoading",
  "afterAction",
  "inputNote",
  "pageReport",
  "waitForReady",
  "withNavigationWatch",
  "watchingDownloads",
  "elementFor",
  "fileChooserLines",
  "modalLine",
  "refuseWhileDialogOpen",
  "takeDialogNotes",
  "untilDialog",
]);

/** The member that carries out the tool of wire name `name`: `mouse_wheel` -> `mouseWheel`. */
export const memberOf = (name) => name.replace(/_([a-z])/g, (_, letter) => letter.toUpperCase());

/** Whether the tool is carried out by a member of its own (not answered with the page's report). */
const hasMember = (tool) => tool.answer !== "report";

/** The members the driver named `driverName` has: its own and those of the tools it carries out. */
export function membersOf(driverName) {
  const offered = new Set(toolsOf(driverName));
  const tools = TOOLS.filter((tool) => offered.has(tool.name) && hasMember(tool));
  return Object.freeze([...PAGE_DRIVER_MEMBERS, ...tools.map((tool) => memberOf(tool.name))]);
}

/**
 * The members of the tools the driver named `driverName` carries out, each the first function of
 * its name in `modules` (module namespaces, or objects of functions).
 */
export function toolMembers(driverName, modules) {
  const members = {};
  for (const member of membersOf(driverName).slice(PAGE_DRIVER_MEMBERS.length)) {
    const found = modules.find((module) => typeof module[member] === "function");
    if (found) members[member] = found[member];
  }
  return members;
}
