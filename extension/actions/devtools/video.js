// A tab's video in Chromium: Page.startScreencast on the tab's DevTools session sends a JPEG of
// each frame Chromium paints (each acknowledged with Page.screencastFrameAck, or no more come);
// the worker has no DOM, so the frames go to an offscreen document (chrome.offscreen, the
// manifest's `offscreen` permission; video_offscreen.js), whose canvas and recorder
// (../video_canvas.js) make the WebM. A page that paints nothing new sends no frames: after
// QUIET_MS the video takes a screenshot instead, so a still page still gets its frames (headless
// Chromium paints a tab behind others too; a visible window's hidden tab may not be painted, and
// then gets no frames but the ones it had). The video ends with the debugger's session (the
// client let the tab go, its session ended, the tab closed: debugger.js) or when it is no longer
// its client's (../video.js); the rest of the tools is ../video.js's.

import { onTabEvent, onTabForgotten, send } from "./debugger.js";
import { ActionError, Code, sleep } from "../../base/errors.js";
import { endVideo, stillRecording, videoBegun, videoStarting } from "../video.js";
import { VIDEO_MESSAGE } from "../video_canvas.js";

export { stopVideo, videoChapter, videoHideActions, videoShowActions } from "../video.js";

const OFFSCREEN_URL = "offscreen/video.html";
const JPEG_QUALITY = 80;
const DEFAULT_LONGEST = 1280;
const QUIET_MS = 1000;
const STILL_CAPTURE_TIMEOUT_MS = 3000;
const FIRST_FRAME_MS = 3000;

/** tab id -> {id, recorder, fps, lastAt, timer} of the screencast feeding its video */
const casts = new Map();
let nextId = 1;
let creating = null;

const toOffscreen = (message) => chrome.runtime.sendMessage({ to: VIDEO_MESSAGE, ...message });

async function offscreenReady() {
  if (await chrome.offscreen.hasDocument()) return;
  creating ??= chrome.offscreen
    .createDocument({
      url: OFFSCREEN_URL,
      reasons: ["BLOBS"],
      justification: "Records a tab's video from its frames, as the AI client asked",
    })
    .finally(() => (creating = null));
  await creating;
}

/** One frame for the video, unless it came sooner than its fps wants; the video's bound ends it. */
function forward(tabId, cast, data) {
  const now = Date.now();
  if (now - cast.lastAt < 1000 / cast.fps) return;
  cast.lastAt = now;
  cast.framed();
  toOffscreen({ op: "frame", id: cast.id, data: `data:image/jpeg;base64,${data}` })
    .then((said) => said?.limit && stopCast(tabId))
    .catch(() => {});
}

/** Forget the tab's screencast (true if it had one), sending nothing. */
function dropCast(tabId) {
  const cast = casts.get(tabId);
  if (!cast) return false;
  casts.delete(tabId);
  clearInterval(cast.timer);
  return true;
}

function stopCast(tabId) {
  if (dropCast(tabId)) send(tabId, "Page.stopScreencast").catch(() => {});
}

onTabEvent((tabId, method, params) => {
  if (method !== "Page.screencastFrame") return;
  send(tabId, "Page.screencastFrameAck", { sessionId: params.sessionId }).catch(() => {});
  const cast = casts.get(tabId);
  if (!cast) return;
  if (stillRecording(tabId, cast.recorder)) forward(tabId, cast, params.data);
  else stopCast(tabId);
});

// Detached (let go of, the session ended, the bar cancelled) or closed: the video ends with it.
onTabForgotten((tabId) => {
  dropCast(tabId);
  endVideo(tabId);
});

/** A still page's frame, when the screencast has been quiet for QUIET_MS. */
async function stillFrame(tabId, cast) {
  if (!stillRecording(tabId, cast.recorder)) return stopCast(tabId);
  if (Date.now() - cast.lastAt < QUIET_MS || cast.capturing) return;
  cast.capturing = true;
  try {
    const { data } = await send(
      tabId,
      "Page.captureScreenshot",
      { format: "jpeg", quality: JPEG_QUALITY },
      STILL_CAPTURE_TIMEOUT_MS,
    );
    if (casts.get(tabId) === cast) forward(tabId, cast, data);
  } catch {
    // A tab Chromium does not paint keeps its last frame.
  } finally {
    cast.capturing = false;
  }
}

/** browser_start_video {videoName?, size?, fps?} */
export async function startVideo(tabId, args) {
  const options = videoStarting(tabId, args);
  await offscreenReady();
  const id = nextId++;
  await toOffscreen({ op: "start", id, size: options.size, fps: options.fps });
  const ask = (op, more = {}) => toOffscreen({ op, id, ...more });
  const recorder = {
    chapter: (card) => ask("chapter", { card }),
    caption: (caption) => ask("caption", { caption }),
    async stop() {
      stopCast(tabId);
      const made = await ask("stop");
      if (made?.error) throw new ActionError(Code.CAPTURE_FAILED, `the video could not be made: ${made.error}`);
      return made;
    },
    abort() {
      stopCast(tabId);
      return ask("abort");
    },
  };
  const cast = { id, recorder, fps: options.fps, lastAt: 0, timer: null, capturing: false, framed: null };
  const framed = new Promise((resolve) => (cast.framed = resolve));
  casts.set(tabId, cast);
  const answer = videoBegun(tabId, options, recorder);
  const longest = options.size ? Math.max(options.size.width, options.size.height) : DEFAULT_LONGEST;
  try {
    await send(tabId, "Page.startScreencast", {
      format: "jpeg",
      quality: JPEG_QUALITY,
      maxWidth: longest,
      maxHeight: longest,
      everyNthFrame: 1,
    });
  } catch (error) {
    endVideo(tabId);
    throw new ActionError(Code.CAPTURE_FAILED, `Chromium could not start the tab's screencast: ${error.message}`);
  }
  cast.timer = setInterval(() => stillFrame(tabId, cast), QUIET_MS / 2);
  // The answer waits for the first frame, so that what follows is in the video.
  await Promise.race([framed, stillFrame(tabId, cast).then(() => sleep(FIRST_FRAME_MS))]);
  return answer;
}
