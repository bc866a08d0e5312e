// A snapshot's items (snapshot.js) as the YAML Playwright MCP shows clients: one
// `- role "name" [state] [ref=e7]` line per element, nested by two spaces, its text after a colon
// when that is all it holds, `- text:` for text between elements, `- /url:` for a link's target.
// Quoted the way YAML needs it, so that a client's YAML parser reads the names back.
//
// Runs in the page: yamlRenderer is sent as source, so it may use nothing from this module's scope.

/**
 * `render(items, maxDepth, refFor, boxes)`: the YAML text; `refFor(element)` names an element's ref;
 * with `boxes`, each element's line ends with its `[box=x,y,width,height]` (its
 * getBoundingClientRect in its document's viewport, CSS pixels, rounded), after its ref as
 * Playwright MCP puts it.
 */
export function yamlRenderer() {
  const MAX_NAME = 900;
  /** Roles whose level ARIA means: Chromium gives list items one too. */
  const LEVELED = new Set(["heading", "treeitem"]);

  function needsQuotes(text) {
    return (
      text === "" ||
      /^\s|\s$|[\n\r\t]|[:#]\s|:$|^[-?:,[\]{}#&*!|>'"%@`]|[{}`]/.test(text) ||
      /^(true|false|yes|no|on|off|null|y|n|~)$/i.test(text) ||
      !Number.isNaN(Number(text))
    );
  }

  const yamlValue = (text) => (needsQuotes(text) ? JSON.stringify(text) : text);
  const yamlKey = (text) => (needsQuotes(text) ? `'${text.replace(/'/g, "''")}'` : text);

  function keyOf(item, ref, boxes) {
    const { props } = item;
    let key = item.role;
    if (item.name && item.name.length <= MAX_NAME) key += ` ${JSON.stringify(item.name)}`;
    if (props.checked === true) key += " [checked]";
    if (props.checked === "mixed") key += " [checked=mixed]";
    if (props.disabled) key += " [disabled]";
    if (props.expanded) key += " [expanded]";
    if (props.focused) key += " [active]";
    if (props.invalid) key += " [invalid]";
    if (props.level && LEVELED.has(item.role)) key += ` [level=${props.level}]`;
    if (props.pressed === true) key += " [pressed]";
    if (props.pressed === "mixed") key += " [pressed=mixed]";
    if (props.selected === true) key += " [selected]";
    if (ref) key += ` [ref=${ref}]`;
    if (boxes && item.element) {
      const box = item.element.getBoundingClientRect();
      key += ` [box=${[box.x, box.y, box.width, box.height].map(Math.round).join(",")}]`;
    }
    return key;
  }

  /** Lines for `items` at `depth`; below `maxDepth` only an element's own text still shows. */
  function renderItems(items, depth, maxDepth, refFor, lines, boxes) {
    const indent = "  ".repeat(depth);
    for (const item of items) {
      if (item.text !== undefined) {
        lines.push(`${indent}- text: ${yamlValue(item.text)}`);
        continue;
      }
      const key = `${indent}- ${yamlKey(keyOf(item, item.element ? refFor(item.element) : null, boxes))}`;
      const onlyText = item.children.length === 1 && item.children[0].text !== undefined;
      const children = onlyText || depth !== maxDepth ? item.children : [];
      if (item.url === undefined && !children.length) lines.push(key);
      else if (item.url === undefined && onlyText) lines.push(`${key}: ${yamlValue(item.children[0].text)}`);
      else {
        lines.push(`${key}:`);
        if (item.url !== undefined) lines.push(`${indent}  - /url: ${yamlValue(item.url)}`);
        renderItems(children, depth + 1, maxDepth, refFor, lines, boxes);
      }
    }
  }

  return (items, maxDepth, refFor, boxes = false) => {
    const lines = [];
    renderItems(items, 0, maxDepth, refFor, lines, boxes);
    return lines.join("\n");
  };
}
