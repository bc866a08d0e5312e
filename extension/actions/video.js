// What both page drivers share of a tab's video (browser_start_video, browser_stop_video,
// browser_video_chapter, browser_video_show_actions, browser_video_hide_actions): one video per
// tab, its options checked, its recorder (the driver's: devtools/video.js, webext/video.js, each
// feeding a video_canvas.js canvas) told of cards and captions, and the stop's answer, the WebM as
// a browser-mcp:file resource beside a line of what it holds.
//
// A video is the client's that started it: it holds while the session that held the tab then
// still holds it (as network_routes.js's routes do). It ends, its recorder and frames stopped and
// nothing kept, as soon as that changes (the session ended, released the tab, the person took it
// back, another session claimed it) or the tab closes: the drivers ask `stillRecording` with every
// frame, and the debugger's detaching (Chromium) or the tab's closing ends it at once.
//
// With show_actions on, run.js tells `captionAction` of each action that changes something
// (not the read-only ones) before it runs in the tab: its caption is drawn on the video's canvas,
// never in the page.

import { ActionError, Code, invalidArguments } from "../base/errors.js";
import { holderOf } from "./network_routes.js";
import { sections, textResult } from "./results.js";
import { MAX_BYTES, MAX_MS } from "./video_canvas.js";

const DEFAULT_FPS = 25;
const MAX_FPS = 30;
const CAPTION_CHARS = 90;
const BOUNDS = `at most ${MAX_MS / 60_000} minutes or ${MAX_BYTES / 1_000_000} MB`;

/** tab id -> {holder, recorder, startedAt, name, actions} */
const videos = new Map();
let closesHeard = false;

/** The video's options from browser_start_video's arguments (the broker checked them too). */
function optionsOf(args) {
  const fps = args.fps ?? DEFAULT_FPS;
  if (typeof fps !== "number" || !(fps >= 1 && fps <= MAX_FPS)) {
    throw invalidArguments(`fps must be a number from 1 to ${MAX_FPS}`);
  }
  const { size } = args;
  if (size !== undefined && !(size && size.width >= 16 && size.height >= 16)) {
    throw invalidArguments("size must be {width, height}, each 16 pixels or more");
  }
  const name = typeof args.videoName === "string" && args.videoName ? args.videoName : "video.webm";
  return { fps, size: size ?? null, name: /\.webm$/i.test(name) ? name : `${name}.webm` };
}

/** End the tab's video, if it has one: its recorder and frames stop, and nothing of it is kept. */
export function endVideo(tabId) {
  const video = videos.get(tabId);
  if (!video) return;
  videos.delete(tabId);
  Promise.resolve(video.recorder.abort()).catch(() => {});
}

/** The tab's video while its starter still holds the tab; else null (and ended). */
function liveVideo(tabId) {
  const video = videos.get(tabId);
  if (video && video.holder !== holderOf(tabId)) endVideo(tabId);
  return videos.get(tabId) ?? null;
}

/** Whether `recorder` is still the tab's live video (a driver asks with each frame, and stops if not). */
export function stillRecording(tabId, recorder) {
  return liveVideo(tabId)?.recorder === recorder;
}

/** The options of a video the tab may start: action_failed while one records in it. */
export function videoStarting(tabId, args) {
  if (liveVideo(tabId)) {
    throw new ActionError(Code.ACTION_FAILED, "a video is already recording in the tab: browser_stop_video saves it");
  }
  return optionsOf(args);
}

/**
 * The driver's recorder is the tab's video from now on: `{chapter(card), caption(caption),
 * stop() -> {data, bytes, frames, width, height, durationMs, limit}, abort()}`.
 */
export function videoBegun(tabId, options, recorder) {
  if (!closesHeard) {
    closesHeard = true;
    chrome.tabs.onRemoved.addListener((closed) => endVideo(closed));
  }
  videos.set(tabId, { holder: holderOf(tabId), recorder, startedAt: Date.now(), name: options.name, actions: null });
  const size = options.size ? `${options.size.width}x${options.size.height} pixels` : "the tab's size";
  return textResult(
    sections([
      "Result",
      [
        `- Recording the tab at up to ${options.fps} frames a second, ${size}; ${BOUNDS}`,
        "- browser_stop_video saves it; it ends unsaved if you let the tab go or it closes",
      ],
    ]),
  );
}

function recording(tabId) {
  const video = liveVideo(tabId);
  if (!video)
    throw new ActionError(Code.ACTION_FAILED, "no video is recording in the tab: browser_start_video starts one");
  return video;
}

/** browser_stop_video {} */
export async function stopVideo(tabId) {
  const video = recording(tabId);
  videos.delete(tabId);
  const made = await video.recorder.stop();
  if (!made.frames) {
    throw new ActionError(
      Code.CAPTURE_FAILED,
      `the video holds no frame: the browser gave none of the tab (${made.bytes} bytes, ${made.drawn} drawn)`,
    );
  }
  const lines = [
    `- Recorded ${(made.durationMs / 1000).toFixed(1)} s of the tab: ${made.width}x${made.height} pixels,` +
      ` ${made.frames.toLocaleString("en")} frames, ${made.bytes.toLocaleString("en")} bytes of WebM (VP8)`,
  ];
  if (made.limit) lines.push(`- It stopped taking frames at its bound of ${made.limit}`);
  return {
    content: [
      { type: "text", text: sections(["Result", lines]) },
      {
        type: "resource",
        resource: { uri: `browser-mcp:file/${video.name}`, mimeType: "video/webm", blob: made.data },
      },
    ],
  };
}

const answer = (line) => textResult(sections(["Result", [line]]));

/** browser_video_chapter {title, description?, duration?} */
export async function videoChapter(tabId, args) {
  const video = recording(tabId);
  if (typeof args.title !== "string" || !args.title.trim()) throw invalidArguments("title must be text");
  const duration = args.duration ?? 2000;
  await video.recorder.chapter({ title: args.title, description: args.description ?? "", duration });
  return answer(`- Chapter "${args.title}" shows on the video for ${(duration / 1000).toFixed(1)} s`);
}

/** browser_video_show_actions {duration?, position?} */
export async function videoShowActions(tabId, args) {
  const video = recording(tabId);
  video.actions = { duration: args.duration ?? 1000, position: args.position ?? "top-right" };
  return answer(`- Your actions in the tab are captioned on the video (${video.actions.position})`);
}

/** browser_video_hide_actions {} */
export async function videoHideActions(tabId) {
  recording(tabId).actions = null;
  return answer("- Your actions are no longer captioned on the video");
}

/** The caption of an action: its tool and what it acts on, in a line. */
function captionOf(tool, args) {
  const what = args.element ?? args.url ?? args.key ?? (typeof args.text === "string" ? `"${args.text}"` : "");
  const line = `${tool.name.replaceAll("_", " ")}${what ? `: ${what}` : ""}`;
  return line.length > CAPTION_CHARS ? `${line.slice(0, CAPTION_CHARS - 1)}…` : line;
}

/** run.js, as an action starts in the tab: its caption on the tab's video, if show_actions is on. */
export function captionAction(tabId, tool, args) {
  const video = videos.get(tabId);
  if (!video?.actions || tool.readOnly || !liveVideo(tabId)) return;
  Promise.resolve(video.recorder.caption({ text: captionOf(tool, args), ...video.actions })).catch(() => {});
}
