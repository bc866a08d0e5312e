// The origin a page or frame is known by, as the approvals and the page tools' frames compare it.

/** A URL's origin, or "" where it has none (an opaque one, or no URL). */
export function originOf(url) {
  try {
    const { origin } = new URL(url);
    return origin === "null" ? "" : origin;
  } catch {
    return "";
  }
}
