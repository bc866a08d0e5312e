// The canvas and recorder of a tab's video, for both browsers: frames of the tab (JPEG or PNG data
// URLs) drawn on a canvas, with a chapter card or an action's caption drawn over them, and the
// canvas's stream recorded by the browser's own MediaRecorder as WebM (VP8). It needs a document:
// Chromium's offscreen one (devtools/video_offscreen.js), Firefox's event page (webext/video.js).
// Nothing here is drawn in the page, so the page never sees a card or a caption.
//
// The canvas is painted at a steady rate (the video's fps) from the latest frame, so a page that
// stands still still makes a video and a card shows for its whole time. A video is bounded: it
// stops taking frames at MAX_MS or once the recorder has handed over MAX_BYTES, and its stop says
// so. What it reports of the file (frames, size) is read back from the WebM itself.

// What Chromium's worker and its offscreen document address their messages to (devtools/video.js).
export const VIDEO_MESSAGE = "browser-mcp-video";
export const MAX_MS = 5 * 60_000;
export const MAX_BYTES = 10_000_000;
const BITS_PER_SECOND = 2_500_000;
const SLICE_MS = 1000;
// How long the recorder is given before its first frames are in.
const WARM_UP_MS = 1500;
// A frame's longest side when the start gave no size.
const DEFAULT_LONGEST = 1280;
const MIME = "video/webm;codecs=vp8";

const even = (n) => Math.max(16, 2 * Math.round(n / 2));

/** The video's size: `size` as given (even), else the first frame's, at most DEFAULT_LONGEST wide or high. */
function videoSize(size, frame) {
  if (size) return { width: even(size.width), height: even(size.height) };
  const scale = Math.min(1, DEFAULT_LONGEST / Math.max(frame.width, frame.height));
  return { width: even(frame.width * scale), height: even(frame.height * scale) };
}

/** The bytes as base64, in slices (a long string of arguments overflows the stack). */
export function base64Of(bytes) {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

// The WebM (Matroska) elements read here: the masters entered, the frames counted.
const EBML_HEADER = 0x1a45dfa3;
const SEGMENT = 0x18538067;
const CLUSTER = 0x1f43b675;
const BLOCK_GROUP = 0xa0;
const SIMPLE_BLOCK = 0xa3;
const PIXEL_WIDTH = 0xb0;
const PIXEL_HEIGHT = 0xba;
const TRACKS = 0x1654ae6b;
const TRACK_ENTRY = 0xae;
const VIDEO = 0xe0;
const ENTERED = new Set([SEGMENT, CLUSTER, TRACKS, TRACK_ENTRY, VIDEO]);

/** An EBML variable-length number at `at`: {value, length, unknown} (unknown: all ones, a live stream's size). */
function vint(bytes, at, keepMarker) {
  const first = bytes[at];
  let length = 1;
  while (length <= 8 && !(first & (0x80 >> (length - 1)))) length += 1;
  let value = keepMarker ? first : first & (0xff >> length);
  let ones = value === 0xff >> length;
  for (let i = 1; i < length; i += 1) {
    value = value * 256 + bytes[at + i];
    ones = ones && bytes[at + i] === 0xff;
  }
  return { value, length, unknown: !keepMarker && ones };
}

/** What the WebM holds: its frames (SimpleBlocks and Blocks) and its pixel size, read as a player would. */
export function webmFacts(bytes) {
  const facts = { frames: 0, width: 0, height: 0 };
  let at = 0;
  while (at < bytes.length) {
    const id = vint(bytes, at, true);
    const size = vint(bytes, at + id.length, false);
    const body = at + id.length + size.length;
    if (ENTERED.has(id.value)) {
      at = body;
      continue;
    }
    if (id.value === SIMPLE_BLOCK || id.value === BLOCK_GROUP) facts.frames += 1;
    if (id.value === PIXEL_WIDTH || id.value === PIXEL_HEIGHT) {
      let n = 0;
      for (let i = 0; i < size.value; i += 1) n = n * 256 + bytes[body + i];
      facts[id.value === PIXEL_WIDTH ? "width" : "height"] = n;
    }
    if (size.unknown) break;
    at = body + size.value;
  }
  if (vint(bytes, 0, true).value !== EBML_HEADER) facts.frames = 0;
  return facts;
}

const PLACES = {
  "top-left": [0, 0],
  top: [0.5, 0],
  "top-right": [1, 0],
  "bottom-left": [0, 1],
  bottom: [0.5, 1],
  "bottom-right": [1, 1],
};

/** The lines of `text` that fit `width` in the context's font, at most `most` of them. */
function wrapped(context, text, width, most) {
  const lines = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const longer = line ? `${line} ${word}` : word;
    if (line && context.measureText(longer).width > width) {
      lines.push(line);
      line = word;
    } else line = longer;
  }
  if (line) lines.push(line);
  return lines.slice(0, most);
}

/** One video: a canvas, its stream and recorder, fed frames; `ended(why)` when a bound stopped it. */
export class VideoCanvas {
  constructor({ size = null, fps = 25, ended = () => {} } = {}) {
    this.size = size;
    this.fps = fps;
    this.ended = ended;
    this.latest = null;
    this.canvas = null;
    this.card = null;
    this.caption = null;
    this.chunks = [];
    this.bytes = 0;
    this.drawn = 0;
    this.startedAt = Date.now();
    this.limit = null;
    this.timer = null;
    this.recorder = null;
  }

  /** A frame of the tab, as a data URL; the first one sizes and starts the video. */
  async frame(dataUrl) {
    if (this.limit) return;
    const blob = await (await fetch(dataUrl)).blob();
    const bitmap = await createImageBitmap(blob);
    if (this.limit) return bitmap.close();
    this.latest?.close();
    this.latest = bitmap;
    if (!this.canvas) this.begin(bitmap);
  }

  begin(first) {
    const { width, height } = videoSize(this.size, first);
    this.canvas = document.createElement("canvas");
    Object.assign(this.canvas, { width, height });
    this.context = this.canvas.getContext("2d");
    const stream = this.canvas.captureStream(0);
    this.track = stream.getVideoTracks()[0];
    // The spec's requestFrame is the track's (Chromium); Firefox has it on the stream.
    this.requestFrame = this.track.requestFrame ? () => this.track.requestFrame() : () => stream.requestFrame();
    this.recorder = new MediaRecorder(stream, { mimeType: MIME, videoBitsPerSecond: BITS_PER_SECOND });
    this.recorder.ondataavailable = ({ data }) => {
      if (!data.size) return;
      this.chunks.push(data);
      this.bytes += data.size;
      if (this.bytes >= MAX_BYTES) this.bound(`${(MAX_BYTES / 1_000_000).toFixed(0)} MB`);
    };
    this.recorder.start(SLICE_MS);
    this.begunAt = Date.now();
    this.paint();
    this.timer = setInterval(() => this.paint(), 1000 / this.fps);
  }

  /** Stop taking frames at a bound; the recorder keeps what it has until the stop. */
  bound(why) {
    if (this.limit) return;
    this.limit = why;
    clearInterval(this.timer);
    this.ended(why);
  }

  /** The latest frame, fitted in the video (kept in proportion), and what is drawn over it. */
  paint() {
    if (Date.now() - this.startedAt >= MAX_MS) return this.bound(`${MAX_MS / 60_000} minutes`);
    const { context: c, canvas } = this;
    const now = Date.now();
    c.fillStyle = "#202124";
    c.fillRect(0, 0, canvas.width, canvas.height);
    const frame = this.latest;
    const scale = Math.min(canvas.width / frame.width, canvas.height / frame.height);
    const [w, h] = [frame.width * scale, frame.height * scale];
    const card = this.card && now < this.card.until ? this.card : null;
    c.filter = card ? "blur(6px)" : "none";
    c.drawImage(frame, (canvas.width - w) / 2, (canvas.height - h) / 2, w, h);
    c.filter = "none";
    if (card) this.drawCard(card);
    if (this.caption && now < this.caption.until) this.drawCaption(this.caption);
    this.requestFrame();
    this.drawn += 1;
  }

  drawCard({ title, description }) {
    const { context: c, canvas } = this;
    const unit = Math.max(12, Math.round(canvas.height / 14));
    c.fillStyle = "rgba(10, 20, 60, 0.72)";
    c.fillRect(0, 0, canvas.width, canvas.height);
    c.fillStyle = "#ffffff";
    c.textAlign = "center";
    c.textBaseline = "middle";
    c.font = `bold ${unit}px sans-serif`;
    const titles = wrapped(c, title, canvas.width * 0.85, 2);
    c.font = `${Math.round(unit * 0.5)}px sans-serif`;
    const lines = description ? wrapped(c, description, canvas.width * 0.8, 3) : [];
    let y = canvas.height / 2 - ((titles.length * 1.2 + lines.length * 0.7) * unit) / 2 + unit * 0.6;
    c.font = `bold ${unit}px sans-serif`;
    for (const line of titles) {
      c.fillText(line, canvas.width / 2, y);
      y += unit * 1.2;
    }
    c.font = `${Math.round(unit * 0.5)}px sans-serif`;
    for (const line of lines) {
      c.fillText(line, canvas.width / 2, y);
      y += unit * 0.7;
    }
  }

  drawCaption({ text, position }) {
    const { context: c, canvas } = this;
    const unit = Math.max(10, Math.round(canvas.height / 28));
    c.font = `${unit}px sans-serif`;
    const [line] = wrapped(c, text, canvas.width * 0.6, 1);
    const width = c.measureText(line).width + unit * 1.2;
    const height = unit * 1.8;
    const [fx, fy] = PLACES[position] ?? PLACES["top-right"];
    const margin = unit * 0.8;
    const x = margin + (canvas.width - width - 2 * margin) * fx;
    const y = margin + (canvas.height - height - 2 * margin) * fy;
    c.fillStyle = "rgba(0, 0, 0, 0.78)";
    c.beginPath();
    c.roundRect(x, y, width, height, unit * 0.4);
    c.fill();
    c.fillStyle = "#ffffff";
    c.textAlign = "left";
    c.textBaseline = "middle";
    c.fillText(line, x + unit * 0.6, y + height / 2);
  }

  /** A chapter card over the frames for `duration` ms. */
  chapter({ title, description = "", duration = 2000 }) {
    this.card = { title, description, until: Date.now() + duration };
  }

  /** A caption over the frames for `duration` ms (it replaces the one showing). */
  captionFor({ text, position = "top-right", duration = 1000 }) {
    this.caption = { text, position, until: Date.now() + duration };
  }

  /** Frames and recorder stopped: the WebM, as base64, with what it holds. */
  async stop() {
    const limit = this.limit;
    const durationMs = Date.now() - this.startedAt;
    if (!this.recorder) {
      this.abort();
      return { frames: 0, bytes: 0, width: 0, height: 0, durationMs, data: "", limit };
    }
    // Still painting, for the encoder's first frames (Chromium's hands over nothing within its
    // first moments) and the latest frame once more, so that a video stopped as soon as it began
    // still holds its frames.
    if (!limit) {
      const left = Math.max(1000 / this.fps, WARM_UP_MS - (Date.now() - this.begunAt));
      await new Promise((resolve) => setTimeout(resolve, left));
      this.paint();
    }
    clearInterval(this.timer);
    const recorded = Date.now() - this.startedAt;
    const stopped = new Promise((resolve) => (this.recorder.onstop = resolve));
    if (this.recorder.state !== "inactive") this.recorder.stop();
    await stopped;
    const bytes = new Uint8Array(await new Blob(this.chunks, { type: "video/webm" }).arrayBuffer());
    this.abort();
    const facts = webmFacts(bytes);
    return { ...facts, bytes: bytes.length, durationMs: recorded, data: base64Of(bytes), limit, drawn: this.drawn };
  }

  /** Let go of everything, keeping nothing. */
  abort() {
    clearInterval(this.timer);
    this.limit ??= "stopped";
    if (this.recorder?.state === "recording") this.recorder.stop();
    this.track?.stop();
    this.latest?.close();
    this.latest = null;
    this.chunks = [];
  }
}
