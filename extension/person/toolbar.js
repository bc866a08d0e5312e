// The toolbar icon: how this browser stands with AI agents, read at a glance. One state at a time,
// drawn the same way by the icon, its tooltip and the badge (docs/extension.md, "The toolbar icon"):
//   connected      the blue mark, its two nodes linked: a broker is joined; agents reach the
//                  tabs they claim.
//   not connected  the grey mark, its link broken: no broker is joined (none running, not
//                  paired, or reconnecting); agents reach nothing here.
//   paused         the red mark with pause bars, and a red "II" badge: the person paused AI
//                  agents in this browser; every call is refused whatever brokers are joined.
// Over whichever it is, while an agent records the person's actions (actions/recording.js), a red
// "REC" badge and a tooltip naming the agent and the tab, until the recording ends.

import { onRecordingsChanged, recordingsShown } from "../actions/recording.js";

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

/** The badge and tooltip of `state`, the running recordings named over it. */
function drawBadge(state) {
  const recording = recordingsShown();
  const said = recording.map(({ client, title }) => `recording your actions for ${client} in "${title}"`);
  const title = [TITLES[state] ?? TITLES[ToolbarState.NOT_CONNECTED], ...said].join("; ");
  const text = recording.length ? "REC" : state === ToolbarState.PAUSED ? "II" : "";
  // Failures only mean the browser is closing; the next state change draws again.
  chrome.action.setTitle({ title }).catch(() => {});
  chrome.action.setBadgeText({ text }).catch(() => {});
  chrome.action.setBadgeBackgroundColor({ color: PAUSED_RED }).catch(() => {});
}

/** Draw `state` on the toolbar; nothing is redrawn when it is already shown. */
export function showToolbar(state) {
  if (state === shown) return;
  shown = state;
  chrome.action.setIcon({ path: ICONS[state] }).catch(() => {});
  drawBadge(state);
}

onRecordingsChanged(() => drawBadge(shown));
