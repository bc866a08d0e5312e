// The toolbar icon: how this browser stands with AI agents, read at a glance. One state at a time,
// drawn the same way by the icon, its tooltip and the badge (docs/extension.md, "The toolbar icon"):
//   connected      the blue mark, its two nodes linked: a broker is joined; agents reach the
//                  tabs they claim.
//   not connected  the grey mark, its link broken: no broker is joined (none running, not
//                  paired, or reconnecting); agents reach nothing here.
//   paused         the red mark with pause bars, and a red "II" badge: the person paused AI
//                  agents in this browser; every call is refused whatever brokers are joined.

export const ToolbarState = Object.freeze({ CONNECTED: "connected", NOT_CONNECTED: "not connected", PAUSED: "paused" });

// Rendered from icons/*.svg by scripts/icons, at the toolbar's 16 px and high-density 32 px.
const ICONS = {
  [ToolbarState.CONNECTED]: { 16: "icons/icon-16.png", 32: "icons/icon-32.png" },
  [ToolbarState.NOT_CONNECTED]: { 16: "icons/icon-off-16.png", 32: "icons/icon-off-32.png" },
  [ToolbarState.PAUSED]: { 16: "icons/icon-paused-16.png", 32: "icons/icon-paused-32.png" },
};
const TITLES = {
  [ToolbarState.CONNECTED]: "browser-mcp: connected; AI agents reach the tabs they claim",
  [ToolbarState.NOT_CONNECTED]: "browser-mcp: not connected to a broker",
  [ToolbarState.PAUSED]: "browser-mcp: AI agents paused",
};
const PAUSED_RED = "#c5221f";

export function toolbarState({ paused, connected }) {
  if (paused) return ToolbarState.PAUSED;
  return connected ? ToolbarState.CONNECTED : ToolbarState.NOT_CONNECTED;
}

let shown = null;

/** Draw `state` on the toolbar; nothing is redrawn when it is already shown. */
export function showToolbar(state) {
  if (state === shown) return;
  shown = state;
  const paused = state === ToolbarState.PAUSED;
  // Failures only mean the browser is closing; the next state change draws again.
  chrome.action.setIcon({ path: ICONS[state] }).catch(() => {});
  chrome.action.setTitle({ title: TITLES[state] }).catch(() => {});
  chrome.action.setBadgeText({ text: paused ? "II" : "" }).catch(() => {});
  chrome.action.setBadgeBackgroundColor({ color: PAUSED_RED }).catch(() => {});
}
