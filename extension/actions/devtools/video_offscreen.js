// The offscreen document of Chromium's tab videos (offscreen/video.html): the worker has no DOM,
// so each video's canvas and recorder (../video_canvas.js) live here, told by devtools/video.js
// over runtime messages addressed to VIDEO_MESSAGE: start, frame, chapter, caption, stop, abort.
// It hears nothing else and keeps nothing of a video once it is stopped or aborted.

import { VIDEO_MESSAGE, VideoCanvas } from "../video_canvas.js";

/** video id -> its VideoCanvas */
const videos = new Map();

async function handle({ op, id, ...given }) {
  const video = videos.get(id);
  switch (op) {
    case "start":
      videos.set(id, new VideoCanvas({ size: given.size, fps: given.fps }));
      return {};
    case "frame":
      if (!video) return { limit: "stopped" };
      await video.frame(given.data);
      return { limit: video.limit };
    case "chapter":
      video?.chapter(given.card);
      return {};
    case "caption":
      video?.captionFor(given.caption);
      return {};
    case "stop":
      videos.delete(id);
      return video ? video.stop() : { error: "it was ended before" };
    case "abort":
      videos.delete(id);
      video?.abort();
      return {};
    default:
      return { error: `no such video message: ${op}` };
  }
}

chrome.runtime.onMessage.addListener((message, sender, reply) => {
  if (message?.to !== VIDEO_MESSAGE || sender.id !== chrome.runtime.id) return false;
  handle(message).then(reply, (error) => reply({ error: String(error?.message ?? error) }));
  return true;
});
