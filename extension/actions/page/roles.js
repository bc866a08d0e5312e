// What an element is to a reader of the page, computed in the page itself: its role (ARIA's, or
// the one its tag implies), its accessible name, its states, and whether it shows at all. The
// snapshot (snapshot.js) walks the page once with these, in the tools' isolated world, which
// is several times faster than asking Chromium for its whole accessibility tree
// (Accessibility.getFullAXTree builds and sends every node's properties, a few megabytes for a
// large page).
//
// It follows the HTML-AAM mappings and the accessible name computation as Chromium and
// Playwright apply them to the pages clients meet, simplified where that costs little: the first
// token of a `role` attribute is taken as it is, CSS generated content (::before, ::after) is not
// read, nor are closed shadow roots, which a page's script cannot see either. Where the browser
// hides something (display: none, visibility: hidden, aria-hidden, a closed <details>), so does
// the snapshot.
//
// The accessible name is names.js's, given the rules' helpers.
//
// Runs in the page: ariaRules is sent as source (Function.prototype.toString) with
// accessibleNames (names.js), so it may use nothing from this module's scope, only the
// page's globals.

/**
 * The rules, bound to one snapshot (computed styles are read once per element and kept);
 * `accessibleNames` is names.js's.
 */
export function ariaRules(accessibleNames) {
  /** The role each tag implies, as `tag:role` words; the tags whose role depends on more are in tagRole. */
  const TAG_ROLES = Object.fromEntries(
    (
      "article:article aside:complementary blockquote:blockquote button:button caption:caption " +
      "code:code dd:definition del:deletion details:group dfn:term dialog:dialog dt:term em:emphasis " +
      "fieldset:group figure:figure form:form hr:separator iframe:iframe frame:iframe ins:insertion " +
      "li:listitem main:main mark:mark math:math menu:list meter:meter nav:navigation ol:list " +
      "optgroup:group option:option output:status p:paragraph progress:progressbar s:deletion " +
      "search:search strong:strong sub:subscript sup:superscript table:table tbody:rowgroup td:cell " +
      "textarea:textbox tfoot:rowgroup thead:rowgroup time:time tr:row ul:list"
    )
      .split(" ")
      .map((pair) => pair.split(":")),
  );
  const INPUT_ROLES = {
    button: "button",
    checkbox: "checkbox",
    color: "button",
    file: "button",
    image: "button",
    number: "spinbutton",
    radio: "radio",
    range: "slider",
    reset: "button",
    search: "searchbox",
    submit: "button",
  };
  /** The roles ARIA defines that a page may name in a `role` attribute (abstract ones are not). */
  const ROLES = new Set(
    (
      "alert alertdialog application article banner blockquote button caption cell checkbox code " +
      "columnheader combobox complementary contentinfo definition deletion dialog directory document " +
      "emphasis feed figure form generic grid gridcell group heading img image insertion link list " +
      "listbox listitem log main mark marquee math menu menubar menuitem menuitemcheckbox menuitemradio " +
      "meter navigation none note option paragraph presentation progressbar radio radiogroup region row " +
      "rowgroup rowheader scrollbar search searchbox separator slider spinbutton status strong subscript " +
      "superscript switch tab table tablist tabpanel term textbox time timer toolbar tooltip tree " +
      "treegrid treeitem"
    ).split(" "),
  );
  const CHECKABLE = new Set(["checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"]);
  const SELECTABLE = new Set(["option", "tab", "row", "gridcell", "treeitem", "columnheader", "rowheader"]);
  /** Roles a person acts on, which an aria-disabled ancestor disables too. */
  const OPERABLE = new Set(
    (
      "button checkbox combobox link listbox menuitem menuitemcheckbox menuitemradio option radio " +
      "searchbox slider spinbutton switch tab textbox treeitem"
    ).split(" "),
  );
  /** The elements :disabled may match (a form-associated custom element's class is the page's own). */
  const DISABLEABLE = new Set(["button", "input", "select", "textarea", "optgroup", "option", "fieldset"]);
  const TEXT_INPUTS = new Set(["", "text", "email", "tel", "url", "password", "search"]);
  /** Elements that never show, nor count towards a name. */
  const SILENT = new Set(["script", "style", "template", "noscript", "head", "title", "meta", "link", "base"]);
  // What the rules read of an element, kept for the snapshot: a read from the tools' world costs
  // several times a lookup here (in Firefox, each goes through the content script's Xray view).
  const styles = new Map();
  const tags = new Map();
  const attributeSets = new Map();
  const drawings = new Map();

  /** The element's localName, read once. */
  function tagOf(element) {
    let tag = tags.get(element);
    if (tag === undefined) {
      tag = element.localName;
      tags.set(element, tag);
    }
    return tag;
  }

  /**
   * `element.getAttribute(name)`, asked only of an element that has an attribute of that name (the
   * names read once per element, each value once).
   */
  function attributeOf(element, name) {
    let values = attributeSets.get(element);
    if (!values) {
      values = new Map();
      for (const present of element.getAttributeNames()) values.set(present, undefined);
      attributeSets.set(element, values);
    }
    if (!values.has(name)) return null;
    let value = values.get(name);
    if (value === undefined) {
      value = element.getAttribute(name);
      values.set(name, value);
    }
    return value;
  }

  const hasAttribute = (element, name) => attributeOf(element, name) !== null;

  /** The SVG drawing the element is part of (its ownerSVGElement), null for none; read once. */
  function drawingOf(element) {
    let drawing = drawings.get(element);
    if (drawing === undefined) {
      drawing = element.ownerSVGElement ?? null;
      drawings.set(element, drawing);
    }
    return drawing;
  }

  /** The computed style's few properties the snapshot reads, read once per element. */
  function styleOf(element) {
    let style = styles.get(element);
    if (!style) {
      const computed = getComputedStyle(element);
      style = { display: computed.display, visibility: computed.visibility, cursor: computed.cursor };
      styles.set(element, style);
    }
    return style;
  }

  /** Left out with everything inside it: not rendered, or hidden from assistive technology. */
  function isHidden(element) {
    return attributeOf(element, "aria-hidden") === "true" || styleOf(element).display === "none";
  }

  const attribute = (element, name) => (attributeOf(element, name) ?? "").trim();

  function inputRole(input) {
    const type = input.type;
    if (TEXT_INPUTS.has(type) && hasAttribute(input, "list")) return "combobox";
    return INPUT_ROLES[type] ?? "textbox";
  }

  /** The role the element's tag gives it: "generic" when none, "none" when it is decoration. */
  function tagRole(element) {
    const tag = tagOf(element);
    if (TAG_ROLES[tag]) return TAG_ROLES[tag];
    switch (tag) {
      case "a":
        return hasAttribute(element, "href") ? "link" : "generic";
      case "h1":
      case "h2":
      case "h3":
      case "h4":
      case "h5":
      case "h6":
        return "heading";
      case "img":
        return attributeOf(element, "alt") === "" && !hasAttribute(element, "aria-label") ? "none" : "img";
      case "svg":
        // As Chromium and Playwright show it; one drawn for looks alone is left out of snapshots.
        return "img";
      case "canvas":
        return attribute(element, "aria-label") || element.querySelector(":scope > title") ? "img" : "none";
      case "input":
        return element.type === "hidden" ? "none" : inputRole(element);
      case "select":
        return element.multiple || element.size > 1 ? "listbox" : "combobox";
      case "section":
        return attribute(element, "aria-label") || hasAttribute(element, "aria-labelledby") ? "region" : "generic";
      case "header":
      case "footer":
        // Landmarks only for the page as a whole, not for an article's or a section's.
        if (element.parentElement?.closest("article, aside, main, nav, section")) return "generic";
        return tag === "header" ? "banner" : "contentinfo";
      case "summary":
        return element.parentElement?.localName === "details" &&
          element.parentElement.querySelector(":scope > summary") === element
          ? "button"
          : "generic";
      case "th":
        return attributeOf(element, "scope") === "row" ? "rowheader" : "columnheader";
      default:
        return "generic";
    }
  }

  /** The element's role: the first ARIA role its `role` attribute names, else its tag's. */
  function roleOf(element) {
    const tokens = attributeOf(element, "role")?.toLowerCase().split(/\s+/) ?? [];
    const explicit = tokens.find((token) => ROLES.has(token));
    if (explicit) return explicit === "presentation" ? "none" : explicit === "image" ? "img" : explicit;
    return tagRole(element);
  }

  /** What a control holds as text: a field's value (a password's as dots), a drop-down's choice. */
  function valueOf(element, role) {
    const tag = tagOf(element);
    if (tag === "input" || tag === "textarea") {
      if (element.type === "checkbox" || element.type === "radio" || INPUT_ROLES[element.type] === "button") return "";
      return element.type === "password" ? "•".repeat(element.value.length) : element.value;
    }
    if (tag === "select") return element.selectedOptions[0]?.label ?? "";
    if (role === "slider" || role === "spinbutton" || role === "progressbar" || role === "meter") {
      return attribute(element, "aria-valuetext") || attribute(element, "aria-valuenow");
    }
    return "";
  }

  /** The nodes an element shows: its shadow tree's, a slot's assigned ones, a closed <details>'s summary. */
  function childNodesOf(element) {
    const tag = tagOf(element);
    if (tag === "slot") {
      const assigned = element.assignedNodes();
      if (assigned.length) return assigned;
    }
    if (tag === "details" && !element.open) {
      const summary = element.querySelector(":scope > summary");
      return summary ? [summary] : [];
    }
    return element.shadowRoot?.childNodes ?? element.childNodes;
  }

  const isOn = (element, name) => {
    const value = attributeOf(element, name);
    return value === "true" ? true : value === "mixed" ? "mixed" : false;
  };

  /**
   * The states a snapshot shows: checked, disabled, expanded, focused, invalid, level, pressed,
   * selected; `inertAncestor` says an ancestor is aria-disabled.
   */
  function statesOf(element, role, focused, inertAncestor) {
    const props = {};
    const tag = tagOf(element);
    if (CHECKABLE.has(role)) {
      if (tag === "input" && (element.type === "checkbox" || element.type === "radio")) {
        props.checked = element.indeterminate ? "mixed" : element.checked;
      } else {
        props.checked = isOn(element, "aria-checked");
      }
    }
    // Only these elements have a `disabled` the tools' world sees, and :disabled matches no others.
    const disabled = DISABLEABLE.has(tag) && "disabled" in element && element.matches(":disabled");
    if (disabled || attributeOf(element, "aria-disabled") === "true" || (inertAncestor && OPERABLE.has(role))) {
      props.disabled = true;
    }
    if (attributeOf(element, "aria-expanded") === "true") props.expanded = true;
    else if (tag === "summary" && role === "button" && element.parentElement.open) props.expanded = true;
    if (element === focused) props.focused = true;
    const invalid = attributeOf(element, "aria-invalid");
    if (invalid && invalid !== "false") props.invalid = true;
    if (role === "heading") {
      props.level = Number(attributeOf(element, "aria-level")) || Number(/^h([1-6])$/.exec(tag)?.[1]) || 2;
    } else if (role === "treeitem" && hasAttribute(element, "aria-level")) {
      props.level = Number(attributeOf(element, "aria-level"));
    }
    if (role === "button") props.pressed = isOn(element, "aria-pressed");
    if (SELECTABLE.has(role)) props.selected = tag === "option" ? element.selected : isOn(element, "aria-selected");
    return props;
  }

  /** The element that has the focus, inside shadow roots too; none when it is the page itself. */
  function focusedElement() {
    let active = document.activeElement;
    while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
    return active === document.body || active === document.documentElement ? null : active;
  }

  const rules = {
    SILENT,
    styleOf,
    isHidden,
    childNodesOf,
    roleOf,
    valueOf,
    statesOf,
    focusedElement,
    tagOf,
    attributeOf,
    hasAttribute,
    drawingOf,
  };
  rules.nameOf = accessibleNames(rules, { INPUT_ROLES, TEXT_INPUTS, attribute });
  return rules;
}
