// The page as an accessibility snapshot, in the YAML shape Playwright MCP shows clients:
// `- role "name" [state] [ref=e7]` lines nested as the page is, text as `- text:`, link targets
// as `- /url:`. It is read from Chromium's own accessibility tree (Accessibility.getFullAXTree),
// so roles, names and states are the browser's, not a re-implementation of the ARIA rules.
//
// Kept small on purpose, as a client reads all of it: wrappers the browser itself finds
// uninteresting vanish and their content moves up, unless they group several things (a product
// card); names that only repeat the text below them are shown once; list bullets and the parts of
// a text field are left out. Every element shown gets a ref (refs.js), except the options of a
// closed drop-down, which browser_select_option reaches by value. Frames show as `- iframe`,
// without their content.

import { documentOf, send } from "./debugger.js";
import { ActionError, Code } from "./errors.js";
import { refNamer } from "./refs.js";

/** Chromium's internal roles, as the ARIA role a client knows them by (absent: generic). */
const INTERNAL_ROLES = {
  DisclosureTriangle: "button",
  MenuListOption: "option",
  Iframe: "iframe",
  IframePresentational: "iframe",
  Canvas: "img",
};
const ARIA_ROLES = { image: "img" };
/** Nodes that never show: their content (if any) moves up. */
const TRANSPARENT = new Set(["none", "presentation", "MenuListPopup", "RootWebArea"]);
const LEFT_OUT = new Set(["InlineTextBox", "ListMarker"]);
/** Roles whose text is their value: the inner parts Chromium lists for them are not shown. */
const VALUE_ROLES = new Set(["textbox", "searchbox", "spinbutton", "slider", "combobox"]);
const MAX_NAME = 900;
const LEVELED = new Set(["heading", "treeitem"]);

function propertiesOf(axNode) {
  const props = {};
  for (const property of axNode.properties ?? []) props[property.name] = property.value?.value;
  return props;
}

function roleOf(axNode) {
  const role = axNode.role?.value ?? "none";
  if (axNode.role?.type === "internalRole") {
    if (TRANSPARENT.has(role) || LEFT_OUT.has(role) || role === "StaticText" || role === "LineBreak") return role;
    return INTERNAL_ROLES[role] ?? "generic";
  }
  return ARIA_ROLES[role] ?? role;
}

const normalize = (text) => text.replace(/\s+/g, " ").trim();

/** Texts next to each other become one; `gap` says a block boundary lies between two. */
function mergeTexts(items) {
  const merged = [];
  for (const item of items) {
    const last = merged[merged.length - 1];
    if (typeof item === "object" && item.text !== undefined && last?.text !== undefined) {
      last.text += (last.gap || item.gap ? " " : "") + item.text;
      last.gap = item.gap;
    } else {
      merged.push(typeof item === "object" && item.text !== undefined ? { ...item } : item);
    }
  }
  const kept = [];
  for (const item of merged) {
    if (item.text === undefined) kept.push(item);
    else if (normalize(item.text)) kept.push({ text: normalize(item.text), gap: item.gap });
  }
  return kept;
}

/** What a node's content reads as: its texts, and its elements by name or their own content. */
function contentText(items) {
  return normalize(
    items.map((item) => (item.text !== undefined ? item.text : item.name || contentText(item.children))).join(" "),
  );
}

class TreeBuilder {
  constructor(nodes, origin) {
    this.byId = new Map(nodes.map((node) => [node.nodeId, node]));
    this.origin = origin;
  }

  childrenOf(axNode, context) {
    const items = [];
    for (const id of axNode.childIds ?? []) {
      const child = this.byId.get(id);
      if (child) items.push(...this.build(child, context));
    }
    return mergeTexts(items);
  }

  /** The items `axNode` shows as: none, some text, one element, or its children moved up. */
  build(axNode, context) {
    const role = roleOf(axNode);
    if (role === "StaticText") return [{ text: axNode.name?.value ?? "", gap: false }];
    if (role === "LineBreak") return [{ text: " ", gap: true }];
    if (LEFT_OUT.has(role)) return [];
    const inPopup = context.inPopup || role === "MenuListPopup";
    if (axNode.ignored || TRANSPARENT.has(role)) {
      const items = this.childrenOf(axNode, { ...context, inPopup });
      // A wrapper that holds several things keeps them together, as Playwright's generics do.
      const grouping = axNode.ignored && axNode.backendDOMNodeId && !inPopup;
      if (grouping && items.length > 1 && items.some((i) => i.text === undefined)) {
        return [{ role: "generic", name: "", node: axNode.backendDOMNodeId, props: {}, children: items }];
      }
      return items.map((item) => (item.text !== undefined ? { ...item, gap: true } : item));
    }
    const props = propertiesOf(axNode);
    const item = {
      role,
      name: normalize(axNode.name?.value ?? ""),
      node: context.inPopup ? undefined : axNode.backendDOMNodeId,
      props,
      children: VALUE_ROLES.has(role) && role !== "combobox" ? [] : this.childrenOf(axNode, { ...context, inPopup }),
    };
    const value = axNode.value?.value;
    if (VALUE_ROLES.has(role) && !item.children.length && value !== undefined && value !== "") {
      item.children = [{ text: String(value) }];
    }
    if (role === "link" && typeof props.url === "string") item.url = this.shortUrl(props.url);
    const elements = item.children.filter((child) => child.text === undefined);
    if (item.name && item.name === contentText(item.children)) {
      // Say it once: as the name when only text is inside, else through the elements inside.
      if (elements.length) item.name = "";
      else item.children = [];
    }
    if (role === "generic" && !item.name && elements.length === 1 && item.children.length === 1 && !props.focusable) {
      return item.children;
    }
    if (role === "iframe") item.children = [];
    return [item];
  }

  /** A link into the page's own site reads as its path, as its href most likely did. */
  shortUrl(url) {
    return this.origin && url.startsWith(this.origin + "/") ? url.slice(this.origin.length) : url;
  }
}

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

function keyOf(item, ref) {
  const { props } = item;
  let key = item.role;
  if (item.name && item.name.length <= MAX_NAME) key += ` ${JSON.stringify(item.name)}`;
  if (props.checked === "true" || props.checked === true) key += " [checked]";
  if (props.checked === "mixed") key += " [checked=mixed]";
  if (props.disabled) key += " [disabled]";
  if (props.expanded) key += " [expanded]";
  if (props.focused) key += " [active]";
  if (props.invalid === "true") key += " [invalid]";
  // Chromium gives every list item a level too; Playwright shows it where ARIA means it.
  if (props.level && LEVELED.has(item.role)) key += ` [level=${props.level}]`;
  if (props.pressed === "true" || props.pressed === true) key += " [pressed]";
  if (props.pressed === "mixed") key += " [pressed=mixed]";
  if (props.selected) key += " [selected]";
  if (ref) key += ` [ref=${ref}]`;
  return key;
}

/** YAML lines for `items` at `depth`; below `maxDepth` only an element's own text still shows. */
function renderItems(items, depth, maxDepth, namer, lines) {
  const indent = "  ".repeat(depth);
  for (const item of items) {
    if (item.text !== undefined) {
      lines.push(`${indent}- text: ${yamlValue(item.text)}`);
      continue;
    }
    const key = `${indent}- ${yamlKey(keyOf(item, item.node ? namer.name(item.node) : null))}`;
    const onlyText = item.children.length === 1 && item.children[0].text !== undefined;
    const children = onlyText || depth !== maxDepth ? item.children : [];
    if (item.url === undefined && !children.length) lines.push(key);
    else if (item.url === undefined && onlyText) lines.push(`${key}: ${yamlValue(item.children[0].text)}`);
    else {
      lines.push(`${key}:`);
      if (item.url !== undefined) lines.push(`${indent}  - /url: ${yamlValue(item.url)}`);
      renderItems(children, depth + 1, maxDepth, namer, lines);
    }
  }
}

/**
 * The tab's page as a snapshot: {url, title, yaml}. With `rootNode` (a backend node id), only that
 * element and what is inside it; with `depth`, elements nested no deeper than that (1: the top
 * ones and their children). The refs of such a partial snapshot add to those of the last full one.
 */
export async function captureSnapshot(tabId, { rootNode, depth } = {}) {
  const document = documentOf(tabId);
  const { nodes } = await send(tabId, "Accessibility.getFullAXTree", {});
  if (documentOf(tabId) !== document) {
    throw new ActionError(Code.NAVIGATED, "the page navigated away while its snapshot was taken");
  }
  const page = nodes.find((node) => node.role?.value === "RootWebArea") ?? nodes[0];
  const url = propertiesOf(page ?? {}).url ?? "";
  let origin = "";
  try {
    origin = new URL(url).origin;
  } catch {
    // about:blank and the like: links stay as they are.
  }
  const builder = new TreeBuilder(nodes, origin === "null" ? "" : origin);
  let items = [];
  if (rootNode !== undefined) {
    const root = nodes.find((node) => node.backendDOMNodeId === rootNode);
    if (!root) throw new ActionError(Code.ACTION_FAILED, "the element is not rendered, so it has no snapshot");
    const built = builder.build(root, {});
    // The element asked for shows even where it would have vanished into its parent.
    const shown = built.length === 1 && built[0].node === rootNode;
    const role = root.ignored || TRANSPARENT.has(roleOf(root)) ? "generic" : roleOf(root);
    items = shown ? built : [{ role, name: "", node: rootNode, props: {}, children: built }];
  } else if (page) {
    items = builder.build(page, {});
  }
  const namer = refNamer(tabId, document);
  const lines = [];
  renderItems(items, 0, depth, namer, lines);
  namer.publish(rootNode !== undefined || depth !== undefined);
  return { url, title: page?.name?.value ?? "", yaml: lines.join("\n") };
}
