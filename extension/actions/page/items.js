// What the page shows as in a snapshot (snapshot.js): its items, made in one walk of the
// page in the tools' isolated world, with the rules of roles.js: `{role, name, element,
// props, children, url}` for an element shown, `{text}` for text.
//
// Kept small on purpose, as a client reads all of it: inline wrappers (a <span>, a <b>) vanish and
// their text flows on; a block wrapper shows as `generic` only when it groups several things (a
// product card) or holds text; names that only repeat the text below them are shown once; the text
// of a field's label, which is its name already, is not repeated; the page's outer wrappers (its
// body, an app's root), which only group all of it, show no line. Every
// element shown gets a ref, except the options of a closed drop-down, which browser_select_option
// reaches by value. Frames show as `- iframe`; the extension puts each one's content under it
// (aria_snapshot.js), the agent of the frame's own document having snapshot it.
//
// An inline SVG drawing shows as `img` (Playwright's shape): its text labels, and the shapes and
// groups a person may click or point at (a handler, their own pointer cursor, focusable) as
// `generic`; the rest of the drawing, and a drawing for looks alone, show nothing.
//
// Runs in the page: pageItems is sent as source with snapshotAgent, so it may use nothing from
// this module's scope.

/** `itemsOf(rules, root, listening)`, made once per agent. */
export function pageItems() {
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
        rules.hasAttribute(element, "tabindex") ||
        rules.hasAttribute(element, "onclick") ||
        (element.isContentEditable && !element.parentElement?.isContentEditable) ||
        (style.cursor === "pointer" && context.cursor !== "pointer")
      );
    }

    /**
     * Whether an element of an SVG drawing shows: a shape or a group a person may click (its own
     * handler, its own pointer cursor, focusable), or a text label, unless a control around it
     * shows already (then its text is that control's).
     */
    function drawnControl(element, tag, acts, context) {
      if (listening.has(element) || acts()) return true;
      return tag === "text" && !context.inDrawnControl && normalize(element.textContent) !== "";
    }

    function childContext(element, tag, style, context, inDrawnControl) {
      const quiet = tag === "label" && namesItsControl(element);
      const inert = rules.attributeOf(element, "aria-disabled") === "true";
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

    /**
     * Whether a label's text is its control's name already: the control names itself no other way
     * (aria-label, aria-labelledby), so the text would only say that name again.
     */
    function namesItsControl(label) {
      const control = label.control;
      if (!control || rules.hasAttribute(control, "aria-label") || rules.hasAttribute(control, "aria-labelledby")) {
        return false;
      }
      return !["button", "submit", "reset", "image", "hidden"].includes(control.type);
    }

    /** A drop-down's options (and their groups); a closed one's get no refs. */
    function optionItems(select, closed, context) {
      const items = [];
      for (const child of select.children) {
        const tag = rules.tagOf(child);
        if (tag !== "option" && tag !== "optgroup") continue;
        if (child.hidden) continue;
        const role = tag === "option" ? "option" : "group";
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
      const tag = rules.tagOf(element);
      if (rules.SILENT.has(tag) || rules.isHidden(element)) return [];
      const inDrawing = rules.drawingOf(element) !== null;
      if (inDrawing && SVG_SILENT.has(tag)) return [];
      if (tag === "br") return [{ text: " ", gap: true }];
      const style = rules.styleOf(element);
      const visible = style.visibility === "visible";
      let actsOn;
      const acts = () => (actsOn ??= actionable(element, style, context));
      let role = visible ? rules.roleOf(element) : "none";
      // An image marked as decoration (alt="") that the page made a control, an icon to click.
      if (role === "none" && tag === "img" && visible && acts()) role = "img";
      // A drawing's parts are laid out by their coordinates, not as blocks: none holds text as a block.
      const inline = style.display === "inline" || style.display === "contents" || inDrawing;
      const drawing = inDrawing && tag !== "svg";
      const drawn = drawing && drawnControl(element, tag, acts, context);
      const keep = role === "generic" && (drawn || acts());
      const control = drawing && tag !== "text" && (drawn || (role !== "generic" && role !== "none"));
      const inner = childContext(element, tag, style, context, control);
      if (role === "none" || (role === "generic" && inline && !keep && tag !== "label")) {
        const items = REPLACED.has(tag) ? [] : childItems(element, inner, visible);
        return inline && !inDrawing ? items : items.map(asGap);
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
        if (!acts()) return [];
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
        quiet: Boolean(parent?.closest("label") && namesItsControl(parent.closest("label"))),
        inert: Boolean(parent?.closest('[aria-disabled="true"]')),
      };
    }

    /** Whether a person may act on `element` though it shows as no control (as a page's outer wrapper). */
    const actedOn = (element) => actionable(element, rules.styleOf(element), { cursor: "auto" });

    return { build, contextOf, actedOn, roleOf: rules.roleOf, isHidden: rules.isHidden, styleOf: rules.styleOf };
  }

  /** An item that only wraps what is inside it: a generic without name or state nobody acts on. */
  function outerWrapper(item, walk) {
    if (item.role !== "generic" || item.name || !item.children.length) return false;
    return !Object.values(item.props).some(Boolean) && !walk.actedOn(item.element);
  }

  /**
   * The items of the snapshot, `rules` being one snapshot's (ariaRules): the page from its body,
   * or `root` and what is inside it; null when `root` is not rendered.
   */
  return function itemsOf(rules, root, listening) {
    const walk = walker(rules, listening);
    if (!root) {
      const top = document.body ?? document.documentElement;
      let items = top ? mergeTexts(walk.build(top, { cursor: "auto", quiet: false, inert: false })) : [];
      // The page's outer wrappers (its body, an app's root <div>) group all of it, which says nothing.
      while (items.length === 1 && outerWrapper(items[0], walk)) items = items[0].children;
      return items;
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
  };
}
