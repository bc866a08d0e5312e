// What a web app did, read in the page for both drivers: its web vitals from the page's own
// performance timeline, and an axe-core audit. Both run in the tools' isolated world (the DevTools
// driver's utility world, the WebExtension driver's content-script world), where the page's own
// scripts cannot reach: a page that replaces PerformanceObserver, performance or axe on its
// window changes nothing of what these see. The elements behind an entry are named by the ref the
// snapshot's agent (snapshot.js) gave them in this world, found through its `element(ref)`.
//
// Runs in the page: appTelemetry is sent as source, so it may use nothing from this module's
// scope.

/**
 * Page-side: `task` "vitals" or "audit" (below) in this world, the elements it names by the refs
 * this world's agent gave (`prefix` and `lastRef`: as the snapshot numbers them).
 */
export async function appTelemetry(task, root, target, { prefix, lastRef, maxNodes = 0 }) {
  const agent = globalThis.__browserMcpAgent;
  const refs = new Map();
  for (let number = Math.max(1, lastRef - 20_000); agent && number <= lastRef; number += 1) {
    const found = agent.element(`${prefix}e${number}`);
    if (typeof found === "object") refs.set(found, `${prefix}e${number}`);
  }
  return task === "vitals" ? vitals() : audit();

  /**
   * The page's vitals, as its PerformanceObserver entries give them (buffered): {url, navigation,
   * fcp, lcp, cls, inp}, each null when the page has none yet, or "unsupported" when the browser
   * gives no entries of its kind. Elements come as {description, ref}.
   */
  function vitals() {
    const named = (element) => {
      if (!element || element.nodeType !== 1) return null;
      const id = element.id ? `#${element.id}` : "";
      const classes = id
        ? ""
        : [...element.classList]
            .slice(0, 2)
            .map((name) => `.${name}`)
            .join("");
      const text = (element.textContent ?? "").replace(/\s+/g, " ").trim().slice(0, 40);
      const alt = element.getAttribute("alt") ?? element.getAttribute("aria-label");
      const words = alt ? ` "${alt.slice(0, 40)}"` : text ? ` "${text}"` : "";
      return { description: `<${element.localName}${id}${classes}>${words}`, ref: refs.get(element) ?? null };
    };
    const supported = PerformanceObserver.supportedEntryTypes ?? [];
    const entriesOf = (type, options = {}) => {
      if (!supported.includes(type)) return "unsupported";
      const observer = new PerformanceObserver(() => {});
      observer.observe({ type, buffered: true, ...options });
      const entries = observer.takeRecords();
      observer.disconnect();
      return entries;
    };
    const ms = (value) => Math.round(value);

    const [navigation] = performance.getEntriesByType("navigation");
    const paints = entriesOf("paint");
    const fcp = Array.isArray(paints) ? paints.find((entry) => entry.name === "first-contentful-paint") : paints;

    const lcps = entriesOf("largest-contentful-paint");
    let lcp = lcps === "unsupported" ? lcps : null;
    const last = Array.isArray(lcps) ? lcps.at(-1) : null;
    if (last) {
      lcp = { time: ms(last.startTime), size: last.size, url: last.url || null, element: named(last.element) };
    }

    const shifts = entriesOf("layout-shift");
    let cls = shifts === "unsupported" ? shifts : null;
    if (Array.isArray(shifts)) {
      // Session windows, as the web-vitals library counts them: shifts under a second apart, at most
      // five seconds long; CLS is the largest window's sum.
      let value = 0;
      let window = 0;
      let first = null;
      let previous = null;
      const counted = shifts.filter((entry) => !entry.hadRecentInput);
      for (const entry of counted) {
        if (previous && entry.startTime - previous.startTime < 1000 && entry.startTime - first.startTime < 5000) {
          window += entry.value;
        } else {
          window = entry.value;
          first = entry;
        }
        previous = entry;
        value = Math.max(value, window);
      }
      const largest = counted.reduce((top, entry) => (!top || entry.value > top.value ? entry : top), null);
      cls = {
        value: Math.round(value * 10_000) / 10_000,
        shifts: counted.length,
        largest: largest && {
          value: Math.round(largest.value * 10_000) / 10_000,
          time: ms(largest.startTime),
          sources: (largest.sources ?? []).map((source) => named(source.node)).filter(Boolean),
        },
      };
    }

    const events = entriesOf("event", { durationThreshold: 16 });
    const firstInputs = entriesOf("first-input");
    let inp = events === "unsupported" && firstInputs === "unsupported" ? "unsupported" : null;
    const heard = [...(Array.isArray(events) ? events : []), ...(Array.isArray(firstInputs) ? firstInputs : [])];
    const interactions = new Map();
    for (const entry of heard) {
      const key = entry.interactionId || (entry.entryType === "first-input" ? "first" : 0);
      if (!key) continue;
      if (!interactions.has(key) || interactions.get(key).duration < entry.duration) interactions.set(key, entry);
    }
    if (interactions.size) {
      // INP: the slowest interaction, or of 50 and more, the one at the 98th percentile.
      const slowest = [...interactions.values()].sort((a, b) => b.duration - a.duration);
      const chosen = slowest[Math.min(slowest.length - 1, Math.floor(slowest.length / 50))];
      inp = {
        value: ms(chosen.duration),
        interactions: interactions.size,
        type: chosen.name,
        element: named(chosen.target),
        eventsMissing: events === "unsupported",
      };
    }

    return {
      url: location.href,
      navigation: navigation
        ? {
            ttfb: ms(navigation.responseStart),
            domContentLoaded: navigation.domContentLoadedEventEnd ? ms(navigation.domContentLoadedEventEnd) : null,
            load: navigation.loadEventEnd ? ms(navigation.loadEventEnd) : null,
          }
        : null,
      fcp: fcp === "unsupported" ? fcp : fcp ? ms(fcp.startTime) : null,
      lcp,
      cls,
      inp,
    };
  }

  /**
   * An axe-core audit (axe loaded in this world beforehand) of `root`, or of the element `target`
   * ({ref} or {selector}) names, or of the document when both are null: {violations: [{id, impact,
   * help, helpUrl, count, nodes: [{ref, selector, summary}]}], rules, version}, or {missing} as the
   * drivers' lookups name it ("gone", "unknown", "no match", "bad selector"). Nodes are kept to
   * `maxNodes` a rule.
   */
  async function audit() {
    let context = root ?? document;
    if (!root && target?.selector !== undefined) {
      try {
        context = document.querySelector(target.selector) ?? "no match";
      } catch {
        context = "bad selector";
      }
    } else if (!root && target?.ref !== undefined) {
      context = agent ? agent.element(target.ref) : "unknown";
    }
    if (typeof context === "string") return { missing: context };
    const engine = globalThis.__browserMcpAxe;
    // Frames are left out: each is a page of its own, which its own audit reads.
    const result = await engine.run(context, { iframes: false, elementRef: true, resultTypes: ["violations"] });
    const order = { critical: 0, serious: 1, moderate: 2, minor: 3 };
    const violations = result.violations
      .sort((a, b) => (order[a.impact] ?? 4) - (order[b.impact] ?? 4))
      .map((rule) => ({
        id: rule.id,
        impact: rule.impact ?? "unknown",
        help: rule.help,
        helpUrl: rule.helpUrl,
        count: rule.nodes.length,
        nodes: rule.nodes.slice(0, maxNodes).map((node) => ({
          ref: refs.get(node.element) ?? null,
          selector: (node.target ?? []).flat().join(" >>> ").replace(/\s+/g, " ").slice(0, 200),
          summary: (node.failureSummary ?? "").split("\n").slice(1, 2).join("").trim().slice(0, 200),
        })),
      }));
    return { violations, rules: result.violations.length, version: engine.version };
  }
}
