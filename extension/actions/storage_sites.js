// The storage group's safeguards (cookies, localStorage, sessionStorage, storage states): the
// person's profile holds their logins, so these tools
//   - reach nothing until the person turns on the options' switch (STORAGE_SWITCH); while it is
//     off each call is refused with consent_required, saying where the switch is;
//   - act only on the sites of the calling session's own tabs (a page's site: its registrable
//     domain, its host for localhost and IP addresses): a cookie of any other site is never listed,
//     read, set, deleted or cleared, and a cookie set with no domain is the tab's host's;
//   - ask the person before every write and every read of cookies, naming the site and each cookie
//     or key, with no "Always allow"; an HttpOnly cookie's value is given only when the person
//     allows that read with its values (a button of its own, saying HttpOnly), else it is withheld.
// What the person is asked about (describeStorage, before the approval window) is what then runs:
// the cookies and keys found then are the grant (grantStorage), and the members (storage.js) act
// on that grant alone, never on what appeared since. The grant is bound to the call's own
// arguments object, which nothing from a broker can name.
//
// A site is known without the Public Suffix List (no extension API gives it): the host's last two
// labels, or three under the common two-label suffixes below (co.uk, github.io ...). An unlisted
// suffix makes a site wider than the browser's own notion; every cookie read or change still shows
// the person each cookie's domain before it runs.

import { ActionError, invalidArguments } from "../base/errors.js";
import { OPTIONS_PLACE } from "../base/build_advice.js";
import { PersonRefusal } from "../base/protocol.js";
import { settings, settingsReady } from "../base/settings.js";
import { holds } from "../tabs/sessions.js";
import { runIn } from "./page_scripts.js";

export const STORAGE_SWITCH = "Share cookies and site storage with AI agents";
export const NOT_YOUR_SITE = "not_your_site";

const COOKIE_TOOLS = ["cookie_list", "cookie_get", "cookie_set", "cookie_delete", "cookie_clear"];
const AREAS = { localstorage: "localStorage", sessionstorage: "sessionStorage" };
const STATE_TOOLS = ["storage_state", "set_storage_state"];

// Public suffixes of two labels (and a few of three) that sites are registered under.
const SUFFIXES = new Set(
  (
    "co.uk org.uk ac.uk gov.uk me.uk ltd.uk plc.uk net.uk com.au net.au org.au edu.au gov.au co.nz org.nz" +
    " co.jp ne.jp or.jp ac.jp co.kr or.kr com.br net.br org.br com.cn net.cn org.cn com.hk com.sg com.tw" +
    " co.in net.in org.in co.za com.mx com.ar com.tr co.il com.pl com.ua co.id com.my com.ph com.vn" +
    " github.io gitlab.io herokuapp.com vercel.app netlify.app pages.dev workers.dev web.app" +
    " firebaseapp.com appspot.com blogspot.com azurewebsites.net cloudfront.net s3.amazonaws.com" +
    " onrender.com fly.dev glitch.me repl.co ngrok.io ngrok-free.app"
  ).split(" "),
);
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** A host's site: its registrable domain; the host itself for localhost, a one-label name or an IP. */
export function siteOf(host) {
  const name = String(host).toLowerCase().replace(/\.$/, "").replace(/^\./, "");
  if (IPV4.test(name) || name.includes(":") || name.startsWith("[") || !name.includes(".")) return name;
  const labels = name.split(".");
  for (let n = Math.min(labels.length - 1, 3); n >= 1; n -= 1) {
    if (n === 1 || SUFFIXES.has(labels.slice(-n).join("."))) return labels.slice(-(n + 1)).join(".");
  }
  return name;
}

/** The tool of a storage area's (localstorage_set): {area: "localStorage", op: "set"}; else null. */
export function storageArea(action) {
  const [prefix, op] = String(action).split("_");
  return Object.hasOwn(AREAS, prefix) && op ? { area: AREAS[prefix], op } : null;
}

export const isStorageAction = (action) =>
  COOKIE_TOOLS.includes(action) || STATE_TOOLS.includes(action) || storageArea(action) !== null;

/** The error the storage tools get while the person has not turned them on; null once they have. */
export async function storageOff() {
  await settingsReady;
  if (settings().shareStorage) return null;
  return {
    code: PersonRefusal.CONSENT_REQUIRED,
    message:
      "the person has not shared this browser's cookies and site storage with AI agents: they can turn on" +
      ` “${STORAGE_SWITCH}” on the browser-mcp extension's options page (${OPTIONS_PLACE})`,
  };
}

const isWeb = (url) => /^https?:\/\//.test(url);

/**
 * The session's own tabs' pages, as the storage tools may reach them: `sites` (each page's site),
 * and `origins`, one tab showing each origin ({origin, tabId}).
 */
export async function scopeOf(port, sessionId) {
  const tabs = await chrome.tabs.query({});
  const sites = [];
  const origins = [];
  for (const tab of tabs) {
    const url = tab.url || tab.pendingUrl || "";
    if (!holds(port, sessionId, tab.id) || !isWeb(url)) continue;
    const { hostname, origin } = new URL(url);
    if (!sites.includes(siteOf(hostname))) sites.push(siteOf(hostname));
    if (!origins.some((known) => known.origin === origin)) origins.push({ origin, tabId: tab.id });
  }
  return { sites, origins };
}

/** A cookie's domain without its leading dot. */
export const bareDomain = (cookie) => cookie.domain.replace(/^\./, "");
export const cookieSite = (cookie) => siteOf(bareDomain(cookie));

/** What tells one cookie from another: its name, domain, path and cookie store. */
export const cookieKey = (cookie) => JSON.stringify([cookie.name, cookie.domain, cookie.path, cookie.storeId ?? ""]);

/** The cookies of `sites`, each once. */
export async function cookiesOf(sites) {
  const found = new Map();
  for (const site of sites) {
    for (const cookie of await chrome.cookies.getAll({ domain: site })) {
      if (sites.includes(cookieSite(cookie))) found.set(cookieKey(cookie), cookie);
    }
  }
  return [...found.values()];
}

/** The cookies `filter` ({domain?, path?, name?}) picks. */
function picked(cookies, { domain, path, name }) {
  const wanted = typeof domain === "string" ? domain.replace(/^\./, "").toLowerCase() : null;
  return cookies.filter(
    (cookie) =>
      (wanted === null || bareDomain(cookie) === wanted || bareDomain(cookie).endsWith(`.${wanted}`)) &&
      (typeof path !== "string" || cookie.path === path) &&
      (typeof name !== "string" || cookie.name === name),
  );
}

function notYours(what, site, sites) {
  const yours = sites.length ? sites.join(", ") : "none: open or claim a tab on the site first";
  return new ActionError(
    NOT_YOUR_SITE,
    `${what} is of ${site}, not a site of your tabs (${yours}): the storage tools reach only your tabs' sites`,
  );
}

const SAME_SITE = { Strict: "strict", Lax: "lax", None: "no_restriction" };

/** The chrome.cookies.set details of a cookie_set call in the tab at `url`, checked to be of `sites`. */
export function cookieToSet(args, url, sites) {
  const page = new URL(url);
  const domain = typeof args.domain === "string" && args.domain ? args.domain.replace(/^\./, "").toLowerCase() : null;
  const host = domain ?? page.hostname;
  if (!sites.includes(siteOf(host))) throw notYours(`cookie ${JSON.stringify(args.name)}`, siteOf(host), sites);
  const path = typeof args.path === "string" && args.path ? args.path : "/";
  const secure = args.secure === true;
  const details = {
    url: `${secure ? "https:" : page.protocol}//${host}${path.startsWith("/") ? path : `/${path}`}`,
    name: args.name,
    value: args.value,
    path,
    secure,
    httpOnly: args.httpOnly === true,
  };
  // No domain: a host-only cookie of the tab's page, as the page's own document.cookie would set.
  if (domain) details.domain = domain;
  if (args.sameSite) details.sameSite = SAME_SITE[args.sameSite];
  if (typeof args.expires === "number" && args.expires > 0) details.expirationDate = args.expires;
  return details;
}

/** The cookie `set` ({url, name, value, ...}) would be, for the approval window. */
function setLine(details) {
  const flags = [
    `path ${details.path}`,
    details.httpOnly ? "HttpOnly" : "",
    details.secure ? "Secure" : "",
    details.sameSite ? `SameSite=${details.sameSite}` : "",
    details.expirationDate ? `expires ${new Date(details.expirationDate * 1000).toISOString()}` : "session",
  ].filter(Boolean);
  const host = details.domain ? `domain ${details.domain}` : `host ${new URL(details.url).hostname} only`;
  return `${details.name}=${details.value} (${host}, ${flags.join(", ")})`;
}

/** A cookie as the approval window names it: its name, where it is, and HttpOnly when it is. */
function cookieLine(cookie) {
  return `${cookie.name} (${cookie.domain}, path ${cookie.path}${cookie.httpOnly ? ", HttpOnly" : ""})`;
}

function bySite(cookies) {
  const lines = [];
  for (const site of [...new Set(cookies.map(cookieSite))]) {
    lines.push(`${site}:`, ...cookies.filter((cookie) => cookieSite(cookie) === site).map((c) => `  ${cookieLine(c)}`));
  }
  return lines;
}

const HTTP_ONLY_NOTE = (cookies) =>
  cookies.some((cookie) => cookie.httpOnly)
    ? [
        "",
        `⚠ HttpOnly: ${cookies
          .filter((cookie) => cookie.httpOnly)
          .map((cookie) => cookie.name)
          .join(", ")}. Pages' scripts cannot read these (logins usually live in them): their values are` +
          " withheld from the agent unless you press “Allow with HttpOnly values”.",
      ]
    : [];

/** Run `func(...args)` in the tab's top frame, in the extension's own world; its value. */
export async function inPage(tabId, func, args) {
  return runIn(tabId, 0, func, args).catch((error) => {
    if (!error.pageError) throw error;
    throw new ActionError("action_failed", `the storage of tab ${tabId}'s page: ${error.message}`);
  });
}

/** The page side of the storage areas: what `op` does in the page's `areaName`. */
export function areaOp(areaName, op, key, value, keys) {
  const area = areaName === "localStorage" ? globalThis.localStorage : globalThis.sessionStorage;
  const all = () => Array.from({ length: area.length }, (_, index) => area.key(index));
  switch (op) {
    case "list":
      return { origin: location.origin, items: all().map((name) => [name, area.getItem(name)]) };
    case "get":
      return { origin: location.origin, value: area.getItem(key) };
    case "set":
      area.setItem(key, value);
      return { origin: location.origin };
    case "delete":
    case "clear":
      for (const name of keys) area.removeItem(name);
      return { origin: location.origin };
    case "replace":
      for (const name of keys) area.removeItem(name);
      for (const [name, item] of value) area.setItem(name, item);
      return { origin: location.origin };
    default:
      throw new Error(`no storage operation ${op}`);
  }
}

/** The keys an origin's area holds now, read in the tab that shows it. */
async function keysIn(tabId, area) {
  const { origin, items } = await inPage(tabId, areaOp, [area, "list", null, null, []]);
  return { origin, keys: items.map(([name]) => name) };
}

const grants = new WeakMap();

/** What the person approved (or, for what needs no approval, what was found) of the call whose arguments are `args`. */
export function grantStorage(args, grant) {
  grants.set(args, Object.freeze(grant));
}

/** The grant of the call with arguments `args`; throws not_approved when it has none. */
export function grantOf(args, tool) {
  const grant = grants.get(args);
  if (!grant) {
    throw new ActionError(
      PersonRefusal.NOT_APPROVED,
      `browser_${tool} runs only once the person's switch and approval admit it; it did not run`,
    );
  }
  return grant;
}

const quoted = (text) => JSON.stringify(text);

/**
 * What the person is to approve of a storage tool's call from the session `port/sessionId` in the
 * tab at `place` ({tabId, url, origin}): {refused} when it may not run at all (the switch is off,
 * a site not the session's), else {ask, label, shown, httpOnly, args, grant}. `ask`: whether the
 * person must approve it; `shown`: the sites and each cookie or key, as the window lists them.
 * @param {{action: string, args: object}} message
 */
export async function describeStorage(port, sessionId, message, place) {
  const off = await storageOff();
  if (off) return { refused: off };
  try {
    return await describing(port, sessionId, message, place);
  } catch (error) {
    return { refused: { code: error?.code ?? "action_failed", message: String(error?.message ?? error) } };
  }
}

async function describing(port, sessionId, { action, args }, place) {
  if (!place || !isWeb(place.url)) {
    throw invalidArguments(
      `browser_${action} acts on a tab showing a web page; this one shows ${place?.url || "none"}`,
    );
  }
  const scope = await scopeOf(port, sessionId);
  const { sites } = scope;
  const area = storageArea(action);
  if (area) return describeArea(area, args, place);
  if (action === "cookie_set") {
    const set = cookieToSet(args, place.url, sites);
    return { ask: true, label: "Sets cookie", shown: setLine(set), grant: { sites, set } };
  }
  if (action === "set_storage_state") return describeRestore(args, scope);
  if (action === "cookie_list" && typeof args.domain === "string" && args.domain) {
    const site = siteOf(args.domain);
    if (!sites.includes(site)) throw notYours(`domain ${quoted(args.domain)}`, site, sites);
  }
  const cookies = picked(await cookiesOf(sites), action === "cookie_list" ? args : { name: args.name });
  const grant = { sites, cookies: cookies.map(cookieKey), origins: scope.origins };
  if (action === "storage_state") {
    const origins = scope.origins.map((known) => known.origin).join(", ") || "none";
    const shown = [
      `Cookies of ${sites.join(", ")}:`,
      ...(cookies.length ? bySite(cookies) : ["  (none)"]),
      `localStorage of ${origins}`,
      ...HTTP_ONLY_NOTE(cookies),
    ];
    const httpOnly = cookies.some((cookie) => cookie.httpOnly);
    return { ask: true, label: "Reads", shown: shown.join("\n"), httpOnly, grant };
  }
  if (!cookies.length) {
    if (action === "cookie_list" || action === "cookie_clear") return { ask: false, grant };
    throw new ActionError(
      "cookie_not_found",
      `no cookie named ${quoted(args.name)} on your tabs' sites (${sites.join(", ")})`,
    );
  }
  const reads = action === "cookie_list" || action === "cookie_get";
  const shown = [...bySite(cookies), ...(reads ? HTTP_ONLY_NOTE(cookies) : [])].join("\n");
  const label = reads ? "Reads cookies" : "Deletes cookies";
  return { ask: true, label, shown, httpOnly: reads && cookies.some((cookie) => cookie.httpOnly), grant };
}

async function describeArea({ area, op }, args, place) {
  const grant = { area, origin: place.origin };
  if (op === "list" || op === "get") return { ask: false, grant };
  if (op === "set") {
    return { ask: true, label: `Sets ${area} item`, shown: `${place.origin}:\n  ${args.key} = ${args.value}`, grant };
  }
  const { origin, keys } = await keysIn(place.tabId, area);
  const gone = op === "delete" ? keys.filter((key) => key === args.key) : keys;
  if (!gone.length) return { ask: false, grant: { ...grant, origin, keys: [] } };
  const shown = [`${origin}:`, ...gone.map((key) => `  ${key}`)].join("\n");
  return { ask: true, label: `Deletes ${area} items`, shown, grant: { ...grant, origin, keys: gone } };
}

/** browser_set_storage_state: what it clears and what it sets, of the session's sites alone. */
async function describeRestore(args, { sites, origins }) {
  const state = args.state;
  if (!state || !Array.isArray(state.cookies) || !Array.isArray(state.origins)) {
    throw invalidArguments("browser_set_storage_state carries no storage state (the broker reads the file)");
  }
  const left = [];
  const set = [];
  for (const cookie of state.cookies) {
    const host = cookie.domain.replace(/^\./, "");
    if (!sites.includes(siteOf(host))) {
      left.push(`cookie ${cookie.name} of ${cookie.domain}`);
      continue;
    }
    const hostOnly = !cookie.domain.startsWith(".");
    const details = cookieToSet(
      { ...cookie, domain: hostOnly ? undefined : host },
      `${cookie.secure ? "https" : "http"}://${host}/`,
      sites,
    );
    set.push(details);
  }
  const restores = [];
  for (const { origin, localStorage } of state.origins) {
    const tab = origins.find((known) => known.origin === origin);
    if (!tab) left.push(`localStorage of ${origin} (no tab of yours shows it)`);
    else restores.push({ origin, tabId: tab.tabId, items: localStorage.map((item) => [item.name, item.value]) });
  }
  const cleared = await cookiesOf(sites);
  const areas = [];
  for (const { origin, tabId } of origins) areas.push({ ...(await keysIn(tabId, "localStorage")), tabId, origin });
  const shown = [
    `Deletes the cookies of ${sites.join(", ")} (${cleared.length}):`,
    ...bySite(cleared),
    ...areas.map((known) => `Deletes localStorage of ${known.origin} (${known.keys.length} items)`),
    `Sets ${set.length} cookies:`,
    ...set.map((details) => `  ${setLine(details)}`),
    ...restores.map((known) => `Sets ${known.items.length} localStorage items of ${known.origin}`),
    ...(left.length ? ["Left out, not of your tabs' sites:", ...left.map((line) => `  ${line}`)] : []),
  ];
  const rest = Object.fromEntries(Object.entries(args).filter(([name]) => name !== "state"));
  return {
    ask: true,
    label: "Restores",
    shown: shown.join("\n"),
    args: JSON.stringify(rest, null, 2),
    grant: { sites, cookies: cleared.map(cookieKey), set, areas, restores, left, file: args.file ?? null },
  };
}
