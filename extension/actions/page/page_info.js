// browser_page_info's page-side half: what a page says of itself in its <head> (title, language,
// canonical address, meta description and robots, Open Graph and Twitter cards, icons, feeds), as
// short lines with every address made absolute against the document's base. Run by both drivers
// through runIn (actions/page_scripts.js) in the isolated world, where the page's own overrides of
// the DOM's methods do not reach; it refers to nothing outside itself, as executeScript runs it
// from its source.

/** Page-side: the lines of the page's info, each value cut at a few hundred characters. */
export function pageInfoInPage() {
  const LONGEST = 300;
  const MOST = 40;
  const cut = (text) => {
    const flat = String(text ?? "")
      .replace(/\s+/g, " ")
      .trim();
    return flat.length > LONGEST ? `${flat.slice(0, LONGEST)}…` : flat;
  };
  const absolute = (address) => {
    try {
      return new URL(address, document.baseURI).href;
    } catch {
      return address;
    }
  };
  const head = [...document.querySelectorAll("link[rel][href], meta[content]")];
  const rels = (link) => (link.getAttribute("rel") || "").toLowerCase().split(/\s+/);
  const meta = (name) =>
    head.find((tag) => tag.localName === "meta" && (tag.getAttribute("name") || "").toLowerCase() === name);
  const lines = [];
  const add = (label, value) => value && lines.push(`- ${label}: ${cut(value)}`);
  add("Title", document.title);
  add("Language", document.documentElement.getAttribute("lang"));
  add("URL", location.href);
  const canonical = head.find((tag) => tag.localName === "link" && rels(tag).includes("canonical"));
  add("Canonical", canonical && absolute(canonical.getAttribute("href")));
  add("Description", meta("description")?.getAttribute("content"));
  add("Robots", meta("robots")?.getAttribute("content"));
  // Open Graph is `property`, Twitter cards `name`; sites mix them, so both are read for both.
  const cards = head
    .filter((tag) => tag.localName === "meta")
    .map((tag) => [(tag.getAttribute("property") || tag.getAttribute("name") || "").toLowerCase(), tag])
    .filter(([key]) => key.startsWith("og:") || key.startsWith("twitter:"))
    .slice(0, MOST);
  for (const [key, tag] of cards) {
    const value = tag.getAttribute("content");
    add(key, /(:image|:url|:video|:audio)(:secure_url|:url)?$/.test(key) ? absolute(value) : value);
  }
  const icons = head.filter(
    (tag) => tag.localName === "link" && rels(tag).some((rel) => rel === "icon" || rel === "apple-touch-icon"),
  );
  for (const icon of icons.slice(0, 5)) {
    const sizes = icon.getAttribute("sizes");
    add(`Icon${sizes ? ` (${sizes})` : ""}`, absolute(icon.getAttribute("href")));
  }
  if (!icons.length) add("Icon", `none linked (browsers try ${absolute("/favicon.ico")})`);
  const FEEDS = { "application/rss+xml": "RSS", "application/atom+xml": "Atom", "application/feed+json": "JSON Feed" };
  const feeds = head.filter(
    (tag) =>
      tag.localName === "link" &&
      rels(tag).includes("alternate") &&
      FEEDS[(tag.getAttribute("type") || "").toLowerCase()],
  );
  for (const feed of feeds.slice(0, 10)) {
    const title = feed.getAttribute("title");
    add(
      `Feed (${FEEDS[feed.getAttribute("type").toLowerCase()]})`,
      `${absolute(feed.getAttribute("href"))}${title ? ` "${title}"` : ""}`,
    );
  }
  return lines;
}
