// The files a browser_file_upload sends, for both page drivers and the person's approval window:
// its `paths` checked, each with the name, size, flags and bytes the broker read when it checked
// them (broker/uploads.py). What the person is shown is what goes: a file's size and bytes are
// taken only for a path that is uploaded, and bytes that are not the size shown are refused.

import { invalidArguments } from "../base/errors.js";

/** browser_file_upload's `paths`: absolute paths, none to cancel the chooser. */
export function checkedPaths(args) {
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
 * part, with the size, flags and bytes the broker gave in `files` for that same path. A size is
 * taken only for a path that is uploaded, so what the person is shown is what goes.
 */
export function uploadedFiles(args) {
  const described = new Map((Array.isArray(args.files) ? args.files : []).map((file) => [file?.path, file]));
  return (Array.isArray(args.paths) ? args.paths : []).map((path) => {
    const file = described.get(path) ?? {};
    const flags = Array.isArray(file.flags) ? file.flags.filter((flag) => typeof flag === "string") : [];
    return {
      path: String(path),
      name: String(path).split(/[/\\]/).pop(),
      size: Number.isInteger(file.size) ? sizeOf(file.size) : "size unknown",
      bytes: Number.isInteger(file.size) ? file.size : null,
      flags,
      data: typeof file.data === "string" ? file.data : null,
      type: typeof file.type === "string" ? file.type : "",
      modified: Number.isFinite(file.modified) ? file.modified : Date.now(),
    };
  });
}

/** How many bytes base64 `data` holds. */
function decodedLength(data) {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return (data.length / 4) * 3 - padding;
}

/**
 * The files to set from their bytes; null when the broker sent none (an earlier version, which
 * sends paths alone). Files whose bytes are missing, or are not the size shown, are refused.
 */
export function filesWithBytes(args) {
  const files = uploadedFiles(args);
  if (files.every((file) => file.data === null)) return null;
  for (const file of files) {
    if (file.data === null || file.bytes === null || decodedLength(file.data) !== file.bytes) {
      throw invalidArguments(`the broker sent ${file.path} without its bytes, or with other bytes than its size`);
    }
  }
  return files;
}
