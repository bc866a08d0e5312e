// File choosers of the tabs a client acts on, answered with browser_file_upload as Playwright MCP
// answers them.
//
// Chromium would show the person a native chooser (or, with the debugger attached, cancel it);
// here it is intercepted, so that a click on an <input type=file> (or on what opens one) leaves it
// open for the client: the click's result says so, and browser_file_upload sets the input's files
// (the page seeing `input` and `change`) or, without paths, cancels it (`cancel`). Which files may
// go is the broker's to check (broker/uploads.py): it sends the absolute paths it resolved, each
// file's name, size and flags for the approval window, and the file's bytes, read when it checked
// them. Those bytes are what the page gets, as Files built in an isolated world of the input's
// frame (as Playwright sets files it holds in memory): the person approves what they saw, and a
// file replaced on disk while the window was open changes nothing. A broker of an earlier version
// sends no bytes: its paths are then read by Chromium (DOM.setFileInputFiles), which lets an
// extension hand a page files from disk only with "Allow access to file URLs" on.

import { onSessionEvent, onTabAttached, onTabEvent, onTabForgotten, send } from "./debugger.js";
import { ActionError, Code, invalidArguments } from "../../base/errors.js";
import { checkedPaths, filesWithBytes, uploadedFiles } from "../uploads.js";
import { onFrameSession } from "./frames.js";

/**
 * tab id -> {backendNodeId, frameId, mode, target} of the chooser the page opened and nobody answered yet;
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
    const { backendNodeId, frameId, mode } = params;
    choosers.set(tabId, { backendNodeId, frameId, mode, target });
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

// Base64 characters handed to the page at a time (a multiple of 4, so each part decodes alone).
const PART = 4 * 1024 * 1024;
// An isolated world of the input's frame: the page's own scripts cannot touch what runs there.
const WORLD_NAME = "browser-mcp upload";
// Run on the input in that world: keep one part of a file's bytes (on the world's own wrapper of
// the input, which the page cannot see).
const TAKE_PART = `function (index, part) {
  const parts = (this.__browserMcpUpload ??= []);
  (parts[index] ??= []).push(part);
}`;
// Then build the Files from their parts, set them, and tell the page as a chooser would.
const SET_FILES = `function (files) {
  const parts = this.__browserMcpUpload ?? [];
  delete this.__browserMcpUpload;
  const transfer = new DataTransfer();
  files.forEach((file, index) => {
    const bytes = (parts[index] ?? []).map((part) => {
      const text = atob(part);
      const array = new Uint8Array(text.length);
      for (let at = 0; at < text.length; at += 1) array[at] = text.charCodeAt(at);
      return array;
    });
    transfer.items.add(new File(bytes, file.name, { type: file.type, lastModified: file.modified }));
  });
  this.files = transfer.files;
  this.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
  this.dispatchEvent(new Event("change", { bubbles: true }));
}`;

/** Set the chooser's input to `files` (from uploadedFiles), from the bytes they carry. */
async function setFromBytes(chooser, files) {
  const { executionContextId } = await send(chooser.target, "Page.createIsolatedWorld", {
    frameId: chooser.frameId,
    worldName: WORLD_NAME,
  });
  const { object } = await send(chooser.target, "DOM.resolveNode", {
    backendNodeId: chooser.backendNodeId,
    executionContextId,
  });
  try {
    for (const [index, file] of files.entries()) {
      for (let at = 0; at < file.data.length; at += PART) {
        await send(chooser.target, "Runtime.callFunctionOn", {
          objectId: object.objectId,
          functionDeclaration: TAKE_PART,
          arguments: [{ value: index }, { value: file.data.slice(at, at + PART) }],
        });
      }
    }
    const shown = files.map(({ name, type, modified }) => ({ name, type, modified }));
    const { exceptionDetails } = await send(chooser.target, "Runtime.callFunctionOn", {
      objectId: object.objectId,
      functionDeclaration: SET_FILES,
      arguments: [{ value: shown }],
    });
    if (exceptionDetails) {
      const why = exceptionDetails.exception?.description ?? exceptionDetails.text;
      throw new ActionError(Code.ACTION_FAILED, `the files could not be set: ${why}`);
    }
  } finally {
    await send(chooser.target, "Runtime.releaseObject", { objectId: object.objectId }).catch(() => {});
  }
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
export async function fileUpload(tabId, args) {
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
  const withBytes = filesWithBytes(args);
  choosers.delete(tabId);
  if (!paths.length) {
    await cancel(chooser);
    return "Cancelled the file chooser";
  }
  if (withBytes) {
    await setFromBytes(chooser, withBytes);
  } else {
    if (!(await chrome.extension.isAllowedFileSchemeAccess())) {
      choosers.set(tabId, chooser);
      throw new ActionError(
        Code.ACTION_FAILED,
        'Chromium lets the extension hand pages files only with "Allow access to file URLs" on: turn it on in' +
          " the browser-mcp extension's details (chrome://extensions), then call browser_file_upload again",
      );
    }
    await send(chooser.target, "DOM.setFileInputFiles", { files: paths, backendNodeId: chooser.backendNodeId });
  }
  const names = uploadedFiles(args)
    .map((file) => `${file.name} (${file.size})`)
    .join(", ");
  return `Uploaded ${paths.length} file${paths.length === 1 ? "" : "s"} into the file chooser: ${names}`;
}
