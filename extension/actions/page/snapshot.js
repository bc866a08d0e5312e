// The page as a snapshot, computed in the page in one walk (run in the tools' isolated world,
// where the page's scripts cannot reach it), and the refs that name its elements: Playwright
// MCP's YAML, `- role "name" [state] [ref=e7]` lines nested as the page is, text as `- text:`,
// link targets as `- /url:`.
//
// What the page shows as, the snapshot's items, is items.js's.
//
// Refs: an element keeps its ref for as long as it stays in this world's document (the world, named,
// outlives the debugger's sessions), and every ref this world gave is taken while its element is
// connected, whichever snapshot (and client) gave it and whatever later snapshots showed: a client
// reading only what changed keeps using the refs it has. Numbers go on from `lastRef`, which the
// extension keeps per tab, so that they are never reused in a tab, not even across its pages. Refs
// hold their elements weakly: what the page dropped is collected, and its ref forgotten.
//
// Runs in the page: snapshotAgent is sent as source with pageItems (items.js), ariaRules
// (roles.js), accessibleNames (names.js) and yamlRenderer (yaml.js), so it may use
// nothing from this module's scope.

/**
 * The agent one world keeps: `snapshot(root, options, ...listening)` (`listening`: the drawings'
 * elements with pointer handlers, which this world cannot see) and `element(ref)`.
 */
export function snapshotAgent(pageItems, ariaRules, accessibleNames, yamlRenderer) {
  const itemsOf = pageItems();
  const render = yamlRenderer();
  const refOf = new WeakMap();
  /** ref -> WeakRef of its element: every ref this world gave whose element may still be alive. */
  const handedOut = new Map();
  /** The first and the last ref number this world gave (0: none yet). */
  let first = 0;
  let last = 0;

  /**
   * {url, title, yaml, length, lastRef, frames}, or {error} when `root` is not rendered. Refs are
   * `e12`, or `f2e12` with `prefix` "f2" (the snapshot of a frame). `frames`: the refs of the
   * frames (iframe elements) shown. `yaml` is cut at a line's end within `limit` characters;
   * `length` is the whole snapshot's. With `boxes`, each element's line gives its box (yaml.js).
   */
  function snapshot(root, { depth, limit, lastRef, prefix = "", boxes = false }, ...listening) {
    const items = itemsOf(ariaRules(accessibleNames), root, new Set(listening));
    if (!items) return { error: "the element is not rendered, so it has no snapshot" };
    last = Math.max(last, lastRef);
    for (const [ref, held] of handedOut) if (!held.deref()) handedOut.delete(ref);
    const given = new Map();
    const refFor = (element) => {
      let ref = refOf.get(element);
      if (!ref) {
        ref = `${prefix}e${++last}`;
        first ||= last;
        refOf.set(element, ref);
        handedOut.set(ref, new WeakRef(element));
      }
      given.set(ref, element);
      return ref;
    };
    let yaml = render(items, depth, refFor, boxes);
    const length = yaml.length;
    if (length > limit) {
      const lineEnd = yaml.lastIndexOf("\n", limit);
      yaml = yaml.slice(0, lineEnd > 0 ? lineEnd : limit);
    }
    // The frames whose lines the snapshot shows, for the extension to put their content under.
    const inView = new Set(Array.from(yaml.matchAll(/\[ref=((?:f\d+)?e\d+)\]/g), (match) => match[1]));
    const frames = Array.from(given, ([ref, element]) => ({ ref, element }))
      .filter(({ ref, element }) => inView.has(ref) && ["iframe", "frame"].includes(element.localName))
      .map(({ ref }) => ref);
    return { frames, url: location.href, origin: location.origin, title: document.title, yaml, length, lastRef: last };
  }

  /**
   * The element this world gave `ref` to, or why there is none: "gone" (it left the document, or
   * was collected since) or "unknown" (this world never gave that ref).
   */
  function element(ref) {
    const found = handedOut.get(ref)?.deref();
    if (found) return found.isConnected ? found : "gone";
    const number = Number(/\d+$/.exec(ref)[0]);
    return first && number >= first && number <= last ? "gone" : "unknown";
  }

  return { snapshot, element };
}
