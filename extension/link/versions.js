// Version skew, told rather than suffered: this extension says its version in every snapshot
// (snapshot.js), a broker says its own and the oldest extension it works with on its link's
// `connect`, and an extension older than that still joins, warns here once per broker and says
// in the popup what to do.

import { UPDATE_ADVICE } from "../base/build_advice.js";

/** This extension's version, as its manifest (and so the package it came from) says. */
export const EXTENSION_VERSION = chrome.runtime.getManifest().version;

/** Chrome's 1 to 4 dot-separated numbers, padded so that 1.2 and 1.2.0 are one version; null if not one. */
function numbers(version) {
  const parts = typeof version === "string" ? version.split(".") : [];
  if (parts.length < 1 || parts.length > 4 || !parts.every((part) => /^\d+$/.test(part))) return null;
  return [...parts.map(Number), 0, 0, 0].slice(0, 4);
}

/** Whether `version` is older than `minimum` (never, when the broker named no minimum). */
export function olderThan(version, minimum) {
  const needed = numbers(minimum);
  if (!needed) return false;
  const ours = numbers(version);
  if (!ours) return true;
  const differs = ours.findIndex((part, index) => part !== needed[index]);
  return differs >= 0 && ours[differs] < needed[differs];
}

/**
 * Keep what a link's `connect` (one without a session) says of versions, and warn of skew once.
 * @param {import("./frames.js").ConnectFrame} connect
 */
export function heardVersions(link, { serverVersion, minExtensionVersion }) {
  const known = link.versions;
  link.versions = { serverVersion, minExtensionVersion };
  if (known?.minExtensionVersion === minExtensionVersion || !olderThan(EXTENSION_VERSION, minExtensionVersion)) return;
  console.warn(
    `browser-mcp: this extension (${EXTENSION_VERSION}) is older than the broker on port ${link.port}` +
      ` (${serverVersion}) needs (${minExtensionVersion}): ${UPDATE_ADVICE}`,
  );
}
