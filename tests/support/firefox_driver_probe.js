// Loaded beside background.js in a copy of the extension by tests/firefox/test_firefox_driver.py: runs
// browser actions through the actions layer (run.js, on the WebExtension driver) on the pages the
// test serves, and posts what each answered back to the test's server.
import { runBrowserAction } from "./actions/run.js";

let calls = 0;

async function act(tabId, action, args = {}) {
  const message = { type: "browserAction", callId: `c${++calls}`, tabId, action, args, sessionId: "s" };
  const answer = await runBrowserAction(1, message, null, null);
  return { action, args, error: answer.error, result: answer.result, page: answer.page };
}

function loaded(url) {
  return new Promise((resolve) => {
    chrome.tabs.create({ url }).then((tab) => {
      const heard = (id, change, now) => {
        if (id !== tab.id || now.status !== "complete" || !now.url.startsWith("http")) return;
        chrome.tabs.onUpdated.removeListener(heard);
        resolve(tab.id);
      };
      chrome.tabs.onUpdated.addListener(heard);
    });
  });
}

/** Once the browser has told the extension that a request of the tab to `path` completed: the
 * extension's own network log heard it by then, as its listener was added first. */
function requestEnded(tabId, path) {
  return new Promise((resolve) => {
    const heard = (details) => {
      if (details.tabId !== tabId || new URL(details.url).pathname !== path) return;
      chrome.webRequest.onCompleted.removeListener(heard);
      resolve();
    };
    chrome.webRequest.onCompleted.addListener(heard, { urls: ["<all_urls>"] });
  });
}

async function flow(base) {
  const out = [];
  const tab = await loaded(`${base}/a.html`);
  const other = await loaded(`${base}/b.html`);
  out.push(await act(tab, "snapshot"));
  out.push(await act(tab, "snapshot"));
  out.push(await act(tab, "snapshot", { target: "f1e1" }));
  const fetched = requestEnded(tab, "/b.json");
  out.push(await act(tab, "navigate", { url: `${base}/b.html` }));
  await act(tab, "wait_for", { text: "fetched" }); // its fetch has ended, as the page sees it
  await fetched; // and as the extension hears it, which may be later
  out.push(await act(tab, "network_requests", { static: true }));
  out.push(await act(tab, "navigate_back"));
  out.push(await act(tab, "take_screenshot"));
  const back = /link "to B" \[ref=(e\d+)\]/.exec(out[5].page.yaml)[1];
  out.push(await act(tab, "evaluate", { function: "(el) => el.textContent", target: back }));
  out.push(await act(tab, "wait_for", { text: "hello a" }));
  out.push(await act(tab, "mouse_wheel", { deltaX: 0, deltaY: 100 }));
  out.push(await act(tab, "snapshot", { target: "e99" }));
  out.push(await act(tab, "navigate", { url: `${base}/hostile.html` }));
  out.push(await act(tab, "evaluate", { function: "() => window.hostileSaw" }));
  const closing = act(other, "wait_for", { text: "never shows" });
  await chrome.tabs.remove(other);
  out.push(await closing);
  out.push(await act(tab, "snapshot"));
  const bait = /button "Bait" \[ref=(e\d+)\]/.exec(out[11].page.yaml)[1];
  out.push(await act(tab, "click", { target: bait }));
  out.push(await act(tab, "evaluate", { function: "() => [window.hostileSaw, window.baitClicks]" }));
  out.push(await act(tab, "navigate", { url: `${base}/a.html` }));
  const link = /link "to B" \[ref=(e\d+)\]/.exec(out[17].page.yaml)[1];
  const inner = /button "Inner button" \[ref=(f\d+e\d+)\]/.exec(out[17].page.yaml)[1];
  const reload = `() => new Promise((done) => {
    const frame = document.querySelector("iframe");
    frame.onload = () => done(true);
    frame.src = frame.src + "?again";
  })`;
  out.push(await act(tab, "evaluate", { function: reload }));
  out.push(await act(tab, "click", { target: inner }));
  out.push(await act(tab, "click", { target: link }));
  out.push(await act(tab, "navigate", { url: `${base}/upload.html` }));
  const input = /button "Choose" \[ref=(e\d+)\]/.exec(out[21].page.yaml)?.[1] ?? "input";
  out.push(await act(tab, "click", { target: input }));
  const file = { path: "/tmp/note.txt", size: 5, data: btoa("hello"), type: "text/plain" };
  out.push(await act(tab, "file_upload", { paths: [file.path], files: [file] }));
  out.push(await act(tab, "evaluate", { function: "() => window.uploaded" }));
  out.push(await act(tab, "file_upload", { paths: [file.path], files: [file] }));
  out.push(await act(tab, "navigate", { url: `${base}/form.html` }));
  const field = /textbox "Name" \[ref=(e\d+)\]/.exec(out[26].page.yaml)[1];
  out.push(await act(tab, "type", { target: field, text: "Ada", submit: true }));
  out.push(await act(tab, "evaluate", { function: "() => window.seen" }));
  out.push(await act(tab, "navigate", { url: `${base}/xy.html` }));
  out.push(await act(tab, "mouse_click_xy", { x: 50, y: 30 }));
  out.push(await act(tab, "mouse_click_xy", { x: 50, y: 120 }));
  out.push(await act(tab, "mouse_click_xy", { x: 22, y: 212 }));
  out.push(await act(tab, "mouse_move_xy", { x: 450, y: 50 }));
  out.push(await act(tab, "mouse_drag_xy", { startX: 420, startY: 20, endX: 560, endY: 90 }));
  out.push(await act(tab, "mouse_click_xy", { x: 5000, y: 10 }));
  out.push(await act(tab, "evaluate", { function: "() => window.hits" }));
  return out;
}

const config = await (await fetch(chrome.runtime.getURL("probe_config.json"))).json();
const out = await flow(config.base).catch((error) => [{ threw: String(error?.stack ?? error) }]);
await fetch(`${config.base}/result`, { method: "POST", body: JSON.stringify(out) });
