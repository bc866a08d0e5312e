// What a broker asks of this browser, each message routed to the module that owns its subject:
// the one switch over protocol.js's FromBroker types. A new capability is a module of its own
// that handles its requests; wiring it in is one more case here. Whatever acts in a tab or window
// first passes the ownership rule (ownership.js): only in tabs the asking session holds. Whatever
// would reach a page (a page tool, a built-in browser tool) then passes the person's say
// (approvals.js): the pause, and their approval where the call needs it.

import { FromBroker, PersonRefusal, Refusal, ToBroker } from "./base/protocol.js";
import { ownerKey } from "./base/owner_key.js";
import { admit, approvalEnded } from "./person/approvals.js";
import { cancelApprovalOf, cancelApprovals } from "./person/approval_window.js";
import { releaseSessions, releaseTab } from "./actions/driver.js";
import { runBrowserAction } from "./actions/run.js";
import { isBrowserRequest, runBrowserRequest } from "./tabs/browser_wide.js";
import { isJoined, reply } from "./link/links.js";
import { unclaimed } from "./tabs/ownership.js";
import { callTool, discoverTools } from "./page_tools/tool_calls.js";
import { dialogOpenError } from "./actions/dialogs.js";
import { pageChanged } from "./tabs/documents.js";
import { parsedPageOf } from "./tabs/first_pages.js";
import { isPaused, pausedError } from "./person/person.js";
import { forgetSessions, groupTab, heldElsewhere, rememberSession, sessionName, ungroupTab } from "./tabs/sessions.js";
import { sendSnapshot } from "./link/snapshot.js";
import { closeTab, focusTab, openTab } from "./tabs/tabs.js";
import { heardVersions } from "./link/versions.js";
import { decodeFrame } from "./link/frames.js";
import { toolNamed } from "./actions/tools.js";

/**
 * What holds or refuses a page tool call; the Firefox tests' probe passes it too.
 * @type {import("./page_tools/tool_calls.js").CallGuards}
 */
export const TOOL_CALL_GUARDS = { pageChanged, dialogOpen: dialogOpenError, parsedPage: parsedPageOf };

/** @type {import("./link/frames.js").FrameNames} */
const FRAME_NAMES = { isAction: (action) => Boolean(toolNamed(action)), isRequest: isBrowserRequest };

/**
 * Carry out `message` from the broker at the other end of `link`, answering through it: read once
 * into its record (link/frames.js), which is what every module it goes to takes.
 */
export async function handleBrokerMessage(link, message) {
  const frame = decodeFrame(message, FRAME_NAMES);
  switch (frame?.type) {
    case FromBroker.CONNECT: {
      const connect = frame;
      if (connect.sessionId) {
        rememberSession(link.port, connect.sessionId, connect.clientName, connect.credential);
      } else {
        heardVersions(link, connect);
        if (connect.sessionIds) {
          // The sessions this broker told this browser of that live on: the others ended, or are
          // of a broker that restarted on this port.
          const ended = (sessionId) => !connect.sessionIds.includes(sessionId);
          await Promise.all([forgetSessions(link.port, ended), releaseSessions(link.port, ended)]);
          // The broker sends that list once it has this link's first snapshot: it needs no other.
          if (link.ready) break;
        }
      }
      await sendSnapshot(link, connect.sessionId);
      break;
    }
    case FromBroker.DISCONNECT: {
      const ended = (sessionId) => sessionId === frame.sessionId;
      cancelApprovals((owner) => owner === ownerKey(link.port, frame.sessionId), {
        code: PersonRefusal.NOT_APPROVED,
        message: "the session ended before the person answered",
      });
      await Promise.all([forgetSessions(link.port, ended), releaseSessions(link.port, ended)]);
      link.send(reply(ToBroker.DISCONNECTED, frame, {}));
      break;
    }
    case FromBroker.OPEN_TAB:
      await openTab(link, frame);
      break;
    case FromBroker.CLOSE_TAB: {
      const refusal = isPaused() ? pausedError() : await unclaimed(link, frame);
      if (!refusal) await closeTab(link, frame);
      else if (frame.requestId !== undefined) {
        link.send(reply(ToBroker.ERROR, frame, { ...refusal, requestId: frame.requestId }));
      } else console.warn(`browser-mcp: broker on port ${link.port} asked for closeTab: ${refusal.message}`);
      break;
    }
    case FromBroker.FOCUS_TAB:
      if (await held(link, frame)) await focusTab(link, frame);
      break;
    case FromBroker.TAB_CLAIMED:
      await claimTab(link, frame);
      break;
    case FromBroker.TAB_RELEASED:
      await Promise.all([ungroupTab(link.port, frame.sessionId, frame.tabId), releaseTab(frame.tabId)]);
      break;
    case FromBroker.CALL_TOOL:
      link.send(await admitted(link, frame, (approved, signal) => callTool(frame, approved, signal, TOOL_CALL_GUARDS)));
      break;
    case FromBroker.DISCOVER_TOOLS:
      link.send(await discoverTools(frame, TOOL_CALL_GUARDS));
      break;
    case FromBroker.BROWSER_ACTION:
      link.send(
        await admitted(link, frame, (approved, signal) =>
          frame.invalid ? failed(frame, frame.invalid) : runBrowserAction(link.port, frame, approved, signal),
        ),
      );
      break;
    case FromBroker.CANCEL_CALL: {
      // The broker answered its client already (cancelled, timed out, or its session ended).
      const call = `${link.port}/${frame.callId}`;
      running.get(call)?.abort(new DOMException(`the broker called the call off (${frame.reason})`, "AbortError"));
      cancelApprovalOf(call, {
        code: PersonRefusal.NOT_APPROVED,
        message: "the call was called off before the person answered",
      });
      break;
    }
    case FromBroker.BROWSER_REQUEST:
      // The pause stops a browser-wide request as it would start, approved or not.
      link.send(
        await admitted(link, frame, (approved) =>
          isPaused()
            ? failed(frame, pausedError())
            : frame.invalid
              ? failed(frame, frame.invalid)
              : runBrowserRequest(frame, approved),
        ),
      );
      break;
    case FromBroker.PING:
      link.send({ type: ToBroker.PONG });
      break;
    case FromBroker.PONG:
      break;
    case FromBroker.ERROR:
      console.warn(`browser-mcp: broker on port ${link.port} refused a message: ${frame.code}: ${frame.message}`);
      break;
    default:
      console.warn("browser-mcp: unknown message type from the broker", message?.type);
  }
}

/**
 * A broker's session claims a tab: grouped as that session's, unless a live session of another
 * broker holds it, whose claim stands (tab_owned, naming it). A broker that asks with a callId
 * hears either way; one that does not (older) is not told, and its later calls there are refused
 * as the tab is not its session's (ownership.js).
 */
/** @param {import("./link/frames.js").TabFrame} frame */
async function claimTab(link, frame) {
  // A broker no longer joined holds nothing: its sessions ended with it, as far as this browser knows.
  const found = heldElsewhere(link.port, frame.tabId);
  const holder = found && isJoined(found.port) ? found : null;
  const answer = (error) => {
    if (frame.callId) link.send(reply(ToBroker.TOOL_RESULT, frame, { callId: frame.callId, result: null, error }));
  };
  if (holder) {
    const text =
      `tab ${frame.tabId} is held by session ${JSON.stringify(sessionName(holder.port, holder.sessionId))} of` +
      ` the broker on port ${holder.port}, which this browser also joins: it stays that session's until it` +
      " releases it, or the person takes it back";
    console.warn(`browser-mcp: broker on port ${link.port} claimed a tab another holds: ${text}`);
    answer({ code: Refusal.TAB_OWNED, message: text });
    return;
  }
  try {
    await groupTab(link.port, frame.sessionId, frame.tabId);
  } catch (error) {
    // Held all the same (a tab of a popup window cannot be grouped): groupTab noted it first.
    console.warn(`browser-mcp: tab ${frame.tabId} could not be grouped`, error);
  }
  answer(null);
}

/**
 * Whether the session holds the tab a focusTab names; it has no answer to refuse with.
 * @param {import("./link/frames.js").TabFrame} frame
 */
async function held(link, frame) {
  const refused = await unclaimed(link, frame);
  if (refused) console.warn(`browser-mcp: broker on port ${link.port} asked for ${frame.type}: ${refused.message}`);
  return !refused;
}

/** "port/callId" -> the AbortController of a call running in a page, for cancelCall. */
const running = new Map();

/**
 * `run(approved, signal)`'s toolResult, or a refusal: the tab is not the session's, or the person
 * paused agents or did not approve the call; `approved` (what they approved, when they were
 * asked) binds the run to the page they saw; `signal` fires when the broker calls the call off.
 * A frame that cannot be carried out as sent (its record's `invalid`) is `run`'s to answer, so that
 * the tab's ownership and the person's say come first, as for any call.
 * @param {import("./link/frames.js").CallToolFrame | import("./link/frames.js").BrowserActionFrame
 *   | import("./link/frames.js").BrowserRequestFrame} frame
 */
async function admitted(link, frame, run) {
  const call = `${link.port}/${frame.callId}`;
  // Known before anything is awaited: a call the broker calls off while its tab is looked up must
  // not run on regardless (a 20 s wait would hold its tab the whole time).
  const controller = new AbortController();
  running.set(call, controller);
  try {
    const unheld = await unclaimed(link, frame);
    if (unheld) return failed(frame, unheld);
    if (controller.signal.aborted) return cancelled(frame);
    const { error, approved } = await admit(link, frame);
    if (error) return failed(frame, error);
    try {
      if (controller.signal.aborted) return cancelled(frame);
      return await run(approved, controller.signal);
    } finally {
      approvalEnded(approved);
    }
  } finally {
    running.delete(call);
  }
}

/** The toolResult of a call that did not run, answered with `error` {code, message}. */
function failed(frame, error) {
  return reply(ToBroker.TOOL_RESULT, frame, { callId: frame.callId, error });
}

/** The answer of a call the broker called off before it ran: the broker drops it, as it answered already. */
function cancelled(frame) {
  return failed(frame, { code: "cancelled", message: "the broker called the call off before it ran" });
}
