// The storage group's tools, shared by both page drivers: cookies through the `cookies` WebExtension
// API (Chromium's and Firefox's alike), localStorage and sessionStorage through a script in the
// tab's page. Each runs on its call's grant alone (storage_sites.js): the cookies and keys the
// person was shown, of the sites of the session's own tabs, HttpOnly values only when the person
// allowed them.

import { ActionError } from "../base/errors.js";
import { sections, textResult } from "./results.js";
import { areaOp, cookieKey, cookieSite, cookiesOf, grantOf, inPage, storageArea, storageOff } from "./storage_sites.js";

const WITHHELD = "<withheld: HttpOnly>";
const SAME_SITE = { strict: "Strict", lax: "Lax", no_restriction: "None" };

async function admitted(args, tool) {
  const off = await storageOff();
  if (off) throw new ActionError(off.code, off.message);
  return grantOf(args, tool);
}

/** The grant's cookies as they are now (those gone since are gone). */
async function grantedCookies(grant) {
  const keys = new Set(grant.cookies);
  return (await cookiesOf(grant.sites)).filter((cookie) => keys.has(cookieKey(cookie)));
}

const valueOf = (cookie, grant) => (cookie.httpOnly && !grant.httpOnly ? WITHHELD : cookie.value);

function cookieLine(cookie, grant) {
  const flags = [
    `domain ${cookie.domain}`,
    `path ${cookie.path}`,
    cookie.httpOnly ? "HttpOnly" : "",
    cookie.secure ? "Secure" : "",
    SAME_SITE[cookie.sameSite] ? `SameSite=${SAME_SITE[cookie.sameSite]}` : "",
    cookie.session ? "session" : `expires ${new Date(cookie.expirationDate * 1000).toISOString()}`,
  ].filter(Boolean);
  return `- ${cookie.name}=${valueOf(cookie, grant)} (${flags.join(", ")})`;
}

function withheldNote(cookies, grant) {
  return cookies.some((cookie) => cookie.httpOnly) && !grant.httpOnly
    ? ["HttpOnly values are withheld: the person allowed this read without them"]
    : [];
}

function listing(cookies, grant, none) {
  const lines = cookies.length ? cookies.map((cookie) => cookieLine(cookie, grant)) : [none];
  return textResult(sections(["Result", [...lines, ...withheldNote(cookies, grant)]]));
}

export async function cookieList(tabId, args) {
  const grant = await admitted(args, "cookie_list");
  return listing(await grantedCookies(grant), grant, `No cookies on your tabs' sites (${grant.sites.join(", ")})`);
}

export async function cookieGet(tabId, args) {
  const grant = await admitted(args, "cookie_get");
  return listing(await grantedCookies(grant), grant, `No cookie named ${JSON.stringify(args.name)} any more`);
}

export async function cookieSet(tabId, args) {
  const { set } = await admitted(args, "cookie_set");
  const cookie = await setCookie(set);
  return textResult(sections(["Result", [`Set cookie ${cookie.name} on ${cookie.domain} (path ${cookie.path})`]]));
}

async function setCookie(details) {
  let cookie;
  try {
    cookie = await chrome.cookies.set(details);
  } catch (error) {
    throw new ActionError("action_failed", `the browser did not set cookie ${details.name}: ${error.message}`);
  }
  // Chromium answers null for a cookie it refused (a Secure one of an http page, SameSite=None without Secure).
  if (!cookie) {
    const why = chrome.runtime.lastError?.message ?? "it refused it (SameSite=None needs secure: true)";
    throw new ActionError("action_failed", `the browser did not set cookie ${details.name}: ${why}`);
  }
  return cookie;
}

async function removeCookie(cookie) {
  const url = `${cookie.secure ? "https" : "http"}://${cookie.domain.replace(/^\./, "")}${cookie.path}`;
  await chrome.cookies.remove({ url, name: cookie.name, storeId: cookie.storeId });
}

async function removeAll(grant) {
  const cookies = await grantedCookies(grant);
  for (const cookie of cookies) await removeCookie(cookie);
  return cookies;
}

export async function cookieDelete(tabId, args) {
  const gone = await removeAll(await admitted(args, "cookie_delete"));
  const lines = gone.map((cookie) => `Deleted cookie ${cookie.name} (domain ${cookie.domain}, path ${cookie.path})`);
  return textResult(sections(["Result", lines.length ? lines : [`No cookie named ${args.name} any more`]]));
}

export async function cookieClear(tabId, args) {
  const grant = await admitted(args, "cookie_clear");
  const gone = await removeAll(grant);
  const sites = [...new Set(gone.map(cookieSite))];
  const line = gone.length
    ? `Deleted ${gone.length} cookie${gone.length === 1 ? "" : "s"} of ${sites.join(", ")}; no other site's`
    : `No cookies on your tabs' sites (${grant.sites.join(", ")})`;
  return textResult(sections(["Result", [line]]));
}

/** A storage area's tool: `op` in the tab's page, within its grant. */
async function areaTool(tabId, args, action) {
  const { area, op } = storageArea(action);
  const grant = await admitted(args, action);
  const keys = grant.keys ?? [];
  const done = await inPage(tabId, areaOp, [area, op, args.key ?? null, args.value ?? null, keys]);
  if (done.origin !== grant.origin) {
    throw new ActionError("navigated", `the tab moved from ${grant.origin} to ${done.origin} meanwhile`);
  }
  const lines = {
    list: () =>
      done.items.length
        ? done.items.map(([key, value]) => `- ${key}: ${value}`)
        : [`${area} of ${done.origin} is empty`],
    get: () => (done.value === null ? [`No ${area} item ${JSON.stringify(args.key)} on ${done.origin}`] : [done.value]),
    set: () => [`Set ${area} item ${JSON.stringify(args.key)} on ${done.origin}`],
    delete: () =>
      keys.length
        ? [`Deleted ${area} item ${JSON.stringify(args.key)} on ${done.origin}`]
        : [`No ${area} item ${JSON.stringify(args.key)} on ${done.origin}`],
    clear: () => [`Deleted ${keys.length} ${area} item${keys.length === 1 ? "" : "s"} of ${done.origin}`],
  }[op];
  return textResult(sections(["Result", lines()]));
}

export const localstorageList = (tabId, args) => areaTool(tabId, args, "localstorage_list");
export const localstorageGet = (tabId, args) => areaTool(tabId, args, "localstorage_get");
export const localstorageSet = (tabId, args) => areaTool(tabId, args, "localstorage_set");
export const localstorageDelete = (tabId, args) => areaTool(tabId, args, "localstorage_delete");
export const localstorageClear = (tabId, args) => areaTool(tabId, args, "localstorage_clear");
export const sessionstorageList = (tabId, args) => areaTool(tabId, args, "sessionstorage_list");
export const sessionstorageGet = (tabId, args) => areaTool(tabId, args, "sessionstorage_get");
export const sessionstorageSet = (tabId, args) => areaTool(tabId, args, "sessionstorage_set");
export const sessionstorageDelete = (tabId, args) => areaTool(tabId, args, "sessionstorage_delete");
export const sessionstorageClear = (tabId, args) => areaTool(tabId, args, "sessionstorage_clear");

/** A cookie in Playwright's storage-state shape. */
function stateCookie(cookie) {
  return {
    name: cookie.name,
    value: cookie.value,
    domain: cookie.domain,
    path: cookie.path,
    expires: cookie.session ? -1 : cookie.expirationDate,
    httpOnly: cookie.httpOnly,
    secure: cookie.secure,
    sameSite: SAME_SITE[cookie.sameSite] ?? "Lax",
  };
}

export async function storageState(tabId, args) {
  const grant = await admitted(args, "storage_state");
  const cookies = await grantedCookies(grant);
  const kept = cookies.filter((cookie) => grant.httpOnly || !cookie.httpOnly);
  const origins = [];
  for (const { origin, tabId: shown } of grant.origins) {
    const read = await inPage(shown, areaOp, ["localStorage", "list", null, null, []]).catch(() => null);
    if (read?.origin !== origin) continue; // the tab moved on: nothing of another origin is taken
    origins.push({ origin, localStorage: read.items.map(([name, value]) => ({ name, value })) });
  }
  const state = { cookies: kept.map(stateCookie), origins };
  const left = cookies.length - kept.length;
  const lines = [
    `Storage state of ${grant.sites.join(", ")}: ${kept.length} cookies, ${origins.length} origins with localStorage`,
    ...(left
      ? [`${left} HttpOnly cookie${left === 1 ? "" : "s"} left out: the person allowed this read without them`]
      : []),
  ];
  return {
    content: [
      { type: "text", text: sections(["Result", lines]) },
      {
        type: "resource",
        resource: {
          uri: "browser-mcp:file/storage-state.json",
          mimeType: "application/json",
          text: JSON.stringify(state, null, 2),
        },
      },
    ],
  };
}

export async function setStorageState(tabId, args) {
  const grant = await admitted(args, "set_storage_state");
  const cleared = await removeAll(grant);
  for (const details of grant.set) await setCookie(details);
  let items = 0;
  for (const { origin, tabId: shown, keys } of grant.areas) {
    const restore = grant.restores.find((known) => known.origin === origin);
    const op = restore ? "replace" : "clear";
    const done = await inPage(shown, areaOp, ["localStorage", op, null, restore?.items ?? [], keys]);
    if (done.origin !== origin) throw new ActionError("navigated", `the tab of ${origin} moved on meanwhile`);
    items += restore?.items.length ?? 0;
  }
  const from = grant.file?.path ? ` from ${grant.file.path}` : "";
  const lines = [
    `Restored${from}: ${grant.set.length} cookies and ${items} localStorage items, after deleting` +
      ` ${cleared.length} cookies and the localStorage of ${grant.areas.length} origins of ${grant.sites.join(", ")}`,
    ...(grant.left.length ? [`Left out, not of your tabs' sites: ${grant.left.join("; ")}`] : []),
  ];
  return textResult(sections(["Result", lines]));
}
