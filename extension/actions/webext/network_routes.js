// The network group in Firefox: a client's routes and offline state on its tab (../network_routes.js
// keeps them and decides whose they are), carried out by blocking webRequest listeners filtered to
// that one tab, so the person's tabs and other clients' tabs on the same site are never heard.
// Offline: each of the tab's requests is cancelled, so the page's fetches fail (navigator.onLine
// stays true: an extension cannot change it). A route that lets a request through alters its
// headers (onBeforeSendHeaders). A route that answers one replaces what the page gets: its body
// through filterResponseData (the `webRequestFilterResponse` permission), its Content-Type and
// headers in onHeadersReceived. Firefox lets an extension neither answer a request without sending
// it nor change a response's status, so such a request still reaches the server, and the page sees
// the server's status: a route given a `status` is not_supported here, and its answer says so.
// Each request asks again whether the tab is still its setter's (liveState): the listeners go as
// soon as it is not, or the tab closes.

import { ActionError, Code } from "../../base/errors.js";
import {
  addRoute,
  alteredHeaders,
  endRoutes,
  fulfilledHeaders,
  isActive,
  liveState,
  offlineOf,
  onRoutesEnded,
  removeRoutes,
  routeAdded,
  routeFor,
  routeListing,
  routeOf,
  routesRemoved,
  setOffline,
} from "../network_routes.js";
import { sections, textResult } from "../results.js";

/** tab id -> its listeners */
const listening = new Map();
/** request id -> the route answering it, until its headers come */
const answering = new Map();
const REPLACED = new Set(["content-type", "content-length", "content-encoding"]);
let closesHeard = false;

const webRequest = () => globalThis.browser?.webRequest ?? chrome.webRequest;
const asPairs = (headers) => (headers ?? []).map(({ name, value }) => [name, value ?? ""]);
const asHeaders = (pairs) => pairs.map(([name, value]) => ({ name, value }));

function beforeRequest(tabId, details) {
  const state = liveState(tabId);
  if (!state) return {};
  if (state.offline) return { cancel: true };
  const route = routeFor(tabId, details.url);
  if (!route?.fulfill) return {};
  answering.set(details.requestId, route);
  const filter = webRequest().filterResponseData(details.requestId);
  filter.onstart = () => {
    filter.write(new TextEncoder().encode(route.body));
    filter.close();
  };
  filter.onerror = () => answering.delete(details.requestId);
  return {};
}

function beforeSendHeaders(tabId, details) {
  const route = routeFor(tabId, details.url);
  if (!route || route.fulfill) return {};
  return { requestHeaders: asHeaders(alteredHeaders(route, asPairs(details.requestHeaders))) };
}

function headersReceived(details) {
  const route = answering.get(details.requestId);
  if (!route) return {};
  answering.delete(details.requestId);
  const own = new Set(route.headers.map(([name]) => name.toLowerCase()));
  const kept = asPairs(details.responseHeaders).filter(
    ([name]) => !REPLACED.has(name.toLowerCase()) && !own.has(name.toLowerCase()),
  );
  return { responseHeaders: asHeaders([...kept, ...fulfilledHeaders(route)]) };
}

function listen(tabId) {
  if (listening.has(tabId)) return;
  const filter = { urls: ["<all_urls>"], tabId };
  const listeners = {
    onBeforeRequest: [(details) => beforeRequest(tabId, details), ["blocking"]],
    onBeforeSendHeaders: [(details) => beforeSendHeaders(tabId, details), ["blocking", "requestHeaders"]],
    onHeadersReceived: [headersReceived, ["blocking", "responseHeaders"]],
  };
  for (const [event, [listener, extra]] of Object.entries(listeners)) {
    webRequest()[event].addListener(listener, filter, extra);
  }
  listening.set(tabId, listeners);
  if (!closesHeard) {
    closesHeard = true;
    chrome.tabs.onRemoved.addListener((closed) => endRoutes(closed));
  }
}

onRoutesEnded((tabId) => {
  const listeners = listening.get(tabId);
  if (!listeners) return;
  listening.delete(tabId);
  for (const [event, [listener]] of Object.entries(listeners)) webRequest()[event].removeListener(listener);
});

function needWebRequest() {
  if (!webRequest()?.filterResponseData) {
    throw new ActionError(
      Code.NOT_SUPPORTED,
      "this Firefox build of the extension was not granted webRequestFilterResponse",
    );
  }
}

const answer = (line) => textResult(sections(["Result", [line]]));

/** browser_route {pattern, status?, body?, contentType?, headers?, removeHeaders?} */
export async function route(tabId, args) {
  needWebRequest();
  const added = routeOf(args);
  if (args.status !== undefined) {
    throw new ActionError(
      Code.NOT_SUPPORTED,
      "Firefox's extension cannot set a response's status: route with a body alone (the server's status stays)",
    );
  }
  addRoute(tabId, added);
  listen(tabId);
  const note = added.fulfill ? " In Firefox the request still reaches the server, and the page sees its status." : "";
  return answer(`${routeAdded(added).replace(", never sent", "")}${note}`);
}

/** browser_route_list */
export async function routeList(tabId) {
  return answer(routeListing(tabId));
}

/** browser_unroute {pattern?} */
export async function unroute(tabId, args) {
  return answer(routesRemoved(args.pattern, removeRoutes(tabId, args.pattern)));
}

/** browser_network_state_set {state} */
export async function networkStateSet(tabId, args) {
  needWebRequest();
  const state = setOffline(tabId, offlineOf(args));
  if (isActive(liveState(tabId))) listen(tabId);
  return answer(`The tab is now ${args.state}${state.offline ? ": its page's requests fail" : ""}`);
}
