// The tools whose product is a file, over the DevTools protocol: browser_pdf_save (Page.printToPDF)
// and a performance trace of the tab (browser_start_tracing, browser_stop_tracing: the Tracing
// domain, read back through IO.read). Each file goes back to the broker as an MCP embedded resource
// named `browser-mcp:file/<suggested name>` beside a line of text; the broker writes it into the
// client's output folder and answers with its path instead of the bytes (broker/outputs.py).
//
// Chromium records one trace at a time, whatever the tab or the client: a start while another
// tab's trace runs is refused, naming no tab. A trace on a tab target holds the events of that
// tab's renderer process alone (seen in Chromium 156: a tab of another site, or of the same site
// in its own process, leaves nothing in it). It ends with the debugger's session: when the client
// lets the tab go or its session ends (debugger.js detaches), when the person cancels the
// debugging bar, or when the tab closes; what was kept of it goes then too.

import { onTabForgotten, send, waitForEvent } from "./debugger.js";
import { ActionError, Code } from "../../base/errors.js";
import { sections, textResult } from "../results.js";

export const FILE_URI = "browser-mcp:file/";
// A file's bytes, as base64, or a trace's text: well below the broker's 32 MB frame, escaping included.
const MAX_FILE_CHARS = 16_000_000;
const PRINT_TIMEOUT_MS = 25_000;
const TRACE_END_TIMEOUT_MS = 15_000;
const READ_CHUNK = 4 * 1024 * 1024;
// What DevTools' Performance panel records: the page's main thread, scripts, layout and paint,
// its loading, user timing marks and console time stamps, and a sampling CPU profile.
const TRACE_CATEGORIES = [
  "-*",
  "devtools.timeline",
  "disabled-by-default-devtools.timeline",
  "disabled-by-default-devtools.timeline.frame",
  "disabled-by-default-devtools.timeline.stack",
  "v8.execute",
  "disabled-by-default-v8.cpu_profiler",
  "blink.console",
  "blink.user_timing",
  "latencyInfo",
  "loading",
];
// A ring buffer: a long trace keeps its latest events and stays of a size the broker takes.
const TRACE_BUFFER_KB = 6 * 1024;

/** tab id -> {startedAt} of the trace running in it. */
const traces = new Map();

onTabForgotten((tabId) => traces.delete(tabId));

/** An MCP embedded resource carrying a file for the broker to write. */
function fileItem(name, mimeType, content) {
  return { type: "resource", resource: { uri: `${FILE_URI}${name}`, mimeType, ...content } };
}

const megabytes = (chars) => `${(chars / 1_000_000).toFixed(1)} MB`;

/** browser_pdf_save {}: the page printed as a person's print to PDF would, backgrounds included. */
export async function pdfSave(tabId) {
  let printed;
  try {
    printed = await send(
      tabId,
      "Page.printToPDF",
      { printBackground: true, preferCSSPageSize: true, transferMode: "ReturnAsBase64" },
      PRINT_TIMEOUT_MS,
    );
  } catch (error) {
    if (error instanceof ActionError && error.code !== Code.ACTION_FAILED) throw error;
    throw new ActionError(Code.CAPTURE_FAILED, `Chromium could not print the page to PDF: ${error.message}`);
  }
  const { data } = printed;
  if (data.length > MAX_FILE_CHARS) {
    throw new ActionError(
      Code.CAPTURE_FAILED,
      `the page's PDF is ${megabytes((data.length * 3) / 4)}, more than the ${megabytes((MAX_FILE_CHARS * 3) / 4)} a file may be`,
    );
  }
  const bytes = Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);
  const { url } = await chrome.tabs.get(tabId);
  return {
    content: [
      {
        type: "text",
        text: sections(["Result", [`- Printed ${url} to a PDF of ${bytes.toLocaleString("en")} bytes`]]),
      },
      fileItem("page.pdf", "application/pdf", { blob: data }),
    ],
  };
}

/** browser_start_tracing {} */
export async function startTracing(tabId) {
  if (traces.has(tabId)) {
    throw new ActionError(Code.ACTION_FAILED, "the tab's trace is already running: browser_stop_tracing saves it");
  }
  try {
    await send(tabId, "Tracing.start", {
      transferMode: "ReturnAsStream",
      streamFormat: "json",
      streamCompression: "none",
      traceConfig: {
        recordMode: "recordContinuously",
        traceBufferSizeInKb: TRACE_BUFFER_KB,
        includedCategories: TRACE_CATEGORIES,
      },
    });
  } catch (error) {
    if (/already been started/i.test(error.message)) {
      throw new ActionError(
        Code.ACTION_FAILED,
        "another tab's trace is running, and Chromium records one trace at a time: try again once it has stopped",
      );
    }
    throw error;
  }
  traces.set(tabId, { startedAt: Date.now() });
  return textResult(sections(["Result", ["- Tracing the tab: browser_stop_tracing ends the trace and saves it"]]));
}

/** The whole of a protocol stream (IO.read), as text; fails past MAX_FILE_CHARS. */
async function readStream(tabId, handle) {
  const parts = [];
  let length = 0;
  try {
    for (;;) {
      const { data, eof, base64Encoded } = await send(tabId, "IO.read", { handle, size: READ_CHUNK });
      const text = base64Encoded ? new TextDecoder().decode(Uint8Array.from(atob(data), (c) => c.charCodeAt(0))) : data;
      parts.push(text);
      length += text.length;
      if (length > MAX_FILE_CHARS) {
        throw new ActionError(
          Code.CAPTURE_FAILED,
          `the trace is over ${megabytes(MAX_FILE_CHARS)}, more than a file may be: trace a shorter time`,
        );
      }
      if (eof) return parts.join("");
    }
  } finally {
    await send(tabId, "IO.close", { handle }).catch(() => {});
  }
}

/** browser_stop_tracing {} */
export async function stopTracing(tabId) {
  const trace = traces.get(tabId);
  if (!trace) {
    throw new ActionError(Code.ACTION_FAILED, "no trace is running in the tab: browser_start_tracing starts one");
  }
  traces.delete(tabId);
  const completed = waitForEvent(tabId, (method) => method === "Tracing.tracingComplete", TRACE_END_TIMEOUT_MS);
  try {
    await send(tabId, "Tracing.end");
  } catch (error) {
    completed.cancel();
    throw new ActionError(Code.CAPTURE_FAILED, `Chromium could not end the trace: ${error.message}`);
  }
  const complete = await completed;
  if (!complete?.stream) {
    throw new ActionError(
      Code.CAPTURE_FAILED,
      "Chromium did not hand over the trace (the tab's debugger session ended)",
    );
  }
  const text = await readStream(tabId, complete.stream);
  let events;
  try {
    const parsed = JSON.parse(text);
    events = (Array.isArray(parsed) ? parsed : parsed.traceEvents).length;
  } catch {
    throw new ActionError(Code.CAPTURE_FAILED, "Chromium's trace is not JSON");
  }
  const seconds = ((Date.now() - trace.startedAt) / 1000).toFixed(1);
  const lines = [
    `- Traced ${seconds} s: ${events.toLocaleString("en")} events, as JSON that Perfetto, chrome://tracing` +
      " and DevTools' Performance panel open",
  ];
  if (complete.dataLossOccurred) lines.push("- The oldest events were dropped: the trace's buffer filled");
  return {
    content: [
      { type: "text", text: sections(["Result", lines]) },
      fileItem("trace.json", "application/json", { text }),
    ],
  };
}
