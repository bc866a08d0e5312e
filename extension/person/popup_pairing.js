// The popup's pairing section: brokers found on a probed port that this browser does not trust
// yet, with the way to pair each (`browser-mcp pair`, then the code typed here), and servers
// dropped because they failed to prove they are the broker. Redrawn only when that list changes,
// so a code being typed is not wiped by the popup's refresh.

import { Popup } from "../base/protocol.js";

let drawn = "";
let outcome = null; // {port, error}: how the last pairing went

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function unpaired(broker, ask) {
  const li = element("li", "pair-broker");
  li.append(element("div", "pair-title", `Found a broker on port ${broker.port} that is not paired.`));
  const how = element("div", "detail");
  how.append("To pair it, run ", element("code", "", "browser-mcp pair"), " in a terminal, then type the code here:");
  const form = element("form", "pair-form");
  const input = element("input", "pair-code");
  input.name = "code";
  input.placeholder = "ABCD-EFGH";
  input.autocomplete = "off";
  input.spellcheck = false;
  input.maxLength = 12;
  input.setAttribute("aria-label", `pairing code for the broker on port ${broker.port}`);
  const submit = element("button", "", "Pair");
  submit.type = "submit";
  form.append(input, submit);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    submit.disabled = true;
    submit.textContent = "Pairing…";
    await ask({ kind: Popup.PAIR, port: broker.port, code: input.value });
  });
  li.append(how, form);
  if (outcome?.port === broker.port && outcome.error) {
    li.append(element("div", "pair-error", `Not paired: ${outcome.error}`));
  }
  return li;
}

function refused(server) {
  const li = element("li", "pair-refused");
  li.append(
    element("div", "pair-title", `Dropped the server on port ${server.port}: it did not prove it is your broker.`),
    element("div", "detail", `${server.reason}. Nothing was sent to it.`),
  );
  return li;
}

/** Show `state.pairing`; `ask` sends the popup's requests to the worker. */
export function showPairing(state, ask) {
  if (state.paired) outcome = state.paired;
  const list = state.pairing ?? [];
  const key = JSON.stringify([list.map(({ port, state: s, reason }) => [port, s, reason]), outcome]);
  document.getElementById("pairing-section").hidden = list.length === 0;
  if (key === drawn) return;
  drawn = key;
  document
    .getElementById("pairing")
    .replaceChildren(...list.map((broker) => (broker.state === "refused" ? refused(broker) : unpaired(broker, ask))));
}
