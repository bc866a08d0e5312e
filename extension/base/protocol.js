// The extension link's message types, exactly as broker/codec.py TAGS spells them.

/** Broker -> extension. */
export const FromBroker = Object.freeze({
  CONNECT: "connect",
  OPEN_TAB: "openTab",
  CLOSE_TAB: "closeTab",
  FOCUS_TAB: "focusTab",
  TAB_CLAIMED: "tabClaimed",
  TAB_RELEASED: "tabReleased",
  CALL_TOOL: "callTool",
  BROWSER_ACTION: "browserAction",
  BROWSER_REQUEST: "browserRequest",
  DISCOVER_TOOLS: "discoverTools",
  CANCEL_CALL: "cancelCall",
  PING: "ping",
  PONG: "pong",
  DISCONNECT: "disconnect",
  ERROR: "error",
  // The link handshake (broker_auth.js): the broker proves itself before anything else is heard.
  AUTH_PROOF: "authProof",
  PAIR_NONCE: "pairNonce",
  PAIR_KEY: "pairKey",
});

/**
 * toolResult error codes that say the person refused (broker/core/links.py maps them). They are the
 * extension's alone: the bridge reports whatever a page's tool throws as `tool_error`.
 */
export const PersonRefusal = Object.freeze({
  PAUSED: "paused",
  NOT_APPROVED: "not_approved",
  CONSENT_REQUIRED: "consent_required",
});

/**
 * toolResult error codes of the extension's own checks that name one of the broker's errors
 * (broker/core/links.py maps them): the broker's rules, kept by this browser too, and a dialog
 * waiting in the tab for browser_handle_dialog, which only the browser knows of.
 */
export const Refusal = Object.freeze({
  TAB_NOT_CLAIMED: "tab_not_claimed",
  TAB_BUSY: "tab_busy",
  DIALOG_OPEN: "dialog_open",
  // A claim of a tab another broker's live session holds (a tabClaimed's answer).
  TAB_OWNED: "tab_owned",
});

/**
 * The codes of an `error {code, message, requestId}` answering a closeTab the extension did not
 * carry out, beside Refusal.TAB_NOT_CLAIMED and PersonRefusal.PAUSED (broker/core/links.py maps
 * them): the page's beforeunload asks the person whether to leave, and the tab stays until they say.
 */
export const CloseRefusal = Object.freeze({
  CLOSE_HELD: "close_held",
});

/** Extension -> broker. */
export const ToBroker = Object.freeze({
  CONNECTED: "connected",
  TAB_CREATED: "tabCreated",
  TAB_UPDATED: "tabUpdated",
  TAB_CLOSED: "tabClosed",
  TAB_FOCUSED: "tabFocused",
  TOOLS_CHANGED: "toolsChanged",
  TOOLS_DISCOVERED: "toolsDiscovered",
  TOOL_RESULT: "toolResult",
  PING: "ping",
  PONG: "pong",
  DISCONNECTED: "disconnected",
  // A request not carried out ({code, message, requestId}): a closeTab refused or held.
  ERROR: "error",
  // What the person did in the browser (person.js, approvals.js).
  PERSON_ENDED_SESSION: "personEndedSession",
  PERSON_RELEASED_TAB: "personReleasedTab",
  PAUSE_CHANGED: "pauseChanged",
  APPROVAL_PENDING: "approvalPending",
  // The link handshake (broker_auth.js).
  AUTH_CHALLENGE: "authChallenge",
  AUTH_RESPONSE: "authResponse",
  PAIR_CHALLENGE: "pairChallenge",
  PAIR_PROOF: "pairProof",
});

/**
 * What this extension carries out beyond tabs, announced in `connected.features`: windows (tabs'
 * windowId, index and pinned; openTab's windowId, newWindow and pinned; listWindows, focusWindow,
 * closeWindow), history (searchHistory) and bookmarks (searchBookmarks, createBookmark), and
 * deleteHistory, bookmarkTree and deleteBookmark, each a browserRequest of its name
 * (browser_wide.js); and claims: a tabClaimed with a callId is answered with toolResult, refused
 * (tab_owned) for a tab another broker's session holds (broker_requests.js).
 */
export const BROWSER_FEATURES = Object.freeze([
  "windows",
  "history",
  "bookmarks",
  "deleteHistory",
  "bookmarkTree",
  "deleteBookmark",
  "claims",
]);

/** Every answer of a broker carries this header (broker/version.py BROKER_HEADER). */
export const BROKER_HEADER = "X-Browser-MCP-Broker";

/** The ports the broker picks from when none is given, probed without a native host. */
export const PORT_FIRST = 8765;
export const PORT_LAST = 8785;

/** The native messaging host that streams the live brokers: {type: "brokers", brokers: [{port, token, pid}]}. */
export const NATIVE_HOST = "browser_mcp.broker";

/**
 * Between the page and the service worker (chrome.runtime messaging): the bridge (bridge.js) and the
 * waker (waker.js), both in the isolated world; the page's own world cannot reach the worker.
 * The worker asks a bridge for its tools through chrome.scripting instead (page_tools.js).
 */
export const Bridge = Object.freeze({
  TOOLS: "browser-mcp/tools", // bridge -> worker: {kind, tools}
  WAKE: "browser-mcp/wake", // waker -> worker, once per document: put the bridge (and the forms' machinery) in the sender's document; no answer
  CALL: "browser-mcp/call", // worker -> bridge: {kind, id, name, args}, answered with {result} or {error}
  CANCEL: "browser-mcp/cancel", // worker -> bridge: {kind, id}: the call's AbortSignal fires
  // A frame's bridge -> worker, a runtime port held open while the frame has tools: its closing
  // tells the worker the frame went, where its pagehide report can be lost (Firefox).
  FRAME_PORT: "browser-mcp/frame",
});

/** Between the popup and the service worker; each is answered with the state the popup shows. */
export const Popup = Object.freeze({
  STATE: "browser-mcp/popupState",
  PAUSE: "browser-mcp/pause", // {kind, paused}
  END_SESSION: "browser-mcp/endSession", // {kind, port, sessionId}
  RELEASE_TAB: "browser-mcp/releaseTab", // {kind, tabId}
  PAIR: "browser-mcp/pair", // {kind, port, code}, answered with the state and {paired: {port, error?}}
});

/** Between an approval window and the service worker. */
export const Approval = Object.freeze({
  DETAILS: "browser-mcp/approvalDetails", // {kind, id}, answered with what to show, or null
  ANSWER: "browser-mcp/approvalAnswer", // {kind, id, decision: "once" | "always" | "deny"}
});
