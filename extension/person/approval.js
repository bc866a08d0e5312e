// The approval window: shows one request the worker holds (approvals.js), whole, and sends back
// the person's answer. Closing the window is a no; so is letting the countdown run out.

import { Approval } from "../base/protocol.js";

const id = Number(new URLSearchParams(location.search).get("id"));

function answer(decision) {
  chrome.runtime.sendMessage({ kind: Approval.ANSWER, id, decision }).finally(() => window.close());
}

function gone() {
  document.getElementById("request").hidden = true;
  document.querySelector(".buttons").hidden = true;
  document.getElementById("gone").hidden = false;
}

// What a page chose (its tool's name, its title) is shown as the page's: in a box of its own,
// beside words of ours saying whose it is, one line, with line breaks, other control characters
// and the characters that reorder text shown as marks, and cut at MAX_PAGE_TEXT. So it can
// never stand where the window's own labels do, nor read as them.
const MAX_PAGE_TEXT = 300;
// eslint-disable-next-line no-control-regex -- control characters are what it is for
const UNSEEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/gu;

function showPageText(element, text) {
  const marked = String(text).replace(UNSEEN, (c) =>
    c === "\n" ? "↵" : `⟨U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`,
  );
  const cut =
    marked.length > MAX_PAGE_TEXT ? `${marked.slice(0, MAX_PAGE_TEXT)}… (${marked.length} characters)` : marked;
  element.textContent = cut;
  element.classList.add("page-text");
}

/** The credential the agent connected with: its name is its own choice, this is not. */
function showCredential(name) {
  const credential = document.getElementById("credential");
  if (!name) {
    credential.textContent = "(its broker did not name its credential)";
    return;
  }
  credential.textContent = `via ${name}`;
  credential.title =
    name === "owner"
      ? "Connected with the broker's own token"
      : `Connected with the client token "${name}" (browser-mcp mcp-config --client ${name})`;
}

async function show() {
  const details = await chrome.runtime.sendMessage({ kind: Approval.DETAILS, id }).catch(() => null);
  if (!details) {
    gone();
    return;
  }
  document.getElementById("agent").textContent = details.agent;
  showCredential(details.credential);
  const tool = document.getElementById("tool");
  if (details.toolByPage) {
    showPageText(tool, details.tool);
    document.getElementById("tool-whose").hidden = false;
  } else {
    tool.textContent = details.tool;
  }
  document.getElementById("site").textContent = details.site;
  showPageText(document.getElementById("title"), details.title);
  for (const id of ["title-label", "title-box"]) document.getElementById(id).hidden = details.title === "";
  document.getElementById("url").textContent = details.url === details.site ? "" : details.url;
  const hasCode = details.code !== "";
  for (const id of ["code-label", "code-box"]) document.getElementById(id).hidden = !hasCode;
  for (const id of ["args-label", "args-box"]) document.getElementById(id).hidden = hasCode && details.args === "";
  document.getElementById("code-label").textContent = details.codeLabel;
  document.getElementById("code").textContent = details.code;
  document.getElementById("args").textContent = details.args;
  const lines = `${details.code}\n${details.args}`.trim().split("\n").length;
  // More lines than the box holds scroll: the person is told so, since nothing is cut.
  const scrolls = lines > 15 ? ", scroll to read them all" : "";
  document.getElementById("size").textContent = `Shown whole: ${lines} line${lines === 1 ? "" : "s"}${scrolls}.`;
  const always = document.getElementById("always");
  always.textContent = `Always allow ${details.credential} on ${details.site}`;
  always.hidden = !details.perSite;
  // A read of cookies: "Allow once" withholds HttpOnly values; this gives them too.
  document.getElementById("httponly").hidden = !details.httpOnly;
  if (details.httpOnly) document.getElementById("once").textContent = "Allow without HttpOnly values";
  const ends = Date.now() + details.timeoutMs;
  const countdown = document.getElementById("countdown");
  const tick = () => {
    const left = Math.max(0, Math.ceil((ends - Date.now()) / 1000));
    countdown.textContent = `Denied in ${left} s unless you answer.`;
  };
  tick();
  setInterval(tick, 500);
  for (const decision of ["once", "always", "httponly", "deny"]) {
    document.getElementById(decision).addEventListener("click", () => answer(decision));
  }
}

show();
