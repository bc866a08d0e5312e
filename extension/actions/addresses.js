// Where browser_navigate may take a tab, for both page drivers: a web address, or about: and data:
// pages, a bare host name completed as Playwright MCP completes it.

import { invalidArguments } from "../base/errors.js";

/** Where `url` leads, completed as Playwright MCP completes a bare host name. */
export function checkedUrl(url) {
  if (typeof url !== "string" || url.trim() === "") throw invalidArguments("url must be a web address");
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    parsed = new URL(/^localhost([:/]|$)/.test(url) ? `http://${url}` : `https://${url}`);
  }
  if (!["http:", "https:", "about:", "data:"].includes(parsed.protocol)) {
    throw invalidArguments(`cannot open ${parsed.protocol} addresses: only http, https, about and data`);
  }
  return parsed.href;
}
