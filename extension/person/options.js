// The options page: reads and writes the settings in chrome.storage.local (settings.js decides
// what they mean and their defaults); the worker hears every change through storage events.

import { DEFAULTS, OWNER, normalize } from "../base/settings.js";

async function load() {
  const { settings } = await chrome.storage.local.get("settings");
  return normalize(settings);
}

async function save(change) {
  const settings = normalize({ ...(await load()), ...change });
  await chrome.storage.local.set({ settings });
  show(settings);
  return settings;
}

function showSites(allowances) {
  const list = document.getElementById("sites");
  if (allowances.length === 0) {
    const none = document.createElement("li");
    none.className = "note";
    none.textContent = "None yet: an approval window's “Always allow” adds one, for one client on one site.";
    list.replaceChildren(none);
    return;
  }
  list.replaceChildren(
    ...allowances.map(({ credential, origin }) => {
      const li = document.createElement("li");
      const site = document.createElement("span");
      site.textContent = origin;
      const who = document.createElement("span");
      who.className = "allowed-for";
      who.textContent = credential === OWNER ? "for owner (the broker's own token)" : `for client “${credential}”`;
      const remove = document.createElement("button");
      remove.type = "button";
      remove.textContent = "Remove";
      const other = (allowed) => allowed.credential !== credential || allowed.origin !== origin;
      remove.addEventListener("click", async () => save({ alwaysAllow: (await load()).alwaysAllow.filter(other) }));
      li.append(site, who, remove);
      return li;
    }),
  );
}

function show(settings) {
  for (const radio of document.querySelectorAll("input[name=policy]")) {
    radio.checked = radio.value === settings.approvalPolicy;
  }
  showSites(settings.alwaysAllow);
  document.getElementById("evaluate").checked = settings.allowEvaluate;
  document.getElementById("share-records").checked = settings.shareRecords;
  document.getElementById("share-storage").checked = settings.shareStorage;
  document.getElementById("first").value = settings.portFirst;
  document.getElementById("last").value = settings.portLast;
  document.getElementById("ignored").value = settings.ignoredPorts.join(", ");
}

for (const radio of document.querySelectorAll("input[name=policy]")) {
  radio.addEventListener("change", () => save({ approvalPolicy: radio.value }));
}
document
  .getElementById("evaluate")
  .addEventListener("change", (event) => save({ allowEvaluate: event.target.checked }));
document
  .getElementById("share-records")
  .addEventListener("change", (event) => save({ shareRecords: event.target.checked }));
document
  .getElementById("share-storage")
  .addEventListener("change", (event) => save({ shareStorage: event.target.checked }));
document.getElementById("save-ports").addEventListener("click", async () => {
  const first = Number(document.getElementById("first").value);
  const last = Number(document.getElementById("last").value);
  const ignoredPorts = document
    .getElementById("ignored")
    .value.split(/[\s,]+/)
    .filter(Boolean)
    .map(Number);
  const saved = await save({ portFirst: first, portLast: last, ignoredPorts });
  const kept = saved.portFirst === first && saved.portLast === last;
  document.getElementById("saved").textContent = kept
    ? "Saved."
    : `Not a valid range: kept ${saved.portFirst}-${saved.portLast} (default ${DEFAULTS.portFirst}-${DEFAULTS.portLast}).`;
});

load().then(show);
