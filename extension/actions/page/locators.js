// Playwright locators for the page's elements, made in the page itself (in the tools' isolated
// world, where the page's scripts cannot reach): `getByRole('button', { name: 'Save' })`, and the
// engines that check one before it is handed out, read as Playwright's own read the page
// (getByRole, getByLabel, getByPlaceholder, getByText, getByTestId, a CSS locator, chained,
// `.filter({ hasText })` and `.nth()`), open shadow roots included, in the order Playwright lists
// what they match. Roles and accessible names are those the snapshot shows (roles.js, names.js).
//
// browser_generate_locator answers with it; a recorder of the person's actions is to reuse it.
//
// Runs in the page: locatorEngine is sent as source with ariaRules (roles.js) and accessibleNames
// (names.js), so it may use nothing from this module's scope, only the page's globals.

/**
 * The locator engine of one document.
 *
 * `locatorFor(element)` is the contract: Playwright code (JavaScript's spelling, as Playwright MCP
 * shows it, without `page.`) that resolves, in the element's document, to that element and no
 * other, checked so before it is answered; null when none does. An iframe element gets a CSS
 * locator, for `.contentFrame()` to follow.
 *
 * `session()` gives the helpers one reading of the page is made of (page/checks.js uses them):
 * styles and texts are read once per session, so a session is for one call.
 *
 * @param {typeof import("./roles.js").ariaRules} ariaRules
 * @param {typeof import("./names.js").accessibleNames} accessibleNames
 * @returns {{locatorFor: (element: Element) => string | null, session: () => object}}
 */
export function locatorEngine(ariaRules, accessibleNames) {
  /** Roles a locator may name: those Playwright computes as we do, for what a person acts on or reads by. */
  const ROLES = new Set(
    (
      "alert alertdialog article banner button cell checkbox columnheader combobox complementary " +
      "contentinfo dialog form grid gridcell heading img link list listbox listitem main menu menubar " +
      "menuitem menuitemcheckbox menuitemradio meter navigation option progressbar radio radiogroup " +
      "region row rowheader searchbox slider spinbutton status switch tab table tablist tabpanel " +
      "textbox tree treegrid treeitem"
    ).split(" "),
  );
  const LONGEST = 80;
  const normalize = (text) =>
    String(text ?? "")
      .replace(/\u200b/g, "")
      .replace(/\s+/g, " ")
      .trim();
  const lower = (text) => normalize(text).toLowerCase();
  const quote = (text) =>
    "'" + text.replace(/\\/g, "\\\\").replace(/'/g, "\\'").replace(/\n/g, "\\n").replace(/\r/g, "\\r") + "'";

  /** The element around `node`: its parent, or the host of the shadow root it is in. */
  const parentOf = (node) =>
    node.parentElement ?? (node.parentNode?.nodeType === Node.DOCUMENT_FRAGMENT_NODE ? node.parentNode.host : null);

  function session() {
    const rules = ariaRules(accessibleNames);
    const texts = new Map();
    const under = new Map();
    const hiddenForAria = new Map();

    /**
     * The elements under `scope` (a document or an element, not itself), open shadow roots
     * included, as Playwright's engines list them: a root's own elements in document order, then
     * those of each shadow root in it, in turn.
     */
    function allUnder(scope) {
      let found = under.get(scope);
      if (found) return found;
      found = [];
      const visit = (root) => {
        const inside = [...root.querySelectorAll("*")];
        found.push(...inside);
        if (root.shadowRoot) visit(root.shadowRoot);
        for (const element of inside) if (element.shadowRoot) visit(element.shadowRoot);
      };
      visit(scope);
      under.set(scope, found);
      return found;
    }

    const skipsText = (element) =>
      ["SCRIPT", "NOSCRIPT", "STYLE"].includes(element.nodeName) || Boolean(document.head?.contains(element));

    /** An element's text as Playwright's text engines read it: all its text, its shadow tree's too. */
    function textOf(root) {
      let text = texts.get(root);
      if (text !== undefined) return text;
      text = "";
      if (root.nodeType === Node.ELEMENT_NODE && skipsText(root)) {
        // nothing
      } else if (root.localName === "input" && (root.type === "submit" || root.type === "button")) {
        text = root.value;
      } else {
        for (let child = root.firstChild; child; child = child.nextSibling) {
          if (child.nodeType === Node.TEXT_NODE) text += child.nodeValue ?? "";
          else if (child.nodeType === Node.ELEMENT_NODE) text += textOf(child);
        }
        if (root.shadowRoot) text += textOf(root.shadowRoot);
      }
      texts.set(root, text);
      return text;
    }

    /** How an element meets a text matcher: "self" (it, and no element inside it), "children", "none". */
    function meets(element, matches) {
      if (skipsText(element) || !matches(normalize(textOf(element)))) return "none";
      for (let child = element.firstChild; child; child = child.nextSibling) {
        if (child.nodeType === Node.ELEMENT_NODE && matches(normalize(textOf(child)))) return "children";
      }
      if (element.shadowRoot && matches(normalize(textOf(element.shadowRoot)))) return "children";
      return "self";
    }

    const containing = (text) => {
      const needle = lower(text);
      return (value) => value.toLowerCase().includes(needle);
    };

    /** Left out of the accessibility tree, as getByRole leaves it out: hidden, here or above. */
    function isHiddenForAria(element) {
      let hidden = hiddenForAria.get(element);
      if (hidden !== undefined) return hidden;
      const parent = parentOf(element);
      const style = rules.styleOf(element);
      if (element.getAttribute("aria-hidden") === "true" || style.display === "none") hidden = true;
      else if (style.display !== "contents" && !element.checkVisibility()) hidden = true;
      else hidden = parent ? isHiddenForAria(parent) : false;
      hiddenForAria.set(element, hidden);
      return hidden;
    }

    /** The role the snapshot shows the element with, or null when it is hidden from it. */
    function roleOf(element) {
      if (isHiddenForAria(element)) return null;
      return rules.styleOf(element).visibility === "visible" ? rules.roleOf(element) : "none";
    }

    const nameOf = (element, role) => normalize(rules.nameOf(element, role));

    /** Visible as Playwright means it: rendered, not visibility: hidden, with a box of some size. */
    function isVisible(element) {
      const style = getComputedStyle(element);
      if (style.display === "contents") {
        for (let child = element.firstChild; child; child = child.nextSibling) {
          if (child.nodeType === Node.ELEMENT_NODE && isVisible(child)) return true;
          if (child.nodeType === Node.TEXT_NODE && child.nodeValue.trim()) {
            const range = document.createRange();
            range.selectNodeContents(child);
            const box = range.getBoundingClientRect();
            if (box.width > 0 && box.height > 0) return true;
          }
        }
        return false;
      }
      if (!element.checkVisibility() || style.visibility !== "visible") return false;
      const box = element.getBoundingClientRect();
      return box.width > 0 && box.height > 0;
    }

    /** The texts that label an element, as getByLabel reads them. */
    function labelsOf(element) {
      const ids = element.getAttribute("aria-labelledby");
      if (ids) {
        const root = element.getRootNode();
        const labels = ids
          .split(/\s+/)
          .map((id) => root.getElementById?.(id) ?? document.getElementById(id))
          .filter(Boolean);
        if (labels.length) return labels.map(textOf);
      }
      const ariaLabel = element.getAttribute("aria-label");
      if (ariaLabel?.trim()) return [ariaLabel];
      const labelled = ["button", "meter", "output", "progress", "select", "textarea"].includes(element.localName);
      if (labelled || (element.localName === "input" && element.type !== "hidden")) {
        return [...(element.labels ?? [])].map(textOf);
      }
      return [];
    }

    // The engines, each `(scope) => elements` as Playwright's answer them. Where Playwright's own
    // match is looser than ours could be (its non-exact match is a case-insensitive substring), ours
    // is at least as loose, so that one match here is one match there.
    const engines = {
      role: (role, name, exact) => (scope) =>
        allUnder(scope).filter((element) => {
          if (roleOf(element) !== role) return false;
          if (name === undefined) return true;
          const actual = nameOf(element, role);
          return exact ? actual === normalize(name) : actual.toLowerCase().includes(lower(name));
        }),
      text: (text) => (scope) => allUnder(scope).filter((element) => meets(element, containing(text)) === "self"),
      label: (text, exact) => (scope) =>
        allUnder(scope).filter((element) =>
          labelsOf(element).some((label) =>
            exact ? normalize(label) === normalize(text) : containing(text)(normalize(label)),
          ),
        ),
      placeholder: (text, exact) => (scope) =>
        allUnder(scope).filter((element) => {
          const value = element.getAttribute("placeholder");
          return value !== null && (exact ? normalize(value) === normalize(text) : containing(text)(value));
        }),
      testId: (id) => (scope) => allUnder(scope).filter((element) => element.getAttribute("data-testid") === id),
      css: (selector) => (scope) => allUnder(scope).filter((element) => element.matches(selector)),
    };

    return {
      rules,
      allUnder,
      textOf,
      meets,
      containing,
      roleOf,
      nameOf,
      isVisible,
      labelsOf,
      engines,
      normalize,
      lower,
    };
  }

  // A locator is a list of steps, each {code, apply(elements) -> elements}, applied from the document.
  const query = (code, find) => ({
    code,
    apply: (roots) => {
      const found = new Set();
      for (const root of roots) for (const element of find(root)) found.add(element);
      return [...found];
    },
  });
  const resolve = (steps, scope) => steps.reduce((roots, step) => step.apply(roots), [scope]);
  const codeOf = (steps) => steps.map((step) => step.code).join(".");

  /** The fields a person finds by their label or placeholder, as tests usually do. */
  const FIELDS = new Set(["textbox", "searchbox", "combobox", "spinbutton", "slider", "listbox"]);

  /** The element's own locators, the best first: each one step, `text` marking the text's. */
  function ownSteps(s, element) {
    const { engines } = s;
    const steps = [];
    const add = (code, find, text = false) => steps.push({ ...query(code, find), text });
    const testId = element.getAttribute("data-testid");
    if (testId) add(`getByTestId(${quote(testId)})`, engines.testId(testId));
    const role = s.roleOf(element);
    const named = ROLES.has(role);
    const name = named ? s.nameOf(element, role) : "";
    // A label's text holds its field's too (a drop-down's options): the name it gives is enough.
    const labels = s
      .labelsOf(element)
      .map(s.normalize)
      .map((label) => (name && label.toLowerCase().includes(name.toLowerCase()) ? name : label))
      .filter((label) => label && label.length <= LONGEST);
    const placeholder = s.normalize(element.getAttribute("placeholder"));
    const byLabel = () => {
      for (const label of labels) {
        add(`getByLabel(${quote(label)})`, engines.label(label, false));
        add(`getByLabel(${quote(label)}, { exact: true })`, engines.label(label, true));
      }
    };
    const byPlaceholder = () => {
      if (!placeholder || placeholder.length > LONGEST) return;
      add(`getByPlaceholder(${quote(placeholder)})`, engines.placeholder(placeholder, false));
      add(`getByPlaceholder(${quote(placeholder)}, { exact: true })`, engines.placeholder(placeholder, true));
    };
    // A field goes by its label, or by its placeholder when that is all that names it.
    const field = FIELDS.has(role) && ["input", "select", "textarea"].includes(element.localName);
    if (field && labels.length) byLabel();
    else if (field && placeholder && name === placeholder) byPlaceholder();
    if (name && name.length <= LONGEST) {
      add(`getByRole(${quote(role)}, { name: ${quote(name)} })`, engines.role(role, name, false));
      add(`getByRole(${quote(role)}, { name: ${quote(name)}, exact: true })`, engines.role(role, name, true));
    }
    byLabel();
    byPlaceholder();
    const text = s.normalize(s.textOf(element));
    if (text && text.length <= LONGEST && s.meets(element, s.containing(text)) === "self") {
      add(`getByText(${quote(text)})`, engines.text(text), true);
    }
    if (named) add(`getByRole(${quote(role)})`, engines.role(role));
    return steps;
  }

  /** CSS selectors of the element alone, the most telling first; its tag name last. */
  function cssSelectors(element) {
    const tag = CSS.escape(element.localName);
    const selectors = [];
    const attribute = (name) => {
      const value = element.getAttribute(name);
      if (value) selectors.push(`${tag}[${name}="${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"]`);
    };
    if (element.localName === "iframe" || element.localName === "frame") attribute("title");
    if (element.id) selectors.push(`#${CSS.escape(element.id)}`);
    for (const name of ["name", "title", "aria-label", "src", "href", "type"]) attribute(name);
    const classes = [...element.classList].slice(0, 3).map((name) => `.${CSS.escape(name)}`);
    if (classes.length) selectors.push(tag + classes.join(""));
    selectors.push(tag);
    return [...new Set(selectors)];
  }

  /** Texts the ancestor shows outside the element, to tell it from its look-alikes by. */
  function textsOutside(s, ancestor, element) {
    const chunks = [];
    const walker = document.createTreeWalker(ancestor, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node && chunks.length < 4; node = walker.nextNode()) {
      if (element.contains(node) || skipsTextNode(node)) continue;
      const chunk = s.normalize(node.nodeValue);
      if (chunk && chunk.length <= 40 && !chunks.includes(chunk)) chunks.push(chunk);
    }
    return chunks;
  }
  const skipsTextNode = (node) => ["SCRIPT", "STYLE", "NOSCRIPT"].includes(node.parentElement?.nodeName);

  /** Locators of an ancestor to narrow the element's down to it: its own, or its role with a text of its. */
  function scopeSteps(s, ancestor, element) {
    const own = ownSteps(s, ancestor);
    const options = own.filter((step) => !step.text).map((step) => [step]);
    const role = s.roleOf(ancestor);
    const chunks = textsOutside(s, ancestor, element);
    const bases = [];
    if (ROLES.has(role)) bases.push(query(`getByRole(${quote(role)})`, s.engines.role(role)));
    for (const selector of cssSelectors(ancestor).slice(0, -1)) {
      bases.push(query(`locator(${quote(selector)})`, s.engines.css(selector)));
    }
    for (const base of bases) {
      for (const chunk of chunks) {
        const matches = s.containing(chunk);
        const filter = {
          code: `filter({ hasText: ${quote(chunk)} })`,
          apply: (roots) => roots.filter((root) => matches(s.normalize(s.textOf(root)))),
        };
        options.push([base, filter]);
      }
      options.push([base]);
    }
    return [...options, ...own.filter((step) => step.text).map((step) => [step])];
  }

  const only = (found, element) => found.length === 1 && found[0] === element;

  /** A locator of the iframe element, in CSS, for `.contentFrame()`. */
  function frameLocator(s, element, scope) {
    const steps = cssSelectors(element).map((selector) =>
      query(`locator(${quote(selector)})`, s.engines.css(selector)),
    );
    for (const step of steps) if (only(resolve([step], scope), element)) return codeOf([step]);
    return nth(steps.at(-1), resolve([steps.at(-1)], scope), element);
  }

  const nth = (step, found, element) => {
    const index = found.indexOf(element);
    return index < 0 ? null : index === 0 && found.length === 1 ? step.code : `${step.code}.nth(${index})`;
  };

  function locatorFor(element) {
    if (!element?.isConnected || element.nodeType !== Node.ELEMENT_NODE) return null;
    const s = session();
    const scope = element.ownerDocument;
    if (element.localName === "iframe" || element.localName === "frame") return frameLocator(s, element, scope);
    const own = ownSteps(s, element);
    for (const step of own) if (only(resolve([step], scope), element)) return codeOf([step]);
    const leaves = [...own, ...cssSelectors(element).map((css) => query(`locator(${quote(css)})`, s.engines.css(css)))];
    const alone = new Set(leaves.filter((leaf) => only(resolve([leaf], scope), element)));
    let level = 0;
    for (let ancestor = parentOf(element); ancestor && level < 8; ancestor = parentOf(ancestor), level++) {
      if (ancestor === scope.body || ancestor === scope.documentElement) break;
      for (const outer of scopeSteps(s, ancestor, element)) {
        if (!only(resolve(outer, scope), ancestor)) continue;
        for (const leaf of leaves) {
          // One that finds the element alone needs no chain (a CSS one comes last, below).
          if (alone.has(leaf)) continue;
          const chain = [...outer, leaf];
          if (only(resolve(chain, scope), element)) return codeOf(chain);
        }
      }
    }
    if (own.length) {
      const found = resolve([own[0]], scope);
      const answer = nth(own[0], found, element);
      if (answer) return answer;
    }
    const css = cssSelectors(element).map((selector) => query(`locator(${quote(selector)})`, s.engines.css(selector)));
    for (const step of css) if (only(resolve([step], scope), element)) return codeOf([step]);
    const last = css.at(-1);
    return nth(last, resolve([last], scope), element);
  }

  return { locatorFor, session };
}
