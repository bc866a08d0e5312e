// Checks both page drivers against their contract (extension/actions/contract.js) without a
// browser: imported under Node with a stand-in for the extension APIs, each driver must have every
// member the contract names for it and no other, its `actions` must be the tools the declaration
// (extension/actions/tools.js) gives it, and none of its tools' members may answer not_supported
// (what a driver cannot do it leaves out, and the actions layer refuses from the declaration).
// Prints {driver: [problem, ...]} as JSON; the pytest beside it (tests/extension/) reads it.
// Usage: node page_drivers.mjs EXTENSION_DIR
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [extension] = process.argv.slice(2);
const DRIVERS = { devtools: "actions/devtools/driver.js", webextension: "actions/webext/driver.js" };
// How long a tool's member may take to refuse before it is taken as having started its work.
const REFUSAL_MS = 200;

// The extension APIs as anything the modules reach for at their first turn: every property is a
// function whose call answers with a promise of the same stand-in, so listeners are added and
// calls settle. Itself it is no promise (no `then`); in text, it is a word.
const stub = new Proxy(function stub() {}, {
  get(target, key) {
    if (key === "then") return undefined;
    if (key === Symbol.toPrimitive) return () => "stub";
    if (key === Symbol.iterator) return function* () {};
    return stub;
  },
  apply: () => Promise.resolve(stub),
  construct: () => stub,
});
// What the modules and members then do with the stand-in's answers fails where it fails, unheard.
process.on("unhandledRejection", () => {});
globalThis.chrome = stub;
globalThis.browser = stub;
// Node 20 has no navigator; the key table reads the platform from it.
if (!globalThis.navigator) globalThis.navigator = { platform: "Linux x86_64" };

const url = (relative) => pathToFileURL(path.join(extension, relative)).href;
const { TOOLS, toolsOf } = await import(url("actions/tools.js"));
const { PAGE_DRIVER_MEMBERS, memberOf, membersOf } = await import(url("actions/contract.js"));

const problems = {};

// The contract's written members (its JSDoc) are the ones it lists; the tools' members are each
// tool's of tools.js, written once there.
const written = [
  ...readFileSync(path.join(extension, "actions/contract.js"), "utf8").matchAll(/@property \{.*?\} \[?(\w+)\]?/g),
].map((match) => match[1]);
const listed = [...PAGE_DRIVER_MEMBERS];
problems.contract = [
  ...written.filter((name) => !listed.includes(name)).map((name) => `documents ${name}, which it does not list`),
  ...listed.filter((name) => !written.includes(name)).map((name) => `lists ${name}, which it does not document`),
];

function refusedAtOnce(member) {
  let called;
  try {
    called = Promise.resolve(member(1, {}));
  } catch (error) {
    called = Promise.reject(error);
  }
  const later = new Promise((resolve) => setTimeout(() => resolve(null), REFUSAL_MS));
  return Promise.race([
    called.then(
      () => null,
      (error) => error,
    ),
    later,
  ]).then((error) => (error?.code === "not_supported" ? error.message : null));
}

for (const [name, file] of Object.entries(DRIVERS)) {
  const found = [];
  problems[name] = found;
  const module = await import(url(file));
  const driver = Object.values(module).find((value) => value?.name === name);
  if (!driver) {
    found.push(`${file} exports no driver named ${name}`);
    continue;
  }
  const expected = membersOf(name);
  const members = Object.keys(driver);
  for (const member of expected) if (!(member in driver)) found.push(`lacks ${member}`);
  for (const member of members) if (!expected.includes(member)) found.push(`has ${member}, not in its contract`);
  if (JSON.stringify(driver.actions) !== JSON.stringify(toolsOf(name))) {
    found.push(`announces ${JSON.stringify(driver.actions)}, not the declaration's ${JSON.stringify(toolsOf(name))}`);
  }
  for (const tool of TOOLS) {
    const member = driver[memberOf(tool.name)];
    if (!tool.drivers.includes(name) || typeof member !== "function") continue;
    const refused = await refusedAtOnce(member);
    if (refused) found.push(`answers ${tool.name}, which it carries out, not_supported: ${refused}`);
  }
}

process.stdout.write(JSON.stringify(problems));
// The members called above leave timers and waits behind that would hold Node open.
process.exit(0);
