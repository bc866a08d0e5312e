// The full report a broker gets when its link opens and when an AI session starts: who this
// browser is (name, version, the instance id kept in chrome.storage.local) and this extension's
// version, the built-in browser tools and the page driver that carries them out, the
// browser-wide requests it carries out, whether the person paused agents, and every tab with its
// tools. The first one sent on a link is what joins it.

import { BROWSER_FEATURES, ToBroker } from "../base/protocol.js";
import { settings, settingsReady } from "../base/settings.js";
import { EXTENSION_VERSION } from "./versions.js";

// Promises made once per worker: two brokers asking at once must see the same instance id.
const browserInfo = describeBrowser();
const instance = instanceId();

/**
 * @typedef {object} ReportSources What the report tells of that the layers above the link own,
 *   handed in once by the wiring (background.js) as the worker starts.
 * @property {Promise<unknown>} ready Settles once the state a stopped worker lost is rebuilt
 *   (tabs/rebuild.js) and the pause is read (person/person.js).
 * @property {() => boolean} paused Whether the person paused agents.
 * @property {(tab: chrome.tabs.Tab) => object} tabInfo A tab as the wire reports it (tabs/tabs.js).
 * @property {{name: string, actions: string[]}} driver The page driver the built-in tools run on
 *   (actions/driver.js) and what it carries out: every tool with the DevTools protocol (Chromium),
 *   those the WebExtension driver can do elsewhere (Firefox), so that a broker refuses the rest
 *   naming the browser before any reaches it.
 */

/** @type {ReportSources | null} */
let sources = null;

/** Where the report's parts come from: named by the wiring before any link can open. */
export function reportFrom(given) {
  sources = given;
}

/**
 * The browser's name and full version: Firefox says them (runtime.getBrowserInfo); Chromium's
 * brands say them (the user agent string gives only the major version). The one place that names
 * the browser.
 */
async function describeBrowser() {
  const info = await chrome.runtime.getBrowserInfo?.().catch(() => null);
  if (info?.name) return { name: info.name, version: info.version ?? "" };
  const data = navigator.userAgentData;
  const high = await data?.getHighEntropyValues(["fullVersionList"]).catch(() => null);
  const brands = high?.fullVersionList ?? data?.brands ?? [];
  const brand =
    brands.find((b) => !/not.?a.?brand|chromium/i.test(b.brand)) ?? brands.find((b) => /chromium/i.test(b.brand));
  const version = brand?.version ?? /Chrome\/([\d.]+)/.exec(navigator.userAgent)?.[1] ?? "";
  return { name: brand?.brand ?? "Chromium", version };
}

async function instanceId() {
  const { instanceId: stored } = await chrome.storage.local.get("instanceId");
  if (stored) return stored;
  const created = crypto.randomUUID();
  await chrome.storage.local.set({ instanceId: created });
  return created;
}

export async function sendSnapshot(link, sessionId) {
  const { ready, paused, tabInfo, driver } = sources;
  await Promise.all([ready, settingsReady]);
  const [tabs, id, browser] = await Promise.all([chrome.tabs.query({}), instance, browserInfo]);
  const message = {
    type: ToBroker.CONNECTED,
    browser: { ...browser, instanceId: id },
    // Its own version, so a broker can tell the person when it needs a newer one.
    extensionVersion: EXTENSION_VERSION,
    // Without evaluate when the person turned it off: the broker then neither lists nor sends it.
    actions: driver.actions.filter((action) => action !== "evaluate" || settings().allowEvaluate),
    // Which driver carries them out, and all it can: a broker keeps both per browser.
    driver: { name: driver.name, actions: [...driver.actions] },
    // Listed whether or not the person shares history and bookmarks: asked while they do not,
    // the request says where to turn sharing on.
    features: BROWSER_FEATURES,
    paused: paused(),
    tabs: tabs.filter((tab) => tab.id >= 0).map(tabInfo),
  };
  if (sessionId) message.sessionId = sessionId;
  link.send(message);
  link.joined();
}
