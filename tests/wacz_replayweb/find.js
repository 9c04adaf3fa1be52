// Looks for `needle` in the text or title of every document reachable from this one through
// shadow roots and same-origin iframes (ReplayWeb.page nests the archived page in an
// iframe inside its app's iframe, inside a custom element's shadow root).
const needle = arguments[0];
const seen = [];
function walk(root, depth) {
  if (!root || depth > 12) return null;
  for (const el of root.querySelectorAll("*")) {
    if (el.shadowRoot) {
      const found = walk(el.shadowRoot, depth + 1);
      if (found) return found;
    }
    if (el.tagName === "IFRAME") {
      let doc = null;
      try { doc = el.contentDocument; } catch (e) { seen.push("cross-origin " + el.src); }
      if (!doc) continue;
      const text = doc.body ? doc.body.innerText || "" : "";
      seen.push(doc.location.href + " | " + doc.title + " | " + text.slice(0, 200));
      // Only the archived page's frame (a replay URL, `…/TIMESTAMPmp_/URL`): the app's
      // own frame shows the page's title too.
      const archived = doc.location.href.includes("mp_/");
      if (archived && (text.includes(needle) || (doc.title || "").includes(needle))) {
        return {found: true, url: doc.location.href, title: doc.title};
      }
      const found = walk(doc, depth + 1);
      if (found) return found;
    }
  }
  return null;
}
return walk(document, 0) || {found: false, seen: seen};
