// The names a page may give its tools, and the names a tab lists its top document's tools by.
//
// A page's tool name is letters, digits, `_`, `-` and `.`, at most 128 of them (as WebMCP's and
// MCP's examples are): a name with spaces or line breaks could pose as the approval window's or
// a listing's own words. Nor may it read as one of the broker's own tools: `tabs`, `page_tools`,
// `call_page_tool`, or a name ending in one of them, or holding `browser_` (the built-in tools).
// polyfill.js and bridge.js spell the same rule (content scripts cannot import); the broker
// checks it again for extensions that do not.
//
// A tab lists its frames' tools as `f<frameId>_<name>` (frame_tools.js). A top document's tool
// whose name looks like that (`f5_quote`), or begins with the escape itself, is listed as
// `top_<name>`, so that no top document's name ever meets a frame's, whatever either calls its
// tools.

export const MAX_NAME = 128;
const NAME = /^[A-Za-z0-9_.-]+$/;
const OURS = /(^|[_.-])(tabs|page_tools|call_page_tool)$|browser_/i;
const ESCAPED = /^(?:f\d+|top)_/;
const TOP = "top_";

/** Why a page may not name a tool `name`; null when it may. */
export function nameRefusal(name) {
  if (typeof name !== "string" || name === "") return "a tool needs a name";
  if (name.length > MAX_NAME) return `a tool's name is at most ${MAX_NAME} characters (this one has ${name.length})`;
  if (!NAME.test(name)) return "a tool's name holds only letters, digits, _, - and .";
  if (OURS.test(name)) {
    return "tabs, page_tools, call_page_tool and browser_* name the browser's own tools: a page's tool cannot take them";
  }
  return null;
}

/** The name a tab lists its top document's tool `name` by. */
export function listedTopName(name) {
  return ESCAPED.test(name) ? `${TOP}${name}` : name;
}

/** The top document's own name for a listed name that is not a frame's. */
export function declaredTopName(listed) {
  return listed.startsWith(TOP) ? listed.slice(TOP.length) : listed;
}
