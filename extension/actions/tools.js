// The built-in browser tools, each declared once: the extension's side of what
// broker/core/browser_tools.py declares for the broker (tests/extension/ compares the two). Pure
// data with no imports, so that Node reads it without a browser.
//
// `name` is the wire's browserAction `action`: Playwright MCP's tool of that name with `browser_`
// in front. `drivers` names the page drivers that carry it out (their `name`); each one announces
// its tools in `connected.actions`, and the actions layer answers a tool its driver lacks with
// not_supported before anything runs. A driver carries a tool out in its member of the tool's name
// in camelCase (`mouse_wheel`: `mouseWheel`; contract.js), except a tool whose answer is the page
// report itself. `destructive` tools are asked of the person as a page tool declaring
// destructiveHint is, `readOnly` ones never (person/approvals.js).
//
// `answer` says how run.js answers it:
//   report   the page's report is the answer (no member of its own: pageReport, elementFor)
//   input    input to the page: run while navigations it sets off are watched, answered with the
//            page after it and, for a driver that makes input up, a note saying so
//   moves    moves the page to another: answered with the page it lands on; called off, the page
//            stops loading
//   own      the member's answer is the tool's answer
//   shared   the actions layer's own code of the tool's name (run.js) calls the member
//   dialog   answers the tab's open dialog, ahead of the tab's queue the dialog holds
// `focuses`: the element in focus afterwards is the one it acted on (a download link it clicked).

const BOTH = Object.freeze(["devtools", "webextension"]);
const DEVTOOLS = Object.freeze(["devtools"]);

export const TOOLS = Object.freeze(
  [
    { name: "snapshot", destructive: false, readOnly: true, drivers: BOTH, answer: "report" },
    { name: "find", destructive: false, readOnly: true, drivers: BOTH, answer: "report" },
    { name: "click", destructive: false, drivers: BOTH, answer: "input", focuses: true },
    { name: "hover", destructive: false, drivers: BOTH, answer: "input" },
    { name: "type", destructive: false, drivers: BOTH, answer: "input" },
    { name: "fill_form", destructive: false, drivers: BOTH, answer: "input" },
    { name: "select_option", destructive: false, drivers: BOTH, answer: "input" },
    { name: "press_key", destructive: false, drivers: BOTH, answer: "input", focuses: true },
    { name: "wait_for", destructive: false, readOnly: true, drivers: BOTH, answer: "shared" },
    { name: "navigate", destructive: false, drivers: BOTH, answer: "moves" },
    { name: "navigate_back", destructive: false, drivers: BOTH, answer: "moves" },
    { name: "navigate_forward", destructive: false, drivers: BOTH, answer: "moves" },
    { name: "reload", destructive: false, drivers: BOTH, answer: "moves" },
    { name: "take_screenshot", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "console_messages", destructive: false, readOnly: true, drivers: BOTH, answer: "shared" },
    { name: "network_requests", destructive: false, readOnly: true, drivers: BOTH, answer: "shared" },
    { name: "evaluate", destructive: true, drivers: BOTH, answer: "own" },
    { name: "handle_dialog", destructive: false, drivers: BOTH, answer: "dialog" },
    { name: "drag", destructive: false, drivers: BOTH, answer: "input" },
    { name: "mouse_click_xy", destructive: false, drivers: BOTH, answer: "input" },
    { name: "mouse_move_xy", destructive: false, drivers: BOTH, answer: "input" },
    { name: "mouse_drag_xy", destructive: false, drivers: BOTH, answer: "input" },
    { name: "mouse_down", destructive: false, drivers: DEVTOOLS, answer: "input" },
    { name: "mouse_up", destructive: false, drivers: DEVTOOLS, answer: "input" },
    { name: "mouse_wheel", destructive: false, drivers: DEVTOOLS, answer: "input" },
    { name: "file_upload", destructive: true, drivers: BOTH, answer: "shared" },
  ].map((tool) => Object.freeze({ readOnly: false, focuses: false, ...tool })),
);

const BY_NAME = new Map(TOOLS.map((tool) => [tool.name, tool]));

/** The tool of wire name `name`, or undefined for a name no tool has. */
export const toolNamed = (name) => (typeof name === "string" ? BY_NAME.get(name) : undefined);

/** The names of the tools the driver named `driverName` carries out, in the declaration's order. */
export const toolsOf = (driverName) =>
  Object.freeze(TOOLS.filter((tool) => tool.drivers.includes(driverName)).map((tool) => tool.name));
