// The network group in Chromium: a client's routes and offline state on its tab (../network_routes.js
// keeps them and decides whose they are), carried out on the tab's own DevTools session. Routes: the
// Fetch domain pauses each of the tab's requests while it has one, and a matching route answers it
// (Fetch.fulfillRequest: it never reaches the network) or sends it on with its headers altered;
// the rest go on untouched. Offline: Network.emulateNetworkConditions, so the page's requests fail
// and navigator.onLine is false. Both are the tab's session's alone: the person's tabs and other
// clients' tabs on the same site are not touched. Both end with the debugger's link to the tab
// (the tab closed or was let go of: debugger.js's releaseTab, releaseSessions), and as soon as the
// tab is no longer its setter's. An out-of-process frame's requests (a frame of another site) go
// through its own session, which is not intercepted: they are neither routed nor offline.

import { onTabEvent, onTabForgotten, send } from "./debugger.js";
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

const INTERCEPT = { patterns: [{ urlPattern: "*", requestStage: "Request" }] };
const CONDITIONS = { latency: 0, downloadThroughput: -1, uploadThroughput: -1 };

/** The tabs whose session this module changed, and still does. */
const applied = new Set();

/** Make the tab's session do what its state says. */
async function apply(tabId, state) {
  applied.add(tabId);
  await send(tabId, state.routes.length ? "Fetch.enable" : "Fetch.disable", state.routes.length ? INTERCEPT : {});
  await send(tabId, "Network.emulateNetworkConditions", { ...CONDITIONS, offline: state.offline });
}

// Ended while the debugger is still there (the tab is another's now, or nothing is left set).
onRoutesEnded((tabId) => {
  if (!applied.delete(tabId)) return;
  send(tabId, "Fetch.disable").catch(() => {});
  send(tabId, "Network.emulateNetworkConditions", { ...CONDITIONS, offline: false }).catch(() => {});
});

// The debugger let go of the tab: what it did there went with it.
onTabForgotten((tabId) => {
  applied.delete(tabId);
  endRoutes(tabId);
});

function base64Of(text) {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

const asProtocol = (pairs) => pairs.map(([name, value]) => ({ name, value }));

async function paused(tabId, { requestId, request }) {
  const route = routeFor(tabId, request.url);
  try {
    if (route?.fulfill) {
      await send(tabId, "Fetch.fulfillRequest", {
        requestId,
        responseCode: route.status,
        responseHeaders: asProtocol(fulfilledHeaders(route)),
        body: base64Of(route.body),
      });
    } else if (route) {
      const headers = alteredHeaders(route, Object.entries(request.headers ?? {}));
      await send(tabId, "Fetch.continueRequest", { requestId, headers: asProtocol(headers) });
    } else await send(tabId, "Fetch.continueRequest", { requestId });
  } catch {
    // the request went with its page, or the interception ended meanwhile (which lets it go on)
  }
}

onTabEvent((tabId, method, params) => {
  if (method === "Fetch.requestPaused") paused(tabId, params);
});

const answer = (line) => textResult(sections(["Result", [line]]));

/** browser_route {pattern, status?, body?, contentType?, headers?, removeHeaders?} */
export async function route(tabId, args) {
  const added = routeOf(args);
  await apply(tabId, addRoute(tabId, added));
  return answer(routeAdded(added));
}

/** browser_route_list */
export async function routeList(tabId) {
  return answer(routeListing(tabId));
}

/** browser_unroute {pattern?} */
export async function unroute(tabId, args) {
  const removed = removeRoutes(tabId, args.pattern);
  const state = liveState(tabId);
  if (isActive(state)) await apply(tabId, state);
  return answer(routesRemoved(args.pattern, removed));
}

/** browser_network_state_set {state} */
export async function networkStateSet(tabId, args) {
  const state = setOffline(tabId, offlineOf(args));
  if (isActive(liveState(tabId))) await apply(tabId, state);
  return answer(`The tab is now ${args.state}${state.offline ? ": its page's requests fail" : ""}`);
}
