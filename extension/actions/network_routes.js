// The network group's state, for both page drivers: the routes (mocked or altered requests) and the
// offline state a client set on one of its tabs, kept per tab beside the tab's driver state, and
// what the tools answer of them (browser_route, browser_route_list, browser_unroute,
// browser_network_state_set). Each driver carries them out its own way (devtools/network_routes.js
// over the DevTools Fetch and Network domains, webext/network_routes.js over webRequest).
//
// A tab's routes and offline state are the client's that set them: they hold only while the
// session that held the tab then still holds it (tabs/sessions.js, as the broker said). They are
// dropped as soon as that changes (the session ended, released the tab, the person took it back,
// another session claimed it) and when the tab closes, so nothing a client set ever reaches the
// person's own tabs or another client's. Every use checks that rule again (liveState), whatever
// the driver heard of the change.
//
// Patterns are Playwright's URL globs: `*` any characters but `/`, `**` any characters, `{a,b}`
// either, `\` escapes; `?` is itself (a query's). A route added later wins over earlier ones.

import { invalidArguments } from "../base/errors.js";
import { ownerKey } from "../base/owner_key.js";
import { ownerOf } from "../tabs/sessions.js";

// What a client may set on one tab, and how much of it; each route's body is bounded too.
const MAX_ROUTES = 50;
const MAX_BODY = 1_000_000;
const MAX_HEADERS = 50;
const SPECIAL = new Set([..."\\^$.|+()[]"]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** tab id -> {holder, routes: [route], offline: boolean} */
const states = new Map();
const endHandlers = [];

/** The key of the session holding the tab ("port/sessionId"), or null for the person's tab. */
export function holderOf(tabId) {
  const held = ownerOf(tabId);
  return held ? ownerKey(held.port, held.sessionId) : null;
}

/** `handler(tabId, state)` when a tab's routes and offline state end (the driver undoes them). */
export function onRoutesEnded(handler) {
  endHandlers.push(handler);
}

/** Drop what was set on the tab (closed, let go of, or no longer its setter's). */
export function endRoutes(tabId) {
  const state = states.get(tabId);
  if (!state) return;
  states.delete(tabId);
  for (const handler of endHandlers) handler(tabId, state);
}

/** The tab's routes and offline state while its setter still holds it; else null (and dropped). */
export function liveState(tabId) {
  const state = states.get(tabId);
  if (!state) return null;
  if (state.holder !== holderOf(tabId)) {
    endRoutes(tabId);
    return null;
  }
  return state;
}

function stateFor(tabId) {
  const state = liveState(tabId) ?? { holder: holderOf(tabId), routes: [], offline: false };
  states.set(tabId, state);
  return state;
}

/** Whether the tab has routes or is offline (the driver then intercepts its requests). */
export function isActive(state) {
  return Boolean(state && (state.routes.length || state.offline));
}

/** Playwright's URL glob as a regular expression of the whole URL. */
export function globPattern(glob) {
  let source = "^";
  let inGroup = false;
  for (let i = 0; i < glob.length; i += 1) {
    const c = glob[i];
    if (c === "\\" && i + 1 < glob.length) {
      i += 1;
      source += SPECIAL.has(glob[i]) || "*?{},/".includes(glob[i]) ? `\\${glob[i]}` : glob[i];
    } else if (c === "*") {
      let stars = 1;
      while (glob[i + 1] === "*") {
        stars += 1;
        i += 1;
      }
      const deep = stars > 1 && (i - stars < 0 || glob[i - stars] === "/") && [undefined, "/"].includes(glob[i + 1]);
      if (deep) {
        // `**/` is any number of whole segments, so `**/api/*` matches from the scheme on.
        source += "(?:[^/]*(?:/|$))*";
        i += glob[i + 1] === "/" ? 1 : 0;
      } else source += stars > 1 ? ".*" : "[^/]*";
    } else if (c === "{") {
      inGroup = true;
      source += "(?:";
    } else if (c === "}" && inGroup) {
      inGroup = false;
      source += ")";
    } else if (c === "," && inGroup) source += "|";
    else source += SPECIAL.has(c) || "?{}".includes(c) ? `\\${c}` : c;
  }
  if (inGroup) throw invalidArguments(`pattern ${JSON.stringify(glob)} opens a { group it does not close`);
  return new RegExp(`${source}$`);
}

function headerLines(lines) {
  if (lines === undefined) return [];
  if (!Array.isArray(lines) || lines.length > MAX_HEADERS) {
    throw invalidArguments(`headers must be a list of at most ${MAX_HEADERS} "Name: Value" strings`);
  }
  return lines.map((line) => {
    const colon = typeof line === "string" ? line.indexOf(":") : -1;
    const name = colon > 0 ? line.slice(0, colon).trim() : "";
    if (!HEADER_NAME.test(name) || /[\r\n]/.test(line)) {
      throw invalidArguments(`header ${JSON.stringify(line)} is not "Name: Value"`);
    }
    return [name, line.slice(colon + 1).trim()];
  });
}

/** browser_route's arguments, checked, as a route. */
export function routeOf(args) {
  const { pattern, status, body, contentType, headers, removeHeaders } = args;
  if (typeof pattern !== "string" || !pattern) throw invalidArguments("pattern must be a URL glob such as **/api/*");
  if (status !== undefined && !(Number.isInteger(status) && status >= 200 && status <= 599)) {
    throw invalidArguments("status must be a whole number from 200 to 599");
  }
  if (body !== undefined && typeof body !== "string") throw invalidArguments("body must be a string");
  if (typeof body === "string" && body.length > MAX_BODY) {
    throw invalidArguments(`body is over ${MAX_BODY} characters`);
  }
  if (contentType !== undefined && (typeof contentType !== "string" || /[\r\n]/.test(contentType))) {
    throw invalidArguments("contentType must be one line, such as application/json");
  }
  if (removeHeaders !== undefined && typeof removeHeaders !== "string") {
    throw invalidArguments("removeHeaders must be a comma-separated list of header names");
  }
  const removed = (removeHeaders ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  return {
    pattern,
    match: globPattern(pattern),
    // Given a body or a status, the request is answered with them and never reaches the network.
    fulfill: body !== undefined || status !== undefined,
    status: status ?? 200,
    body: body ?? "",
    contentType: contentType ?? null,
    headers: headerLines(headers),
    removeHeaders: removed,
  };
}

/** Add the route to the tab's (its holder's); throws invalid_arguments past the bound. */
export function addRoute(tabId, route) {
  const state = stateFor(tabId);
  if (state.routes.length >= MAX_ROUTES) {
    throw invalidArguments(`the tab has ${MAX_ROUTES} routes already: remove some with browser_unroute`);
  }
  state.routes.push(route);
  return state;
}

/** Remove the tab's routes of `pattern` (all of them without one); how many went. */
export function removeRoutes(tabId, pattern) {
  if (pattern !== undefined && typeof pattern !== "string") throw invalidArguments("pattern must be a string");
  const state = liveState(tabId);
  if (!state) return 0;
  const before = state.routes.length;
  state.routes = pattern === undefined ? [] : state.routes.filter((route) => route.pattern !== pattern);
  const removed = before - state.routes.length;
  if (!isActive(state)) endRoutes(tabId);
  return removed;
}

/** Set the tab offline or back online. */
export function setOffline(tabId, offline) {
  const state = stateFor(tabId);
  state.offline = offline;
  if (!isActive(state)) endRoutes(tabId);
  return state;
}

/** The route that takes a request of the tab to `url`: the last one added that matches; or null. */
export function routeFor(tabId, url) {
  const state = liveState(tabId);
  if (!state) return null;
  const bare = url.split("#")[0];
  for (let i = state.routes.length - 1; i >= 0; i -= 1) if (state.routes[i].match.test(bare)) return state.routes[i];
  return null;
}

/** The response headers of a fulfilled route, as [name, value] pairs. */
export function fulfilledHeaders(route) {
  const headers = route.headers.filter(([name]) => name.toLowerCase() !== "content-type");
  const type = route.contentType ?? route.headers.find(([name]) => name.toLowerCase() === "content-type")?.[1];
  return [["Content-Type", type ?? "text/plain; charset=utf-8"], ...headers];
}

/** A request's headers [[name, value]] as a route that lets it through alters them. */
export function alteredHeaders(route, headers) {
  const added = new Set(route.headers.map(([name]) => name.toLowerCase()));
  const kept = headers.filter(
    ([name]) => !route.removeHeaders.includes(name.toLowerCase()) && !added.has(name.toLowerCase()),
  );
  return [...kept, ...route.headers];
}

function routeLine(route, index) {
  const details = [];
  if (route.fulfill) details.push(`status=${route.status}`);
  if (route.fulfill && route.body) {
    details.push(`body=${JSON.stringify(route.body.length > 50 ? `${route.body.slice(0, 50)}...` : route.body)}`);
  }
  if (route.contentType) details.push(`contentType=${route.contentType}`);
  if (route.headers.length) details.push(`headers=${route.headers.map(([n, v]) => `${n}: ${v}`).join("; ")}`);
  if (route.removeHeaders.length) details.push(`removeHeaders=${route.removeHeaders.join(",")}`);
  return `${index + 1}. ${route.pattern}${details.length ? ` (${details.join(", ")})` : ""}`;
}

/** browser_route_list's answer for the tab. */
export function routeListing(tabId) {
  const state = liveState(tabId);
  const lines = state?.routes.length ? state.routes.map(routeLine) : ["No routes on this tab"];
  if (state?.offline) lines.push("", "The tab is offline (browser_network_state_set)");
  return lines.join("\n");
}

/** What browser_route answers once the driver put the route in place. */
export function routeAdded(route) {
  const what = route.fulfill
    ? `answered with status ${route.status}${route.body ? " and the given body" : ""}, never sent`
    : "sent on with its headers altered";
  return `Route added for ${route.pattern}: this tab's matching requests are ${what}. It lasts until browser_unroute, or until the tab closes or is no longer yours.`;
}

/** What browser_unroute answers. */
export function routesRemoved(pattern, removed) {
  return pattern === undefined
    ? `Removed all ${removed} route(s) of this tab`
    : `Removed ${removed} route(s) for ${pattern} from this tab`;
}

/** browser_network_state_set's `state`, checked: true for offline. */
export function offlineOf(args) {
  if (args.state !== "online" && args.state !== "offline")
    throw invalidArguments('state must be "online" or "offline"');
  return args.state === "offline";
}
