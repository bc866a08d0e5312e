// The page as a snapshot, computed in the page in one walk (run in the tools' isolated world,
// where the page's scripts cannot reach it), and the refs that name its elements: Playwright
// MCP's YAML, `- role "name" [state] [ref=e7]` lines nested as the page is, text as `- text:`,
// link targets as `- /url:`.
//
// Kept small on purpose, as a client reads all of it: inline wrappers (a <span>, a <b>) vanish and
// their text flows on; a block wrapper shows as `generic` only when it groups several things (a
// product card) or holds text; names that only repeat the text below them are shown once; the text
// of a checkbox's or a radio button's label, which is its name already, is not repeated. Every
// element shown gets a ref, except the options of a closed drop-down, which browser_select_option
// reaches by value. Frames show as `- iframe`; the extension puts each one's content under it
// (aria_snapshot.js), the agent of the frame's own document having snapshot it.
//
// An inline SVG drawing shows as `img` (Playwright's shape): its text labels, and the shapes and
// groups a person may click or point at (a handler, their own pointer cursor, focusable) as
// `generic`; the rest of the drawing, and a drawing for looks alone, show nothing.
//
// Refs: an element keeps its ref for as long as it stays in this world's document (the world, named,
// outlives the debugger's sessions), and every ref this world gave is taken while its element is
// connected, whichever snapshot (and client) gave it and whatever later snapshots showed: a client
// reading only what changed keeps using the refs it has. Numbers go on from `lastRef`, which the
// extension keeps per tab, so that they are never reused in a tab, not even across its pages. Refs
// hold their elements weakly: what the page dropped is collected, and its ref forgotten.
//
// Runs in the page: snapshotAgent is sent as source with ariaRules (page_roles.js) and
// yamlRenderer (page_yaml.js), so it may use nothing from this module's scope.

/**
 * The agent one world keeps: `snapshot(root, options, ...listening)` (`listening`: the drawings'
 * elements with pointer handlers, which this world cannot see) and `element(ref)`.
 */
export function snapshotAgent(ariaRules, yamlRenderer) {
  /** Roles whose text is their value: what Chromium lists inside them is not shown. */
  const VALUE_ROLES = new Set(["textbox", "searchbox", "spinbutton", "slider", "combobox"]);
  /** Elements whose content is their own business (a field's parts, an image's drawing). */
  const REPLACED = new Set([
    "input",
    "textarea",
    "select",
    "progress",
    "meter",
    "video",
    "audio",
    "canvas",
    "object",
    "embed",
    "iframe",
    "frame",
    "img",
    "math",
  ]);
  /** What an SVG drawing holds that never shows: definitions, descriptions, effects. */
  const SVG_SILENT = new Set([
    "desc",
    "metadata",
    "defs",
    "symbol",
    "clipPath",
    "mask",
    "marker",
    "pattern",
    "filter",
    "linearGradient",
    "radialGradient",
  ]);
  const render = yamlRenderer();
  const refOf = new WeakMap();
  /** ref -> WeakRef of its element: every ref this world gave whose element may still be alive. */
  const handedOut = new Map();
  /** The first and the last ref number this world gave (0: none yet). */
  let first = 0;
  let last = 0;

  const normalize = (text) => text.replace(/\s+/g, " ").trim();
  const asGap = (item) => (item.text !== undefined ? { ...item, gap: true } : item);

  /** Texts next to each other become one; `gap` says a block boundary lies between two. */
  function mergeTexts(items) {
    const merged = [];
    for (const item of items) {
      const previous = merged[merged.length - 1];
      if (item.text !== undefined && previous?.text !== undefined) {
        previous.text += (previous.gap || item.gap ? " " : "") + item.text;
        previous.gap = item.gap;
      } else {
        merged.push(item.text !== undefined ? { ...item } : item);
      }
    }
    const kept = [];
    for (const item of merged) {
      if (item.text === undefined) kept.push(item);
      else if (normalize(item.text)) kept.push({ text: normalize(item.text), gap: item.gap });
    }
    return kept;
  }

  /** What items read as: their texts, and their elements by name or by their own content. */
  function contentText(items) {
    return normalize(
      items.map((item) => (item.text !== undefined ? item.text : item.name || contentText(item.children))).join(" "),
    );
  }

  /** `listening`: the elements of SVG drawings with pointer handlers (found by the extension). */
  function walker(rules, listening) {
    const focused = rules.focusedElement();
    const origin = location.origin === "null" ? "" : location.origin;
    const shortUrl = (url) => (origin && url.startsWith(origin + "/") ? url.slice(origin.length) : url);

    /** A generic element a person may act on even so: focusable, editable, or with a click handler's look. */
    function actionable(element, style, context) {
      return (
        element.hasAttribute("tabindex") ||
        element.hasAttribute("onclick") ||
        (element.isContentEditable && !element.parentElement?.isContentEditable) ||
        (style.cursor === "pointer" && context.cursor !== "pointer")
      );
    }

    /**
     * Whether an element of an SVG drawing shows: a shape or a group a person may click (its own
     * handler, its own pointer cursor, focusable), or a text label, unless a control around it
     * shows already (then its text is that control's).
     */
    function drawnControl(element, style, context) {
      if (listening.has(element) || actionable(element, style, context)) return true;
      return element.localName === "text" && !context.inDrawnControl && normalize(element.textContent) !== "";
    }

    function childContext(element, style, context, inDrawnControl) {
      const quiet = element.localName === "label" && ["checkbox", "radio"].includes(element.control?.type);
      const inert = element.getAttribute("aria-disabled") === "true";
      if (style.cursor === context.cursor && !quiet && !inert && !inDrawnControl) return context;
      return {
        ...context,
        cursor: style.cursor,
        quiet: context.quiet || quiet,
        inert: context.inert || inert,
        inDrawnControl: context.inDrawnControl || inDrawnControl,
      };
    }

    function childItems(element, context, textShows) {
      const items = [];
      for (const child of rules.childNodesOf(element)) {
        if (child.nodeType === Node.TEXT_NODE) {
          if (textShows && !context.quiet) items.push({ text: child.nodeValue, gap: false });
        } else if (child.nodeType === Node.ELEMENT_NODE) {
          for (const item of build(child, context)) items.push(item);
        }
      }
      return items;
    }

    /** A drop-down's options (and their groups); a closed one's get no refs. */
    function optionItems(select, closed, context) {
      const items = [];
      for (const child of select.children) {
        if (child.localName !== "option" && child.localName !== "optgroup") continue;
        if (child.hidden) continue;
        const role = child.localName === "option" ? "option" : "group";
        const item = {
          role,
          name: normalize(rules.nameOf(child, role) || child.label || ""),
          element: closed ? undefined : child,
          props: rules.statesOf(child, role, focused, context.inert),
          children: role === "group" ? optionItems(child, closed, context) : [],
        };
        items.push(item);
      }
      return items;
    }

    /** The items `element` shows as: none, some text, one element, or its content moved up. */
    function build(element, context) {
      const tag = element.localName;
      if (rules.SILENT.has(tag) || rules.isHidden(element)) return [];
      if (element.ownerSVGElement && SVG_SILENT.has(tag)) return [];
      if (tag === "br") return [{ text: " ", gap: true }];
      const style = rules.styleOf(element);
      const visible = style.visibility === "visible";
      let role = visible ? rules.roleOf(element) : "none";
      // An image marked as decoration (alt="") that the page made a control, an icon to click.
      if (role === "none" && tag === "img" && visible && actionable(element, style, context)) role = "img";
      // A drawing's parts are laid out by their coordinates, not as blocks: none holds text as a block.
      const inline = style.display === "inline" || style.display === "contents" || Boolean(element.ownerSVGElement);
      const drawing = Boolean(element.ownerSVGElement) && tag !== "svg";
      const drawn = drawing && drawnControl(element, style, context);
      const keep = role === "generic" && (drawn || actionable(element, style, context));
      const control = drawing && tag !== "text" && (drawn || (role !== "generic" && role !== "none"));
      const inner = childContext(element, style, context, control);
      if (role === "none" || (role === "generic" && inline && !keep && tag !== "label")) {
        const items = REPLACED.has(tag) ? [] : childItems(element, inner, visible);
        return inline && !element.ownerSVGElement ? items : items.map(asGap);
      }
      const item = {
        role,
        name: normalize(rules.nameOf(element, role)),
        element,
        props: rules.statesOf(element, role, focused, context.inert),
        children: [],
      };
      if (tag === "select") item.children = optionItems(element, role === "combobox", inner);
      else if (!REPLACED.has(tag) && (role !== "img" || tag === "svg") && role !== "iframe") {
        item.children = mergeTexts(childItems(element, inner, true));
      }
      const value = VALUE_ROLES.has(role) && !item.children.length ? rules.valueOf(element, role) : "";
      if (value !== "") item.children = [{ text: value }];
      if (role === "link") {
        const href = typeof element.href === "string" ? element.href : hrefOfDrawnLink(element);
        if (href) item.url = shortUrl(href);
      }
      const elements = item.children.filter((child) => child.text === undefined);
      if (item.name && item.name === contentText(item.children)) {
        // Say it once: as the name when only text is inside, else through the elements inside.
        if (elements.length) item.name = "";
        else item.children = [];
      }
      if (role === "generic" && !item.name && !keep && item.children.length <= 1 && !item.children[0]?.text) {
        return item.children;
      }
      // An empty paragraph (spacing between blocks) says nothing, nor does an icon drawn for looks.
      if (role === "paragraph" && !item.name && !item.children.length) return [];
      if (tag === "svg" && role === "img" && !item.name && !item.children.length && !listening.has(element)) {
        if (!actionable(element, style, context)) return [];
      }
      return [item];
    }

    /** The target of an SVG drawing's link, whose `href` is an animated value rather than a URL. */
    function hrefOfDrawnLink(element) {
      const href = element.href?.baseVal ?? "";
      return href ? new URL(href, document.baseURI).href : "";
    }

    /** The context an element starts from when a snapshot starts at it rather than at the page. */
    function contextOf(element) {
      const parent = element.parentElement;
      return {
        cursor: parent ? rules.styleOf(parent).cursor : "auto",
        quiet: Boolean(parent?.closest("label")?.control?.type?.match(/^(checkbox|radio)$/)),
        inert: Boolean(parent?.closest('[aria-disabled="true"]')),
      };
    }

    return { build, contextOf, roleOf: rules.roleOf, isHidden: rules.isHidden, styleOf: rules.styleOf };
  }

  /** The items of the snapshot: the page from its body, or `root` and what is inside it. */
  function itemsOf(root, listening) {
    const walk = walker(ariaRules(), listening);
    if (!root) {
      const top = document.body ?? document.documentElement;
      return top ? mergeTexts(walk.build(top, { cursor: "auto", quiet: false, inert: false })) : [];
    }
    // checkVisibility: no box, here or above (display: none), or inside a closed <details>.
    const rendered = root.checkVisibility() || walk.styleOf(root).display === "contents";
    if (!root.isConnected || walk.isHidden(root) || !rendered) return null;
    const built = walk.build(root, walk.contextOf(root));
    // The element asked for shows even where it would have vanished into its parent.
    if (built.length === 1 && built[0].element === root) return built;
    const role = walk.roleOf(root);
    return [
      { role: role === "none" ? "generic" : role, name: "", element: root, props: {}, children: mergeTexts(built) },
    ];
  }

  /**
   * {url, title, yaml, length, lastRef, frames}, or {error} when `root` is not rendered. Refs are
   * `e12`, or `f2e12` with `prefix` "f2" (the snapshot of a frame). `frames`: the refs of the
   * frames (iframe elements) shown. `yaml` is cut at a line's end within `limit` characters;
   * `length` is the whole snapshot's.
   */
  function snapshot(root, { depth, limit, lastRef, prefix = "" }, ...listening) {
    const items = itemsOf(root, new Set(listening));
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
    let yaml = render(items, depth, refFor);
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
