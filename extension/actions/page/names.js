// An element's accessible name, computed in the page itself as the accessible name computation
// has it for the pages clients meet (Chromium's and Playwright's reading): aria-labelledby,
// aria-label, what HTML names it by (its labels, an image's alt, a fieldset's legend...), its
// title, a placeholder, and for the roles named by their content, the text it shows. Part of the
// rules of roles.js, which gives it their helpers.
//
// Runs in the page: accessibleNames is sent as source with ariaRules, so it may use nothing from
// this module's scope, only the page's globals.

/** `nameOf(element, role)`, over one snapshot's `rules` (ariaRules) and some of their tables. */
export function accessibleNames(rules, { INPUT_ROLES, TEXT_INPUTS, attribute }) {
  const { SILENT, styleOf, isHidden, childNodesOf, roleOf, valueOf, tagOf, drawingOf } = rules;
  /** Roles named by their content when nothing else names them. */
  const NAMED_BY_CONTENT = new Set(
    (
      "button cell checkbox columnheader gridcell heading link menuitem menuitemcheckbox menuitemradio " +
      "option radio rowheader switch tab tooltip treeitem"
    ).split(" "),
  );
  /** The elements that may have labels (`labels`): a form-associated custom element's are the page's own. */
  const LABELABLE = new Set(["button", "input", "meter", "output", "progress", "select", "textarea"]);
  const isControl = (tag) => tag === "input" || tag === "textarea" || tag === "select";

  /**
   * The text an element's content reads as, for names: its visible texts, and the elements inside
   * by their own label, a field by its value; blocks apart, `skip` (the control a label names) left out.
   */
  function contentText(element, skip) {
    const parts = [];
    const visible = styleOf(element).visibility === "visible";
    for (const child of childNodesOf(element)) {
      if (child.nodeType === Node.TEXT_NODE) {
        if (visible) parts.push(child.nodeValue);
        continue;
      }
      if (child.nodeType !== Node.ELEMENT_NODE || child === skip) continue;
      const tag = tagOf(child);
      if (SILENT.has(tag) || isHidden(child)) continue;
      if (tag === "br") {
        parts.push(" ");
        continue;
      }
      let text = attribute(child, "aria-label");
      if (!text && (tag === "img" || (tag === "input" && child.type === "image"))) {
        text = styleOf(child).visibility === "visible" ? attribute(child, "alt") : "";
      } else if (!text && isControl(tag)) {
        text = valueOf(child, roleOf(child)) || (INPUT_ROLES[child.type] === "button" ? nativeName(child) : "");
      } else if (!text) {
        text = contentText(child, skip);
      }
      parts.push(styleOf(child).display === "inline" ? text : ` ${text} `);
    }
    return parts.join("").replace(/\s+/g, " ").trim();
  }

  /** The text of the elements an aria-labelledby lists, hidden or not. */
  function labelledByText(element, ids) {
    const root = element.getRootNode();
    return ids
      .split(/\s+/)
      .map((id) => root.getElementById?.(id) ?? document.getElementById(id))
      .filter(Boolean)
      .map((labeller) => attribute(labeller, "aria-label") || contentText(labeller) || labeller.textContent)
      .join(" ")
      .replace(/\s+/g, " ")
      .trim();
  }

  /** The name HTML gives the element: its labels, an image's alt, a fieldset's legend... */
  function nativeName(element, role = "button") {
    const tag = tagOf(element);
    if (tag === "input" && INPUT_ROLES[element.type] === "button" && element.type !== "file") {
      if (element.type === "image") return attribute(element, "alt") || element.value || "Submit";
      if (element.type !== "color")
        return element.value || (element.type === "reset" ? "Reset" : element.type === "submit" ? "Submit" : "");
    }
    if (LABELABLE.has(tag) && element.labels?.length) {
      const text = [...element.labels]
        .map((label) => contentText(label, element))
        .join(" ")
        .trim();
      if (text) return text;
    }
    if (tag === "img" || tag === "area") return attribute(element, "alt");
    if (tag === "fieldset") {
      const legend = element.querySelector(":scope > legend");
      return legend ? contentText(legend) : "";
    }
    if (tag === "table") {
      const caption = element.querySelector(":scope > caption");
      return caption ? contentText(caption) : "";
    }
    const drawn = tag === "svg" || drawingOf(element);
    const title = drawn ? element.querySelector(":scope > title")?.textContent.trim() : "";
    if (title || tag === "svg") return title ?? "";
    if (tag === "option") return attribute(element, "label") || contentText(element);
    if (NAMED_BY_CONTENT.has(role)) return contentText(element);
    return "";
  }

  /** The accessible name: aria-labelledby, aria-label, what HTML names it by, its title, a placeholder. */
  function nameOf(element, role) {
    const ids = attribute(element, "aria-labelledby");
    const labelledBy = ids ? labelledByText(element, ids) : "";
    if (labelledBy) return labelledBy;
    const label = attribute(element, "aria-label");
    if (label) return label;
    const name = nativeName(element, role) || attribute(element, "title");
    if (name) return name;
    const tag = tagOf(element);
    if ((tag === "input" && TEXT_INPUTS.has(element.type)) || tag === "textarea") {
      return attribute(element, "placeholder");
    }
    return "";
  }

  return nameOf;
}
