// The testing tools' reading of one document (browser_verify_*, browser_generate_locator), made in
// the page itself, in the tools' isolated world, with the locator engine's helpers (locators.js):
// the same roles and names as the snapshot (roles.js, names.js), visibility as Playwright means it
// (rendered, not visibility: hidden, a box of some size), open shadow roots included. Each driver
// runs it in every frame's document it needs and puts the answers together
// (actions/testing.js).
//
// Runs in the page: testingChecks is sent as source with ariaRules, accessibleNames and
// locatorEngine, so it may use nothing from this module's scope.

/**
 * The checks, each `(element, ...args)` (element: the target's, or null for the document) with a
 * JSON answer.
 */
export function testingChecks(ariaRules, accessibleNames, locatorEngine) {
  const engine = locatorEngine(ariaRules, accessibleNames);
  const MOST = 8;
  const ITEM_ROLES = new Set(
    "listitem option row treeitem menuitem menuitemcheckbox menuitemradio tab gridcell article".split(" "),
  );

  /** How alike two texts are, 0 to 1: their shared letter pairs (Dice's coefficient), case aside. */
  function likeness(a, b) {
    const pairs = (text) => {
      const lowered = text.toLowerCase().slice(0, 200);
      const found = new Map();
      for (let i = 0; i < lowered.length - 1; i++) {
        const pair = lowered.slice(i, i + 2);
        found.set(pair, (found.get(pair) ?? 0) + 1);
      }
      return found;
    };
    const [first, second] = [pairs(a), pairs(b)];
    let shared = 0;
    for (const [pair, count] of first) shared += Math.min(count, second.get(pair) ?? 0);
    const total = Math.max(a.length - 1, 0) + Math.max(b.length - 1, 0);
    if (!total) return a.toLowerCase() === b.toLowerCase() ? 1 : 0;
    return (2 * shared) / total;
  }

  /** The `texts` most like `wanted`, each {text, score}, the likest first. */
  const likest = (texts, wanted) =>
    [...new Set(texts)]
      .map((text) => ({ text, score: likeness(text, wanted) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, MOST);

  function describe(s, element) {
    const role = s.roleOf(element) ?? s.rules.roleOf(element);
    const name = s.nameOf(element, role);
    if (role !== "generic" && role !== "none" && name) return `${role} "${name}"`;
    const tag = element.localName;
    return `<${tag}${element.id ? "#" + element.id : element.classList[0] ? "." + element.classList[0] : ""}>`;
  }

  /** Texts that show: each visible element's own text, for the closest matches of a text not found. */
  function shownTexts(s, scope) {
    const texts = [];
    for (const element of s.allUnder(scope)) {
      let own = "";
      for (let child = element.firstChild; child; child = child.nextSibling) {
        if (child.nodeType === Node.TEXT_NODE) own += child.nodeValue;
      }
      own = s.normalize(own);
      if (own && s.meets(element, () => true) !== "none" && s.isVisible(element)) texts.push(own);
    }
    return texts;
  }

  /** The list's items as it shows them: its item elements' texts, or its children's. */
  function itemsOf(s, list) {
    const items = s.allUnder(list).filter((element) => ITEM_ROLES.has(s.roleOf(element)));
    const outer = items.filter((item) => !items.some((other) => other !== item && other.contains(item)));
    const shown = (outer.length ? outer : [...list.children]).filter(s.isVisible);
    return shown.map((item) => s.normalize(s.textOf(item))).filter(Boolean);
  }

  return {
    /** Elements of `role` whose name holds `name` (getByRole's match): how many show, how many hide, and the others'. */
    role(_, role, name) {
      const s = engine.session();
      let visible = 0;
      let hidden = 0;
      const others = [];
      const wanted = s.lower(name);
      for (const element of s.allUnder(document)) {
        const shownRole = s.roleOf(element);
        const actual = shownRole ?? s.rules.roleOf(element);
        if (actual !== role) continue;
        const actualName = s.nameOf(element, role);
        const shows = shownRole === role && s.isVisible(element);
        if (actualName.toLowerCase().includes(wanted)) {
          if (shows) visible++;
          else hidden++;
        } else if (shows && actualName) {
          others.push(actualName);
        }
      }
      return { visible, hidden, others: likest(others, name) };
    },

    /** Elements whose text holds `text` (getByText's match): how many show, those that hide, and the closest shown texts. */
    text(_, text) {
      const s = engine.session();
      const matches = s.engines.text(text)(document);
      const visible = matches.filter(s.isVisible);
      const hidden = matches.filter((element) => !visible.includes(element)).map((element) => describe(s, element));
      return {
        visible: visible.length,
        hidden: hidden.slice(0, MOST),
        near: visible.length ? [] : likest(shownTexts(s, document), s.normalize(text)),
      };
    },

    /** The list's items, and which of `items` it does not show. */
    list(list, items) {
      const s = engine.session();
      if (!s.isVisible(list)) return { visible: false, what: describe(s, list), missing: items, shown: [] };
      const missing = items.filter((item) => !s.engines.text(item)(list).some(s.isVisible));
      return { visible: true, what: describe(s, list), missing, shown: missing.length ? itemsOf(s, list) : [] };
    },

    /** The element's value as a field of `type` holds it: {value} or {checked}, or {error}. */
    value(element, type) {
      const s = engine.session();
      const tag = element.localName;
      const what = describe(s, element);
      if (type === "checkbox" || type === "radio") {
        if (tag === "input" && (element.type === "checkbox" || element.type === "radio")) {
          return { checked: element.checked, what };
        }
        const aria = element.getAttribute("aria-checked");
        if (aria !== null) return { checked: aria === "true", what };
        return { error: `${what} cannot be checked` };
      }
      if (tag === "select") {
        const chosen = element.selectedOptions[0];
        return { value: element.value, label: chosen ? s.normalize(chosen.label) : "", what };
      }
      if (tag === "input" || tag === "textarea") return { value: element.value, what };
      if (element.isContentEditable) return { value: element.innerText, what };
      const aria = element.getAttribute("aria-valuetext") ?? element.getAttribute("aria-valuenow");
      if (aria !== null) return { value: aria, what };
      return { error: `${what} holds no value` };
    },

    /** browser_generate_locator's answer for the element (locators.js), or null. */
    locator: (element) => engine.locatorFor(element),

    /** The frames (iframe elements) that show, where the checks go on. */
    frames() {
      const s = engine.session();
      return s
        .allUnder(document)
        .filter((element) => ["iframe", "frame"].includes(element.localName) && s.isVisible(element));
    },
  };
}
