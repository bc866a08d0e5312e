// The browser-mcp service worker: joins every local broker and tells it about this browser's
// tabs and their page tools, and carries out what the broker asks (docs/extension-link.md). This entry owns only the wiring: which module hears which event.
//
// MV3 workers can be stopped at any moment, so every listener is registered here, at top level,
// while the worker's first turn runs, and all state is rebuilt on start: tool lists by asking each
// tab's bridge, AI sessions and their tab groups from chrome.storage.session, the pause and the
// options from chrome.storage.local, brokers by discovery. Chromium 116+ keeps a worker alive while its WebSockets carry messages; an
// application-level ping every 20 s guarantees that (WebSocket-level pings do not count), a
// Firefox event page is kept by an API call on a short beat (stay_awake.js), and an alarm wakes a
// worker that found no broker.

import { driver, driverAbilities, releaseSessions } from "./actions/driver.js";
import { downloadCreated } from "./actions/downloads.js";
import { answerApproval, approvalDetails, approvalWindowClosed, cancelApprovals } from "./person/approval_window.js";
import { handleBrokerMessage } from "./broker_requests.js";
import { WAKE_ALARM, discoverSoon, discoverySettingsChanged, startDiscovery, wakeDiscovery } from "./link/discovery.js";
import {
  joinedLinks,
  onJoinedChange,
  onLinkLost,
  onLinkMessage,
  pairLink,
  retryUnpaired,
  startKeepalive,
} from "./link/links.js";
import { pairingChanged } from "./link/broker_auth.js";
import { framePortOpened, toolsReported } from "./page_tools/page_tools.js";
import { injectBridges, wakeBridge } from "./page_tools/page_bridges.js";
import { endSession, isPaused, pauseReady, pausedError, setPaused, showStanding, takeBack } from "./person/person.js";
import { popupState } from "./person/popup_state.js";
import { Approval, Bridge, PersonRefusal, Popup } from "./base/protocol.js";
import { ownerKey } from "./base/owner_key.js";
import { settingsChanged } from "./base/settings.js";
import { stayAwakeWhileJoined } from "./link/stay_awake.js";
import { reportFrom, sendSnapshot } from "./link/snapshot.js";
import { ready, rebuildAlso } from "./tabs/rebuild.js";
import { restoreRefNumbers } from "./actions/ref_numbers.js";
import { forgetSessions, sessionPorts } from "./tabs/sessions.js";
import { frontChanged, windowFocusChanged } from "./tabs/new_tabs.js";
import { topFrameSettled } from "./tabs/first_pages.js";
import {
  navigationTargetCreated,
  tabActivated,
  tabCreated,
  tabMoved,
  tabRemoved,
  tabReplaced,
  tabInfo,
  tabUpdated,
} from "./tabs/tabs.js";

chrome.tabs.onCreated.addListener(tabCreated);
chrome.webNavigation.onCommitted.addListener(topFrameSettled);
chrome.webNavigation.onErrorOccurred.addListener(topFrameSettled);
chrome.webNavigation.onCreatedNavigationTarget.addListener(navigationTargetCreated);
chrome.tabs.onActivated.addListener(frontChanged);
chrome.windows.onFocusChanged.addListener(windowFocusChanged);
chrome.tabs.onUpdated.addListener(tabUpdated);
chrome.tabs.onRemoved.addListener(tabRemoved);
chrome.tabs.onReplaced.addListener(tabReplaced);
chrome.tabs.onActivated.addListener(tabActivated);
chrome.tabs.onMoved.addListener(tabMoved);
chrome.tabs.onAttached.addListener(tabMoved);
chrome.tabs.onDetached.addListener(tabMoved);
// The built-in browser tools' page driver (actions/driver.js).
chrome.tabs.onRemoved.addListener(driver.tabGone);
driver.listen();
chrome.downloads.onCreated.addListener(downloadCreated);

chrome.windows.onRemoved.addListener(approvalWindowClosed);
chrome.runtime.onConnect.addListener(framePortOpened);

/** The person's own pages (popup, approval window, options), as opposed to content scripts in web pages. */
function fromExtensionPage(sender) {
  return sender.id === chrome.runtime.id && (sender.url ?? "").startsWith(chrome.runtime.getURL(""));
}

/** What the popup asks the worker to do for the person; answered with the popup's new state. */
async function personRequest(message) {
  switch (message.kind) {
    case Popup.PAUSE:
      await setPaused(message.paused === true);
      if (message.paused === true) cancelApprovals(() => true, pausedError());
      break;
    case Popup.END_SESSION:
      cancelApprovals((owner) => owner === ownerKey(message.port, message.sessionId), {
        code: PersonRefusal.NOT_APPROVED,
        message: "the person ended the session before answering",
      });
      await endSession(message.port, message.sessionId);
      break;
    case Popup.RELEASE_TAB:
      await takeBack(message.tabId);
      break;
    default:
  }
  return popupState();
}

/** The person typed a pairing code for the broker on `port`: the popup's state, and how it went. */
async function pairRequest(message) {
  const port = Number(message.port);
  let error = null;
  try {
    await pairLink(port, String(message.code ?? ""));
  } catch (failure) {
    error = failure.message;
  }
  return { ...(await popupState()), paired: { port, error } };
}

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  const answer = (promise) => {
    promise.then(sendResponse, (error) => sendResponse({ error: String(error) }));
    return true; // answers asynchronously
  };
  switch (message?.kind) {
    case Bridge.TOOLS:
      toolsReported(sender, message.tools);
      break;
    case Bridge.WAKE:
      // waker.js, once per document, for the sender's own document as Chromium names it.
      if (sender.id === chrome.runtime.id && sender.tab) wakeBridge(sender);
      break;
    case Popup.STATE:
      return answer(popupState());
    case Popup.PAUSE:
    case Popup.END_SESSION:
    case Popup.RELEASE_TAB:
      if (!fromExtensionPage(sender)) break;
      return answer(personRequest(message));
    case Popup.PAIR:
      if (!fromExtensionPage(sender)) break;
      return answer(pairRequest(message));
    case Approval.DETAILS:
      if (!fromExtensionPage(sender)) break;
      sendResponse(approvalDetails(message.id));
      break;
    case Approval.ANSWER:
      if (fromExtensionPage(sender)) answerApproval(message.id, message.decision);
      sendResponse(null);
      break;
    default:
      console.warn("browser-mcp: unknown runtime message", message?.kind);
  }
  return false;
});

chrome.storage.onChanged.addListener((changes, area) => {
  if (pairingChanged(changes, area)) retryUnpaired();
  const changed = settingsChanged(changes, area);
  if (changed.some((key) => ["portFirst", "portLast", "ignoredPorts"].includes(key))) discoverySettingsChanged();
  // The brokers list browser_evaluate by what the snapshot says this browser carries out.
  if (changed.includes("allowEvaluate")) for (const link of joinedLinks()) sendSnapshot(link);
});

chrome.runtime.onInstalled.addListener(injectBridges);

rebuildAlso(restoreRefNumbers);
reportFrom({ ready: Promise.all([ready, pauseReady]), paused: isPaused, tabInfo, driver: driverAbilities() });
onLinkMessage(handleBrokerMessage);
// A broker that went away may come back on another port, or another may take its place.
onLinkLost(discoverSoon);
onJoinedChange(showStanding);
startKeepalive();
stayAwakeWhileJoined();

// The alarm wakes a worker that Chromium stopped while no broker was there to talk to, and
// picks up a native host installed since.
chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === WAKE_ALARM) wakeDiscovery();
});
startDiscovery({
  ports: sessionPorts,
  forget(port) {
    forgetSessions(port, () => true).catch((error) => console.warn("browser-mcp: cannot forget sessions", error));
    releaseSessions(port, () => true).catch((error) => console.warn("browser-mcp: cannot detach", error));
  },
});
