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
    { name: "emulate_media", destructive: false, drivers: DEVTOOLS, answer: "own" },
    { name: "drop", destructive: true, drivers: BOTH, answer: "shared" },
    { name: "highlight", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "hide_highlight", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "pdf_save", destructive: false, readOnly: true, drivers: DEVTOOLS, answer: "own" },
    { name: "start_tracing", destructive: false, readOnly: true, drivers: DEVTOOLS, answer: "own" },
    { name: "stop_tracing", destructive: false, readOnly: true, drivers: DEVTOOLS, answer: "own" },
    { name: "network_request", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "route", destructive: true, drivers: BOTH, answer: "own" },
    { name: "route_list", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "unroute", destructive: false, drivers: BOTH, answer: "own" },
    { name: "network_state_set", destructive: false, drivers: BOTH, answer: "own" },
    // The storage group: the person's cookies and site storage (storage_sites.js keeps them to the
    // client's own sites, behind the options' switch and the person's approval).
    { name: "cookie_list", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "cookie_get", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "cookie_set", destructive: true, drivers: BOTH, answer: "own" },
    { name: "cookie_delete", destructive: true, drivers: BOTH, answer: "own" },
    { name: "cookie_clear", destructive: true, drivers: BOTH, answer: "own" },
    { name: "localstorage_list", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "localstorage_get", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "localstorage_set", destructive: true, drivers: BOTH, answer: "own" },
    { name: "localstorage_delete", destructive: true, drivers: BOTH, answer: "own" },
    { name: "localstorage_clear", destructive: true, drivers: BOTH, answer: "own" },
    { name: "sessionstorage_list", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "sessionstorage_get", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "sessionstorage_set", destructive: true, drivers: BOTH, answer: "own" },
    { name: "sessionstorage_delete", destructive: true, drivers: BOTH, answer: "own" },
    { name: "sessionstorage_clear", destructive: true, drivers: BOTH, answer: "own" },
    { name: "storage_state", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "set_storage_state", destructive: true, drivers: BOTH, answer: "own" },
    // The testing group: checks of what the page shows, and locators for tests (actions/testing.js).
    { name: "verify_element_visible", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "verify_text_visible", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "verify_list_visible", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "verify_value", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "generate_locator", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    // The person's boxes and notes on the page (actions/annotate.js); `waitsForPerson`: how long
    // run.js lets it wait for them (the broker's longest wait for the person, 600 s).
    { name: "annotate", destructive: false, readOnly: true, drivers: BOTH, answer: "own", waitsForPerson: 600_000 },
    // The person's own actions recorded as Playwright code, with their consent (actions/recording.js).
    { name: "start_recording", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "stop_recording", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    // The video of a tab: a WebM with chapter cards and action captions (actions/video.js).
    { name: "start_video", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "stop_video", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "video_chapter", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "video_show_actions", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "video_hide_actions", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    // The dom group: the page as text and HTML, and the DOM looked into (actions/dom.js).
    { name: "get_text", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "get_html", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "inspect", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "query", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    // What a web app did (issue 43): web vitals and an axe-core audit (actions/app_telemetry.js).
    { name: "performance", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "a11y_audit", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    // The person's script library, run unasked, and page info (issue 43; actions/person_scripts.js).
    { name: "scripts", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
    { name: "run_script", destructive: false, drivers: BOTH, answer: "own" },
    { name: "page_info", destructive: false, readOnly: true, drivers: BOTH, answer: "own" },
  ].map((tool) => Object.freeze({ readOnly: false, focuses: false, ...tool })),
);

const BY_NAME = new Map(TOOLS.map((tool) => [tool.name, tool]));

/** The tool of wire name `name`, or undefined for a name no tool has. */
export const toolNamed = (name) => (typeof name === "string" ? BY_NAME.get(name) : undefined);

/** The names of the tools the driver named `driverName` carries out, in the declaration's order. */
export const toolsOf = (driverName) =>
  Object.freeze(TOOLS.filter((tool) => tool.drivers.includes(driverName)).map((tool) => tool.name));
