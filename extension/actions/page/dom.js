// The dom group's page side (browser_get_text, browser_get_html, browser_inspect, browser_query),
// one function both drivers run in the tools' isolated world of a document, where the page's own
// scripts can neither see it nor change what it reads (a page that replaces querySelectorAll,
// getComputedStyle or innerText changes only its own world's). Roles, names and states are the
// snapshot's (roles.js, names.js); a match of browser_query gets its ref from the snapshot's agent
// (snapshot.js), so a later click by that ref finds it.
//
// Runs in the page: pageDom is sent as source (devtools/dom.js) or as scripting's `func`
// (webext/dom.js), so it may use nothing from this module's scope. `world` is what it works with:
// {agent, ariaRules, accessibleNames, element} given by the DevTools driver, or the module
// addresses [agent, roles, names] the WebExtension driver's isolated world imports (then `target`,
// {ref} or {selector}, names the element, looked up here).

/**
 * `method` ("text", "html", "inspect", "query") on the element (null: the document) with `args`:
 * {value}, or {missing} when `target` names no element ("gone", "unknown", "no match", "bad selector").
 */
export async function pageDom(world, method, target, args) {
  let agent, ariaRules, accessibleNames;
  let element = null;
  if (Array.isArray(world)) {
    const [agentModule, rolesModule, namesModule] = await Promise.all(world.map((url) => import(url)));
    ({ agent } = agentModule);
    ({ ariaRules } = rolesModule);
    ({ accessibleNames } = namesModule);
    if (target?.selector !== undefined) {
      try {
        element = document.querySelector(target.selector) ?? "no match";
      } catch {
        element = "bad selector";
      }
    } else if (target?.ref !== undefined) {
      element = agent.element(target.ref);
    }
    if (typeof element === "string") return { missing: element };
  } else {
    ({ agent, ariaRules, accessibleNames, element = null } = world);
  }
  const rules = ariaRules(accessibleNames);
  // Our own highlight boxes' host (page_effects.js), kept by this world: never part of the page.
  const ours = globalThis.__browserMcpHighlights?.host ?? null;
  const normalize = (text) => text.replace(/\s+/g, " ").trim();

  function cut(text, limit) {
    if (text.length <= limit) return { text, length: text.length };
    const lineEnd = text.lastIndexOf("\n", limit);
    return { text: text.slice(0, lineEnd > limit / 2 ? lineEnd : limit), length: text.length };
  }

  /** `<button#buy>` (its id, or its first class). */
  const tagOf = (node) =>
    `<${node.localName}${node.id ? `#${node.id}` : node.classList?.[0] ? `.${node.classList[0]}` : ""}>`;

  /** What an element is, for a client: its tag, and its role and name where it has them. */
  function described(node) {
    const role = rules.roleOf(node);
    const name = normalize(rules.nameOf(node, role) ?? "").slice(0, 80);
    const shown = role === "generic" || role === "none" ? "" : ` ${role}${name ? ` "${name}"` : ""}`;
    return `${tagOf(node)}${shown}`;
  }

  // --- browser_get_text: the readable text, as Markdown ---------------------------------------

  const BLOCK = "\n\n";
  // Kept through the clean-up, which trims spaces around line ends: a list's indent, a <pre>'s.
  const SPACE = "\u0001";
  const NEWLINE = "\u0002";
  const LEFT_OUT = new Set([...rules.SILENT, "svg", "canvas", "video", "audio", "object", "embed"]);
  const FIELDS = new Set(["input", "select", "textarea", "option", "datalist"]);
  const clean = (text) =>
    text
      .replace(/[ \t]*\n[ \t]*/g, "\n")
      .replace(/ {2,}/g, " ")
      .replace(/\n{3,}/g, "\n\n")
      .trim();
  const oneLine = (text) => clean(text).replace(/\n+/g, " ");
  const origin = location.origin === "null" ? "" : location.origin;
  const shortUrl = (url) => (origin && url.startsWith(origin + "/") ? url.slice(origin.length) : url);
  const hidden = (node) => node === ours || node.hidden || rules.isHidden(node);

  function childrenText(node, context) {
    let text = "";
    for (const child of rules.childNodesOf(node)) text += walk(child, context);
    return text;
  }

  function walk(node, context) {
    if (node.nodeType === Node.TEXT_NODE) {
      const parent = node.parentElement ?? node.parentNode?.host;
      if (parent && rules.styleOf(parent).visibility !== "visible") return "";
      if (context.pre) return node.nodeValue.replace(/\n/g, NEWLINE).replace(/ /g, SPACE);
      return node.nodeValue.replace(/\s+/g, " ");
    }
    if (node.nodeType !== Node.ELEMENT_NODE) return "";
    const tag = node.localName;
    if (LEFT_OUT.has(tag) || FIELDS.has(tag) || hidden(node)) return "";
    if (tag === "br") return context.pre ? NEWLINE : "\n";
    if (tag === "img") return context.link ? node.alt || "" : "";
    if (tag === "iframe" || tag === "frame") return frameText(node, context);
    const heading = /^h([1-6])$/.exec(tag);
    if (heading) {
      const title = oneLine(childrenText(node, context));
      return title ? `${BLOCK}${"#".repeat(Number(heading[1]))} ${title}${BLOCK}` : "";
    }
    switch (tag) {
      case "a": {
        const words = oneLine(childrenText(node, { ...context, link: true }));
        const href = node.hasAttribute("href") && typeof node.href === "string" ? node.href : "";
        if (!words || !href || /^javascript:/i.test(href)) return words;
        return `[${words}](${shortUrl(href)})`;
      }
      case "ul":
      case "ol":
      case "menu":
        return listText(node, context);
      case "table":
        return tableText(node, context);
      case "pre":
        return `${BLOCK}\`\`\`${NEWLINE}${childrenText(node, { ...context, pre: true })}${NEWLINE}\`\`\`${BLOCK}`;
      case "blockquote": {
        const quote = clean(childrenText(node, context));
        return quote ? `${BLOCK}${quote.replace(/^/gm, "> ")}${BLOCK}` : "";
      }
      default: {
        const text = childrenText(node, context);
        const display = rules.styleOf(node).display;
        if (display.startsWith("inline") || display === "contents") return display === "inline" ? text : ` ${text} `;
        return `${BLOCK}${text}${BLOCK}`;
      }
    }
  }

  function listText(list, context) {
    let number = Number(list.getAttribute("start")) || 1;
    const items = [];
    for (const child of rules.childNodesOf(list)) {
      if (child.nodeType !== Node.ELEMENT_NODE || child.localName !== "li") {
        const other = clean(walk(child, context));
        if (other) items.push(other);
        continue;
      }
      if (hidden(child)) continue;
      const body = clean(childrenText(child, context)).replace(/\n{2,}/g, "\n");
      if (!body) continue;
      const marker = list.localName === "ol" ? `${number++}. ` : "- ";
      items.push(marker + body.replace(/\n/g, `\n${SPACE.repeat(marker.length)}`));
    }
    return items.length ? `${BLOCK}${items.join("\n")}${BLOCK}` : "";
  }

  function tableText(table, context) {
    const rows = [];
    for (const row of table.rows) {
      if (hidden(row)) continue;
      const cells = Array.from(row.cells)
        .filter((cell) => !hidden(cell))
        .map((cell) => oneLine(childrenText(cell, context)).replace(/\|/g, "\\|"));
      if (cells.some(Boolean)) rows.push(cells);
    }
    if (!rows.length) return "";
    const width = Math.max(...rows.map((cells) => cells.length));
    const line = (cells) => `| ${Array.from({ length: width }, (_, index) => cells[index] || " ").join(" | ")} |`;
    const caption = table.caption && !hidden(table.caption) ? oneLine(childrenText(table.caption, context)) : "";
    const lines = [line(rows[0]), line(Array(width).fill("---")), ...rows.slice(1).map(line)];
    return `${BLOCK}${caption ? `${caption}\n\n` : ""}${lines.join("\n")}${BLOCK}`;
  }

  /** A same-origin frame's text in place; another site's frame is named, not read. */
  function frameText(frame, context) {
    let inner;
    try {
      inner = frame.contentDocument;
    } catch {
      inner = null;
    }
    if (inner?.body) return `${BLOCK}${childrenText(inner.body, context)}${BLOCK}`;
    const source = frame.src ? new URL(frame.src, document.baseURI).origin : "";
    return source && source !== origin ? `${BLOCK}[frame from ${source}: not read]${BLOCK}` : "";
  }

  /** The page's main content, as a reader reads it: its one <article> (not the related stories and
   * comments around it), else its <main> (or role main). */
  function mainContent() {
    const articles = [...document.querySelectorAll("article")].filter((node) => !hidden(node));
    if (articles.length === 1) return articles[0];
    const main = [...document.querySelectorAll('main, [role="main"]')].filter((node) => !hidden(node));
    return main.length === 1 ? main[0] : null;
  }

  function text(root, { maxChars }) {
    const main = root ? null : mainContent();
    const start = root ?? main ?? document.body ?? document.documentElement;
    if (!start) return { text: "", length: 0 };
    const rendered = root && (root.checkVisibility() || rules.styleOf(root).display === "contents");
    if (root && (!root.isConnected || hidden(root) || !rendered)) {
      return { error: "the element is hidden, so it shows no text" };
    }
    const whole = clean(walk(start, {})).replaceAll(SPACE, " ").replaceAll(NEWLINE, "\n");
    return { ...cut(whole, maxChars), main: main ? tagOf(main) : null };
  }

  // --- browser_get_html -----------------------------------------------------------------------

  /** The element's HTML: a copy in a document of no window (which loads nothing), password values blanked. */
  function html(root, { maxChars, outer }) {
    const start = root ?? document.documentElement;
    const inert = document.implementation.createHTMLDocument("");
    const copy = inert.importNode(start, true);
    // Our highlights' host, found in the copy by its place in the original.
    if (ours && start.contains(ours) && ours !== start) {
      const path = [];
      for (let node = ours; node !== start; node = node.parentNode) {
        path.unshift(Array.prototype.indexOf.call(node.parentNode.childNodes, node));
      }
      path.reduce((node, index) => node?.childNodes[index], copy)?.remove();
    }
    const inputs = [...(copy.localName === "input" ? [copy] : []), ...copy.querySelectorAll("input")];
    for (const input of inputs) {
      if (input.type === "password" && input.hasAttribute("value")) input.setAttribute("value", "");
    }
    return cut(outer === false ? copy.innerHTML : copy.outerHTML, maxChars);
  }

  // --- browser_inspect ------------------------------------------------------------------------

  const STYLES = [
    "display",
    "visibility",
    "opacity",
    "position",
    "z-index",
    "top",
    "left",
    "width",
    "height",
    "margin",
    "padding",
    "overflow",
    "pointer-events",
    "transform",
    "color",
    "background-color",
    "font-size",
    "font-weight",
    "cursor",
  ];
  const round = (value) => Math.round(value * 10) / 10;
  const isPassword = (node) => node.localName === "input" && node.type === "password";

  /** Whether `node` is `element` or inside it, shadow trees included. */
  function within(node, outer) {
    for (let at = node; at; at = at.parentNode ?? at.host) if (at === outer) return true;
    return false;
  }

  /** The element at a point of `doc`'s viewport, inside open shadow roots too. */
  function hitAt(doc, x, y) {
    let hit = doc.elementFromPoint(x, y);
    while (hit?.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  }

  function box(node) {
    const rect = node.getBoundingClientRect();
    const view = node.ownerDocument.defaultView;
    const [width, height] = [view.innerWidth, view.innerHeight];
    const answer = {
      x: round(rect.x),
      y: round(rect.y),
      width: round(rect.width),
      height: round(rect.height),
      pageX: round(rect.x + view.scrollX),
      pageY: round(rect.y + view.scrollY),
      viewport: { width, height },
    };
    const partly = rect.right > 0 && rect.bottom > 0 && rect.left < width && rect.top < height;
    const wholly = rect.left >= 0 && rect.top >= 0 && rect.right <= width && rect.bottom <= height;
    answer.inViewport = rect.width && rect.height ? (wholly ? "wholly" : partly ? "partly" : "no") : "no (no size)";
    const [x, y] = [rect.x + rect.width / 2, rect.y + rect.height / 2];
    if (!rect.width || !rect.height || x < 0 || y < 0 || x >= width || y >= height) {
      answer.covered = "unknown: its centre is out of view";
      return answer;
    }
    const hit = hitAt(node.ownerDocument, x, y);
    if (!hit || within(hit, node)) answer.covered = "no";
    else if (hit.localName === "label" && hit.control === node) answer.covered = "no (its label)";
    else answer.covered = `yes, by ${described(hit)}`;
    return answer;
  }

  function state(node) {
    const role = rules.roleOf(node);
    const props = rules.statesOf(node, role, rules.focusedElement(), Boolean(node.closest('[aria-disabled="true"]')));
    const rect = node.getBoundingClientRect();
    const visible =
      node.checkVisibility({ visibilityProperty: true }) &&
      rect.width > 0 &&
      rect.height > 0 &&
      !node.closest('[aria-hidden="true"]');
    const tag = node.localName;
    const field =
      (tag === "input" &&
        !["checkbox", "radio", "button", "submit", "reset", "image", "file", "range", "color", "hidden"].includes(
          node.type,
        )) ||
      tag === "textarea";
    const editable = field ? !node.readOnly && !node.matches(":disabled") : node.isContentEditable;
    return {
      role,
      visible,
      enabled: !props.disabled,
      checked: "checked" in props ? props.checked : "n/a",
      focused: Boolean(props.focused),
      editable,
      selected: "selected" in props ? props.selected : "n/a",
    };
  }

  /** The form's fields (or those inside the element): name, type, label, value; a password's never. */
  function formFields(node) {
    const form = node.localName === "form" ? node : (node.form ?? node.closest("form"));
    const fields = form ? [...form.elements] : [...node.querySelectorAll("input, select, textarea")];
    const answer = { form: form ? described(form) : `none: the fields inside ${tagOf(node)}`, fields: [] };
    for (const field of fields) {
      if (!["input", "select", "textarea"].includes(field.localName)) continue;
      const type = field.localName === "input" ? field.type : field.localName === "select" ? field.type : "textarea";
      if (["button", "submit", "reset", "image"].includes(type)) continue;
      const role = rules.roleOf(field);
      const entry = { name: field.name || field.id || "", type, label: normalize(rules.nameOf(field, role) ?? "") };
      if (isPassword(field)) entry.value = field.value ? "(a password: never shown)" : "";
      else if (type === "file") entry.value = `${field.files?.length ?? 0} file(s) chosen`;
      else if (field.localName === "select") entry.value = [...field.selectedOptions].map((option) => option.value);
      else entry.value = field.value;
      if (type === "checkbox" || type === "radio") entry.checked = field.checked;
      if (field.disabled) entry.disabled = true;
      answer.fields.push(entry);
    }
    return answer;
  }

  function inspect(node, { what, properties }) {
    const answer = { element: described(node) };
    if (what.includes("attributes")) {
      answer.attributes = Array.from(node.attributes, (attribute) => [
        attribute.name,
        isPassword(node) && attribute.name === "value" ? "" : attribute.value,
      ]);
    }
    if (what.includes("styles")) {
      const computed = getComputedStyle(node);
      answer.styles = (properties?.length ? properties : STYLES).map((name) => [name, computed.getPropertyValue(name)]);
    }
    if (what.includes("box")) answer.box = box(node);
    if (what.includes("state")) answer.state = state(node);
    if (what.includes("form")) answer.form = formFields(node);
    return answer;
  }

  // --- browser_query --------------------------------------------------------------------------

  /** The matches of `selector` in the document, then in each open shadow root. */
  function matchesOf(selector) {
    const found = [...document.querySelectorAll(selector)];
    const roots = [];
    const visit = (root) => {
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.shadowRoot) roots.push(node.shadowRoot);
      }
    };
    visit(document);
    for (let index = 0; index < roots.length; index++) {
      found.push(...roots[index].querySelectorAll(selector));
      visit(roots[index]);
    }
    return found;
  }

  function query(_, { selector, maxResults, lastRef }) {
    let found;
    try {
      found = matchesOf(selector);
    } catch (error) {
      return { invalid: error.message };
    }
    let last = lastRef;
    const shown = found.slice(0, maxResults).map((node) => {
      // The ref the snapshot gives the element (or gave it already): a snapshot of it alone, no deeper.
      const snapshot = agent.snapshot(node, { depth: 0, limit: 2000, lastRef: last, prefix: "" });
      const ref = snapshot.error ? null : (/\[ref=(e\d+)\]/.exec(snapshot.yaml)?.[1] ?? null);
      if (!snapshot.error) last = Math.max(last, snapshot.lastRef);
      const role = rules.roleOf(node);
      return {
        ref,
        tag: tagOf(node),
        role,
        name: normalize(rules.nameOf(node, role) ?? "").slice(0, 80),
        text: normalize(node.innerText ?? node.textContent ?? "").slice(0, 80),
      };
    });
    return { count: found.length, shown, lastRef: last };
  }

  const methods = { text, html, inspect, query };
  return { value: methods[method](element, args) };
}
