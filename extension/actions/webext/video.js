// A tab's video in Firefox: the event page has a DOM, so the canvas and recorder
// (../video_canvas.js) live right here, fed with tabs.captureTab's JPEGs of the tab, which Firefox
// takes of a tab behind others too. Frames come as fast as captureTab gives them, at most the
// video's fps; each asks first whether the video is still its client's (../video.js), and the
// loop ends the moment it is not. The rest of the tools is ../video.js's.

import { ActionError, Code, sleep } from "../../base/errors.js";
import { stillRecording, videoBegun, videoStarting } from "../video.js";
import { VideoCanvas } from "../video_canvas.js";

export { stopVideo, videoChapter, videoHideActions, videoShowActions } from "../video.js";

const JPEG_QUALITY = 80;

const capture = (tabId) => chrome.tabs.captureTab(tabId, { format: "jpeg", quality: JPEG_QUALITY });

/** browser_start_video {videoName?, size?, fps?} */
export async function startVideo(tabId, args) {
  const options = videoStarting(tabId, args);
  const canvas = new VideoCanvas({ size: options.size, fps: options.fps });
  try {
    await canvas.frame(await capture(tabId));
  } catch (error) {
    canvas.abort();
    throw new ActionError(Code.CAPTURE_FAILED, `Firefox could not capture the tab: ${error.message}`);
  }
  const recorder = {
    chapter: (card) => canvas.chapter(card),
    caption: (caption) => canvas.captionFor(caption),
    stop: () => canvas.stop(),
    abort: () => canvas.abort(),
  };
  const answer = videoBegun(tabId, options, recorder);
  (async () => {
    while (stillRecording(tabId, recorder) && !canvas.limit) {
      const began = Date.now();
      await canvas.frame(await capture(tabId)).catch(() => {});
      await sleep(Math.max(0, 1000 / options.fps - (Date.now() - began)));
    }
  })();
  return answer;
}
