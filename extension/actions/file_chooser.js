// File choosers of the tabs a client acts on, answered with browser_file_upload as Playwright MCP
// answers them.
//
// Chromium would show the person a native chooser (or, with the debugger attached, cancel it);
// here it is intercepted, so that a click on an <input type=file> (or on what opens one) leaves it
// open for the client: the click's result says so, and browser_file_upload sets the input's files
// from disk (DOM.setFileInputFiles: real files, their names, types, sizes and contents as on
// disk, the page seeing `input` and `change`) or, without paths, cancels it (`cancel`). Which files
// may go is the broker's to check (broker/uploads.py): it sends absolute paths it resolved, with
// their names and sizes for the approval window. Chromium lets an extension hand a page files only
// with "Allow access to file URLs" on.

import { onSessionEvent, onTabAttached, onTabEvent, onTabForgotten, send } from "./debugger.js";
import { ActionError, Code, invalidArguments } from "./errors.js";
import { onFrameSession } from "./frames.js";

/**
 * tab id -> {backendNodeId, mode, target} of the chooser the page opened and nobody answered yet;
 * target is what its input's commands go to: the tab, or the session of the out-of-process frame
 * (frames.js) it opened in, which is intercepted and heard there, not through the tab.
 */
const choosers = new Map();

const INTERCEPT = ["Page.setInterceptFileChooserDialog", { enabled: true }];

onTabAttached((tabId, command) => command(...INTERCEPT));
onFrameSession((session) => send(session, ...INTERCEPT).catch(() => {}));

function chooserEvent(target, method, params) {
  const tabId = target.tabId ?? target;
  if (method === "Page.fileChooserOpened" && params.backendNodeId !== undefined) {
    choosers.set(tabId, { backendNodeId: params.backendNodeId, mode: params.mode, target });
  } else if (method === "Page.frameNavigated" && !params.frame.parentId && target === tabId) {
    choosers.delete(tabId); // its input went with the page
  } else if (method === "Target.detachedFromTarget" && choosers.get(tabId)?.target.sessionId === params.sessionId) {
    choosers.delete(tabId); // its input went with the frame
  }
}

onTabEvent(chooserEvent);
onSessionEvent((tabId, sessionId, method, params) => chooserEvent({ tabId, sessionId }, method, params));

onTabForgotten((tabId) => choosers.delete(tabId));

/** The modal state lines of the tab's open file chooser (none when there is none). */
export function fileChooserLines(tabId) {
  if (!choosers.has(tabId)) return [];
  const many = choosers.get(tabId).mode === "selectMultiple" ? " (takes several files)" : "";
  return [`- [File chooser${many}]: can be handled by browser_file_upload, with paths or none to cancel it`];
}

function checkedPaths(args) {
  const paths = args.paths ?? [];
  if (!Array.isArray(paths) || !paths.every((path) => typeof path === "string" && path)) {
    throw invalidArguments("paths must be a list of absolute file paths");
  }
  return paths;
}

function sizeOf(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB"];
  let size = bytes / 1024;
  let unit = 0;
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return `${size.toFixed(1)} ${units[unit]}`;
}

/**
 * The files an upload's `args` send: each of its `paths` (what is uploaded), named by its last
 * part, with the size the broker gave in `files` for that same path. A size is taken only for a
 * path that is uploaded, so what the person is shown is what goes.
 */
export function uploadedFiles(args) {
  const sizes = new Map((Array.isArray(args.files) ? args.files : []).map((file) => [file?.path, file?.size]));
  return (Array.isArray(args.paths) ? args.paths : []).map((path) => {
    const size = sizes.get(path);
    return {
      path: String(path),
      name: String(path).split(/[/\\]/).pop(),
      size: Number.isInteger(size) ? sizeOf(size) : "size unknown",
    };
  });
}

async function cancel(chooser) {
  const { object } = await send(chooser.target, "DOM.resolveNode", { backendNodeId: chooser.backendNodeId });
  await send(chooser.target, "Runtime.callFunctionOn", {
    objectId: object.objectId,
    functionDeclaration: "function () { this.dispatchEvent(new Event('cancel', { bubbles: true })); }",
  });
  await send(chooser.target, "Runtime.releaseObject", { objectId: object.objectId }).catch(() => {});
}

/** browser_file_upload {paths}: answer the tab's open file chooser; the line saying how. */
export async function uploadFiles(tabId, args) {
  const paths = checkedPaths(args);
  const chooser = choosers.get(tabId);
  if (!chooser) {
    throw new ActionError(
      Code.NO_FILE_CHOOSER,
      `no file chooser is open in tab ${tabId}: click the page's file input (or the button that opens it) first`,
    );
  }
  if (paths.length > 1 && chooser.mode !== "selectMultiple") {
    throw invalidArguments(`the file chooser takes one file, and ${paths.length} were given`);
  }
  choosers.delete(tabId);
  if (!paths.length) {
    await cancel(chooser);
    return "Cancelled the file chooser";
  }
  if (!(await chrome.extension.isAllowedFileSchemeAccess())) {
    choosers.set(tabId, chooser);
    throw new ActionError(
      Code.ACTION_FAILED,
      'Chromium lets the extension hand pages files only with "Allow access to file URLs" on: turn it on in' +
        " the browser-mcp extension's details (chrome://extensions), then call browser_file_upload again",
    );
  }
  await send(chooser.target, "DOM.setFileInputFiles", { files: paths, backendNodeId: chooser.backendNodeId });
  const names = uploadedFiles(args)
    .map((file) => `${file.name} (${file.size})`)
    .join(", ");
  return `Uploaded ${paths.length} file${paths.length === 1 ? "" : "s"} into the file chooser: ${names}`;
}
