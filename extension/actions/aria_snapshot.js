// The page as an accessibility snapshot, in the YAML shape Playwright MCP shows clients. It is
// computed in the page by the tools' agent (agent.js: page_snapshot.js, page_roles.js,
// page_yaml.js), in one walk of the DOM in the tools' isolated world, and comes back as text: one
// protocol round trip, whatever the page's size. Asking Chromium for its accessibility tree
// instead (Accessibility.getFullAXTree) took several times as long on a large page, most of it
// in building and sending every node's properties.

import { documentOf, utilityWorld } from "./debugger.js";
import { callAgent } from "./agent.js";
import { ActionError, Code } from "./errors.js";
import { refsFor } from "./refs.js";

const navigated = () => new ActionError(Code.NAVIGATED, "the page navigated away while its snapshot was taken");

/**
 * The tab's page as a snapshot: {url, title, yaml, length}, `yaml` cut at a line's end within
 * `limit` characters, `length` the whole one's. With `root` (an element from elementFor), only
 * that element and what is inside it; with `depth`, elements nested no deeper than that (1: the
 * top ones and their children). The refs of such a partial snapshot add to those of the last
 * full one.
 */
export async function captureSnapshot(tabId, { root, depth, limit }) {
  const document = documentOf(tabId);
  const world = await utilityWorld(tabId);
  const refs = refsFor(tabId, document, world);
  const options = { depth, limit, lastRef: refs.lastRef, partial: root !== undefined || depth !== undefined };
  let snapshot;
  try {
    snapshot = await callAgent(tabId, world, "snapshot", [
      root ? { objectId: root.objectId } : { value: null },
      { value: options },
    ]);
  } catch (error) {
    // The document's world goes with it: a navigation that was starting as the call went out.
    if (documentOf(tabId) !== document || /context/i.test(error.message)) throw navigated();
    throw error;
  }
  if (documentOf(tabId) !== document) throw navigated();
  if (snapshot.error) throw new ActionError(Code.ACTION_FAILED, snapshot.error);
  refs.update(snapshot.lastRef);
  return snapshot;
}
