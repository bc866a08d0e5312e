// The DevTools driver's page effects: browser_emulate_media through the Emulation domain of the
// tab's own debugger session (so the tab alone, not the other tabs of its site, and until the
// client lets the tab go, when the debugger detaches), browser_drop and browser_highlight through
// page/page_effects.js run on the element in the tools' isolated world.

import { onTabForgotten, send, utilityWorld } from "./debugger.js";
import { callOn, elementFor } from "./elements.js";
import { frameWorlds } from "./frames.js";
import { ActionError, Code } from "../../base/errors.js";
import { sections, textResult } from "../results.js";
import { MEDIA_FEATURES, dropLine, dropped, highlightLine, mediaChanges, mediaLines } from "../page_effects.js";
import { dropInPage, highlightInPage } from "../page/page_effects.js";

/** tab id -> {name: value} of the media overrides its debugger session holds */
const overrides = new Map();

// The session's overrides go with it.
onTabForgotten((tabId) => overrides.delete(tabId));

/** browser_emulate_media {colorScheme?, reducedMotion?, forcedColors?, contrast?, media?}: null clears one. */
export async function emulateMedia(tabId, args) {
  const changes = mediaChanges(args);
  const now = { ...(overrides.get(tabId) ?? {}) };
  for (const [name, value] of changes) {
    if (value === null) delete now[name];
    else now[name] = value;
  }
  const features = Object.entries(MEDIA_FEATURES)
    .filter(([name, { feature }]) => feature && now[name] !== undefined)
    .map(([name, { feature }]) => ({ name: feature, value: now[name] }));
  await send(tabId, "Emulation.setEmulatedMedia", { media: now.media ?? "", features });
  overrides.set(tabId, now);
  return textResult(sections(["Result", mediaLines(now)]));
}

// Base64 characters handed to the page at a time (a multiple of 4, so each part decodes alone).
const PART = 4 * 1024 * 1024;
const TAKE_PART = `function (index, part) {
  const parts = (this.__browserMcpDropParts ??= []);
  (parts[index] ??= []).push(part);
}`;

/** browser_drop {target, paths?, data?}: the line saying what the page took. */
export async function drop(tabId, args) {
  const { files, data } = dropped(args);
  const element = await elementFor(tabId, args.target);
  for (const [index, file] of files.entries()) {
    for (let at = 0; at < file.data.length; at += PART) {
      await callOn(element, TAKE_PART, index, file.data.slice(at, at + PART));
    }
    // An empty file has no part: it still needs its list.
    if (!file.data.length) await callOn(element, TAKE_PART, index, "");
  }
  const shown = files.map(({ name, type, modified }) => ({ name, type, modified }));
  const answer = await callOn(
    element,
    `function (files, data) { return (${dropInPage}).call(this, null, files, data); }`,
    shown,
    data,
  );
  if (!answer.ok) throw new ActionError(Code.ACTION_FAILED, answer.message);
  return dropLine(args, answer.element, answer.accepted);
}

async function onHighlights(tabId, args, request) {
  const element = await elementFor(tabId, args.target);
  const answer = await callOn(
    element,
    `function (request) { return (${highlightInPage}).call(this, null, request); }`,
    request,
  );
  return textResult(sections(["Result", [highlightLine(answer, args, request)]]));
}

/** browser_highlight {target, style?} */
export function highlight(tabId, args) {
  return onHighlights(tabId, args, { show: typeof args.style === "string" ? args.style : "" });
}

/** browser_hide_highlight {target?}: the element's highlight, or (no target) every one in the tab. */
export async function hideHighlight(tabId, args) {
  if (args.target !== undefined) return onHighlights(tabId, args, { hide: true });
  const worlds = [{ target: tabId, world: await utilityWorld(tabId) }, ...frameWorlds(tabId)];
  let hidden = 0;
  for (const { target, world } of worlds) {
    const { result } = await send(target, "Runtime.callFunctionOn", {
      functionDeclaration: `function () { return (${highlightInPage}).call(null, null, { hideAll: true }); }`,
      executionContextId: world,
      returnByValue: true,
    }).catch(() => ({ result: {} }));
    hidden += result?.value?.hidden ?? 0;
  }
  return textResult(sections(["Result", [`Removed ${hidden} highlight${hidden === 1 ? "" : "s"}`]]));
}
