// Keeps the background running while it is joined to a broker, in both browsers, from one rule.
//
// A link's WebSocket frames are not activity to the browser. Chromium counts the link's JSON ping
// (links.js) since 116; Firefox counts neither, and unloads an event page that heard no extension
// event and made no call into the browser for `extensions.background.idle.timeout` (30 s by
// default), link or no link, until the next browser event or alarm brings it back. Every
// extension API call the background makes into the browser's parent process restarts Firefox's
// idle time (ExtensionParent's `background-script-reset-idle`, reason `parentApiCall`), and
// Chromium's too, so a cheap one on a short beat keeps the page while any broker is joined.
//
// While joined rather than while a client holds tabs: a client that holds none yet (one about to
// open its first tab, or listing tabs) would otherwise find the browser gone for half a minute,
// and Chromium's worker already stays up for as long as its link does. With no broker joined the
// page may sleep: discovery's alarm wakes it.

import { joinedLinks } from "./links.js";

// A sixth of Firefox's default idle time: a late beat or two (a busy machine) still leaves room.
export const STAY_AWAKE_MS = 5_000;

export function stayAwakeWhileJoined() {
  setInterval(() => {
    if (joinedLinks().length > 0) chrome.runtime.getPlatformInfo().catch(() => {});
  }, STAY_AWAKE_MS);
}
