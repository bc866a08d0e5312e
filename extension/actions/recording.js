// The person's own actions recorded as Playwright code (browser_start_recording,
// browser_stop_recording), for both page drivers: the one recording a tab may have, whose client it
// is for, the steps the page-side recorder (page/recorder.js) reports, the navigations the browser
// tells of (webNavigation), and the code they make. Each driver puts the recorder into the tab's
// documents its own way (devtools/recording.js, webext/recording.js) and hands each step here.
//
// A recording starts only once the person agreed to it in the approval window (person/approvals.js
// asks every time, naming the client and the tab, with no "Always allow"), and holds only while
// the session that started it still holds the tab: it ends when that session ends or lets the tab
// go, when the person takes the tab back or presses Stop in the popup, and when the tab closes.
// While it runs the toolbar and the popup say so (onRecordingsChanged, recordingsShown). What the
// person stopped is kept for the client's browser_stop_recording, which answers it saying so; what
// ended otherwise is dropped with nobody to answer.
//
// Navigations: the page at the start is the code's first `page.goto`; later the person's typed or
// bookmarked addresses are written as `page.goto`, a reload as `page.reload()`; a page reached by a
// link or a form is left to the click or the key press that led there (written already), so no
// goto repeats it; going back or forward is written as `page.goBack()` / `page.goForward()`.

import { ActionError, Code } from "../base/errors.js";
import { ownerOf, sessionName } from "../tabs/sessions.js";
import { holderOf } from "./network_routes.js";
import { sections, textResult } from "./results.js";

const MAX_STEPS = 2_000;
const WITHHELD = "<password withheld>";
/** The popup's runtime port: the recordings it shows, and its Stop. */
export const RECORDING_PORT = "browser-mcp/recording";

/** tab id -> {holder, client, title, started, steps, secrets, stopper, endedBy} */
const recordings = new Map();
/** tab id -> a recording the person stopped, kept for the client's browser_stop_recording. */
const stopped = new Map();
const changeHandlers = [];
const popupPorts = new Set();

/** `handler()` whenever a recording starts or ends (the toolbar redraws). */
export function onRecordingsChanged(handler) {
  changeHandlers.push(handler);
}

/** The running recordings, as the toolbar and the popup name them: [{tabId, client, title}]. */
export function recordingsShown() {
  return [...recordings].map(([tabId, { client, title }]) => ({ tabId, client, title }));
}

function changed() {
  for (const handler of changeHandlers) handler();
  for (const port of popupPorts) port.postMessage(recordingsShown());
}

/** Playwright's quoting of a string in its code: single quotes. */
const quote = (text) =>
  "'" + String(text).replace(/\\/g, "\\\\").replace(/'/g, "\\'").replace(/\n/g, "\\n").replace(/\r/g, "\\r") + "'";

/**
 * Open the tab's recording for the client holding it; `stopper()` undoes the driver's part (its
 * recorder in the page). Refused while the tab records already.
 */
export async function openRecording(tabId, stopper) {
  if (recordings.has(tabId)) {
    throw new ActionError(Code.ACTION_FAILED, "the tab is recording already: browser_stop_recording ends it");
  }
  const held = ownerOf(tabId);
  const tab = await chrome.tabs.get(tabId);
  stopped.delete(tabId);
  const recording = {
    holder: holderOf(tabId),
    client: held ? sessionName(held.port, held.sessionId) : "AI client",
    title: tab.title || tab.url,
    started: Date.now(),
    steps: [{ kind: "goto", url: tab.url }],
    secrets: 0,
    stopper,
    endedBy: null,
  };
  recordings.set(tabId, recording);
  changed();
  return recording;
}

/** The tab's recording while its client still holds the tab; one that lost it ends here. */
function liveRecording(tabId) {
  const recording = recordings.get(tabId);
  if (recording && recording.holder !== holderOf(tabId)) {
    endRecording(tabId, null);
    return null;
  }
  return recording ?? null;
}

/** Whether the tab records now (its driver's recorder keeps reporting). */
export const isRecording = (tabId) => Boolean(liveRecording(tabId));

/**
 * A step the tab's recorder reported: `frames`, the locators of the iframes around the document it
 * happened in (outermost first; [] for the page's own, null when a frame is out of reach).
 */
export function recordStep(tabId, step, frames) {
  const recording = liveRecording(tabId);
  if (!recording || recording.steps.length >= MAX_STEPS) return;
  const kinds = { click: 1, fill: 1, select: 1, check: 1, press: 1 };
  if (!Object.hasOwn(kinds, step?.kind)) return;
  const entry = {
    kind: step.kind,
    locator: typeof step.locator === "string" ? step.locator : null,
    frames: Array.isArray(frames) && frames.every((frame) => typeof frame === "string") ? frames : null,
    value: step.secret === true ? null : String(step.value ?? ""),
    secret: step.secret === true,
    values: Array.isArray(step.values) ? step.values.map(String) : [],
    checked: step.checked === true,
    key: String(step.key ?? ""),
  };
  const last = recording.steps.at(-1);
  const same = (a, b) => a.locator === b.locator && String(a.frames) === String(b.frames);
  // Typing is one fill of what the field holds in the end, as Playwright's codegen writes it.
  if (entry.kind === "fill" && last?.kind === "fill" && same(last, entry)) recording.steps.pop();
  if (entry.secret && !(last?.kind === "fill" && last.secret && same(last, entry))) recording.secrets += 1;
  recording.steps.push(entry);
}

/** webNavigation.onCommitted: a navigation of a recorded tab's page, as the person made it. */
function navigated(details) {
  if (details.frameId !== 0 || !liveRecording(details.tabId)) return;
  const recording = recordings.get(details.tabId);
  const qualifiers = details.transitionQualifiers ?? [];
  let step = null;
  if (qualifiers.includes("forward_back")) step = { kind: "history" };
  else if (details.transitionType === "reload") step = { kind: "reload" };
  else if (
    qualifiers.includes("from_address_bar") ||
    ["typed", "auto_bookmark", "generated", "keyword"].includes(details.transitionType)
  ) {
    step = { kind: "goto", url: details.url };
  }
  if (step && recording.steps.length < MAX_STEPS) recording.steps.push(step);
}

/** The code of one step, a line of a Playwright test's body. */
function lineOf(step) {
  if (step.kind === "goto") return `await page.goto(${quote(step.url)});`;
  if (step.kind === "reload") return "await page.reload();";
  if (step.kind === "history") return "// the person went back or forward in the tab's history";
  const action = {
    click: () => "click()",
    fill: () => `fill(${quote(step.secret ? WITHHELD : step.value)})`,
    select: () =>
      `selectOption(${step.values.length === 1 ? quote(step.values[0]) : `[${step.values.map(quote).join(", ")}]`})`,
    check: () => (step.checked ? "check()" : "uncheck()"),
    press: () => `press(${quote(step.key)})`,
  }[step.kind]();
  if (!step.locator) return `// ${step.kind} on an element no locator finds alone`;
  if (!step.frames) return `// in a frame out of reach: ${step.locator}.${action}`;
  const frames = step.frames.map((frame) => `${frame}.contentFrame().`).join("");
  return `await page.${frames}${step.locator}.${action};`;
}

/**
 * End the tab's recording: `by` "person" (the popup's Stop: kept for the client's
 * browser_stop_recording), "client" (answered now) or null (the session or the tab went: dropped).
 */
export function endRecording(tabId, by) {
  const recording = recordings.get(tabId);
  if (!recording) return null;
  recordings.delete(tabId);
  recording.endedBy = by;
  recording.ended = Date.now();
  Promise.resolve()
    .then(() => recording.stopper())
    .catch(() => {});
  if (by === "person") stopped.set(tabId, recording);
  changed();
  return recording;
}

/** browser_start_recording's answer, once the driver's recorder is in the tab's documents. */
export function startedAnswer(tabId) {
  if (!isRecording(tabId)) throw new ActionError(Code.ACTION_FAILED, "the recording ended as it started");
  return textResult(
    sections([
      "Result",
      [
        "- Recording the person's actions in the tab; the toolbar and the popup show it",
        "- browser_stop_recording ends it and answers the Playwright code",
      ],
    ]),
  );
}

/** browser_stop_recording {}: the code, then what to know of it. */
export async function stopRecording(tabId) {
  const recording = liveRecording(tabId) ? endRecording(tabId, "client") : stopped.get(tabId);
  stopped.delete(tabId);
  if (!recording || recording.holder !== holderOf(tabId)) {
    throw new ActionError(Code.ACTION_FAILED, "no recording runs in the tab: browser_start_recording starts one");
  }
  const code = recording.steps.map(lineOf).join("\n");
  const seconds = Math.round((recording.ended - recording.started) / 1000);
  const notes = [`- Recorded ${recording.steps.length - 1} steps of the person's in ${seconds} s`];
  if (recording.endedBy === "person") notes.push("- The person stopped the recording (the popup's Stop)");
  if (recording.secrets) notes.push(`- What the person typed into password fields is withheld: ${quote(WITHHELD)}`);
  if (recording.steps.length >= MAX_STEPS) notes.push(`- Only the first ${MAX_STEPS} steps are kept`);
  return { content: [{ type: "text", text: code }, ...textResult(notes.join("\n")).content] };
}

/** The client holding each recorded tab may have changed (sessions.js stores who holds what). */
function holdersChanged(changes, area) {
  if (area !== "session" || !("owners" in changes || "sessions" in changes)) return;
  for (const tabId of [...recordings.keys()]) liveRecording(tabId);
  for (const [tabId, recording] of [...stopped]) if (recording.holder !== holderOf(tabId)) stopped.delete(tabId);
}

/** The popup's port: it hears the recordings as they change, and asks to stop one. */
function popupConnected(port) {
  if (port.name !== RECORDING_PORT) return;
  const { sender } = port;
  const fromPopup = sender?.id === chrome.runtime.id && (sender.url ?? "").startsWith(chrome.runtime.getURL("person/"));
  if (!fromPopup) {
    port.disconnect();
    return;
  }
  popupPorts.add(port);
  port.onDisconnect.addListener(() => popupPorts.delete(port));
  port.onMessage.addListener((message) => {
    if (Number.isInteger(message?.stop)) endRecording(message.stop, "person");
  });
  port.postMessage(recordingsShown());
}

chrome.webNavigation.onCommitted.addListener(navigated);
chrome.tabs.onRemoved.addListener((tabId) => {
  endRecording(tabId, null);
  stopped.delete(tabId);
});
chrome.storage.onChanged.addListener(holdersChanged);
chrome.runtime.onConnect.addListener(popupConnected);
