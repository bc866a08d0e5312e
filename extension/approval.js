// The approval window: shows one request the worker holds (approvals.js) and sends back the
// person's answer. Closing the window is a no; so is letting the countdown run out.

import { Approval } from "./protocol.js";

const id = Number(new URLSearchParams(location.search).get("id"));

function answer(decision) {
  chrome.runtime.sendMessage({ kind: Approval.ANSWER, id, decision }).finally(() => window.close());
}

function gone() {
  document.getElementById("request").hidden = true;
  document.querySelector(".buttons").hidden = true;
  document.getElementById("gone").hidden = false;
}

async function show() {
  const details = await chrome.runtime.sendMessage({ kind: Approval.DETAILS, id }).catch(() => null);
  if (!details) {
    gone();
    return;
  }
  document.getElementById("agent").textContent = details.agent;
  document.getElementById("tool").textContent = details.tool;
  const site = document.getElementById("site");
  site.textContent = details.site;
  if (details.title) site.append(document.createElement("br"), details.title);
  document.getElementById("args").textContent = details.args;
  const always = document.getElementById("always");
  always.textContent = `Always allow on ${details.site}`;
  always.hidden = !details.perSite;
  const ends = Date.now() + details.timeoutMs;
  const countdown = document.getElementById("countdown");
  const tick = () => {
    const left = Math.max(0, Math.ceil((ends - Date.now()) / 1000));
    countdown.textContent = `Denied in ${left} s unless you answer.`;
  };
  tick();
  setInterval(tick, 500);
  for (const decision of ["once", "always", "deny"]) {
    document.getElementById(decision).addEventListener("click", () => answer(decision));
  }
}

show();
