//! Which attributes hold links and how their values become URLs; classification of links:
//! destination type, locality, rel flags.

use std::collections::HashMap;

use html5ever::{LocalName, local_name};
use url::Url;
use xxhash_rust::xxh3::Xxh3Builder;

/// What a link points to, with the summary database's codes ([`DestinationType::code`]).
///
/// Decided in this order:
/// 1. Communication: schemes `mailto`, `tel`, `sms`, `mms`, `xmpp`, `sip`, `sips`, `callto`,
///    `facetime`, `skype`, `im`, `irc`, `ircs`, `fax`, `geo`, `whatsapp`, `matrix`.
/// 2. The element: `img` and `video[poster]` are images, `audio` audio, `video` video,
///    `iframe`/`frame` documents, `script` scripts; `source` uses its `type` attribute, then its
///    parent (`video`, `audio`, `picture`), then the URL's extension.
/// 3. For `link`, the rel tokens: `stylesheet` → stylesheet; `icon`, `apple-touch-icon`,
///    `apple-touch-icon-precomposed`, `mask-icon` → image; `modulepreload` → script;
///    `preload`/`prefetch` use the `as` attribute (script, style, image, audio, video,
///    document, font → file); `alternate` with a feed `type` → feed; `manifest` → file.
/// 4. The `type` attribute (a MIME type, parameters ignored): RSS/Atom/JSON Feed/RDF → feed,
///    `text/css` → stylesheet, JavaScript/ECMAScript → script, `image/*`, `audio/*`,
///    `video/*`, HTML/XHTML → document, anything else → file.
/// 5. The extension of the URL's last path segment (see [`by_extension`]); no extension
///    means document — except for `embed` and `object`, which default to media, and `link`
///    elements, which default to document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DestinationType {
    File,
    Document,
    Feed,
    Stylesheet,
    Script,
    Media,
    Image,
    Audio,
    Video,
    Communication,
}

impl DestinationType {
    /// The code stored in the summary database.
    pub fn code(self) -> i64 {
        match self {
            DestinationType::File => 0,
            DestinationType::Document => 1,
            DestinationType::Feed => 2,
            DestinationType::Stylesheet => 3,
            DestinationType::Script => 4,
            DestinationType::Media => 100,
            DestinationType::Image => 101,
            DestinationType::Audio => 102,
            DestinationType::Video => 103,
            DestinationType::Communication => 1000,
        }
    }
}

/// Where a link points relative to the page that contains it, with the summary database's
/// codes ([`LinkLocality::code`]).
///
/// "Same site" means the same host name once a leading `www.` is removed from both, whatever
/// the scheme and port (`http://www.example.org/` and `https://example.org:8443/x` are the same
/// site; `blog.example.org` is another site). URLs without a host (`mailto:`) are other sites.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkLocality {
    /// The same document: the URLs differ at most in the fragment.
    SelfDocument,
    /// Another document on the same site.
    SameSite,
    /// Another site.
    OtherSite,
}

impl LinkLocality {
    pub fn code(self) -> i64 {
        match self {
            LinkLocality::SelfDocument => 0,
            LinkLocality::SameSite => 1,
            LinkLocality::OtherSite => 2,
        }
    }
}

/// The tokens of a `rel` attribute: the three the summary database has columns for, and the
/// others, lower-cased, in document order, without duplicates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rel {
    pub nofollow: bool,
    pub me: bool,
    pub tag: bool,
    pub other: Vec<String>,
}

impl Rel {
    pub fn parse(value: &str) -> Rel {
        let mut rel = Rel::default();
        for token in value.split_ascii_whitespace() {
            let token = token.to_ascii_lowercase();
            match token.as_str() {
                "nofollow" => rel.nofollow = true,
                "me" => rel.me = true,
                "tag" => rel.tag = true,
                _ if !rel.other.contains(&token) => rel.other.push(token),
                _ => {}
            }
        }
        rel
    }

    pub fn has(&self, token: &str) -> bool {
        match token {
            "nofollow" => self.nofollow,
            "me" => self.me,
            "tag" => self.tag,
            _ => self.other.iter().any(|t| t == token),
        }
    }
}

const COMMUNICATION_SCHEMES: [&str; 17] = [
    "mailto", "tel", "sms", "mms", "xmpp", "sip", "sips", "callto", "facetime", "skype", "im",
    "irc", "ircs", "fax", "geo", "whatsapp", "matrix",
];

/// Schemes that do not name a fetchable resource; links with them are not reported.
pub fn is_ignored_scheme(scheme: &str) -> bool {
    matches!(
        scheme,
        "javascript" | "data" | "about" | "blob" | "vbscript"
    )
}

/// The attributes of an HTML element that hold links, as (tag, attribute), in the order
/// they are reported (`video` has two).
pub(super) fn link_attributes(name: &LocalName) -> &'static [(&'static str, &'static str)] {
    match *name {
        local_name!("a") => &[("a", "href")],
        local_name!("area") => &[("area", "href")],
        local_name!("link") => &[("link", "href")],
        local_name!("img") => &[("img", "src")],
        local_name!("iframe") => &[("iframe", "src")],
        local_name!("frame") => &[("frame", "src")],
        local_name!("audio") => &[("audio", "src")],
        local_name!("video") => &[("video", "src"), ("video", "poster")],
        local_name!("source") => &[("source", "src")],
        local_name!("embed") => &[("embed", "src")],
        local_name!("object") => &[("object", "data")],
        local_name!("script") => &[("script", "src")],
        _ => &[],
    }
}

/// The interned name of an attribute of [`link_attributes`].
pub(super) fn attribute_name(attribute: &str) -> LocalName {
    match attribute {
        "href" => local_name!("href"),
        "src" => local_name!("src"),
        "poster" => local_name!("poster"),
        _ => local_name!("data"),
    }
}

/// A link attribute's value as it is resolved: without surrounding ASCII white space; None
/// when nothing is left (an empty value is no link).
pub(super) fn link_value(value: &str) -> Option<&str> {
    Some(value.trim_matches(|c: char| c.is_ascii_whitespace())).filter(|v| !v.is_empty())
}

/// Resolves the link values of one document against its base URL, each target once.
///
/// A value's URL without its fragment depends only on what precedes its first `#` and on
/// whether it has one (a URL parser trims trailing control characters from the whole
/// value, which a fragment then shields), and a document's links repeat few targets: a
/// table of contents points into a handful of pages, a fragment each — 1.74 M links but
/// 205 k targets in a crawl of documentation. Parsing URLs was most of what collecting
/// links cost.
pub(super) struct Targets<'d> {
    base_url: &'d Url,
    /// (has a fragment, the value before it) → its URL without fragment; None when it
    /// does not parse or its scheme names nothing fetchable.
    resolved: HashMap<(bool, &'d str), Option<Url>, Xxh3Builder>,
}

impl<'d> Targets<'d> {
    pub(super) fn new(base_url: &'d Url) -> Self {
        Targets {
            base_url,
            resolved: HashMap::default(),
        }
    }

    /// The URL a link value (see [`link_value`]) points to, without its fragment, and
    /// whether this is the first value of the document with its target.
    pub(super) fn resolve(&mut self, value: &'d str) -> (Option<&Url>, bool) {
        let target = match value.split_once('#') {
            Some((before, _)) => (true, before),
            None => (false, value),
        };
        let mut first = false;
        let url = self.resolved.entry(target).or_insert_with(|| {
            first = true;
            let mut url = self
                .base_url
                .join(value)
                .ok()
                .filter(|url| !is_ignored_scheme(url.scheme()))?;
            url.set_fragment(None);
            Some(url)
        });
        (url.as_ref(), first)
    }

    /// The fragment of a link value, as resolving the whole value gives it (percent-encoded,
    /// without `#`); `url` is what [`resolve`](Self::resolve) gave for it.
    pub(super) fn fragment(url: &Url, value: &str) -> Option<String> {
        let at = value.find('#')?;
        let fragment = &value[at + 1..];
        // Printable ASCII outside the fragment percent-encode set is kept as it is (and
        // nothing is left to trim at the end): most fragments are identifiers.
        if fragment
            .bytes()
            .all(|b| matches!(b, b'!'..=b'~') && !matches!(b, b'"' | b'<' | b'>' | b'`'))
        {
            return Some(fragment.to_owned());
        }
        // Otherwise the URL parser decides; only the fragment is parsed, the rest of `url`
        // is copied.
        url.join(&value[at..])
            .ok()
            .and_then(|u| u.fragment().map(str::to_owned))
    }
}

/// The attributes of a link element that classification looks at.
pub struct LinkSource<'a> {
    /// Lower-case element name.
    pub tag: &'a str,
    /// The attribute the URL came from (`href`, `src`, `poster`, `data`).
    pub attribute: &'a str,
    /// The parent element's name (for `source`).
    pub parent_tag: Option<&'a str>,
    pub rel: &'a Rel,
    pub type_attr: Option<&'a str>,
    pub as_attr: Option<&'a str>,
}

pub fn destination_type(source: &LinkSource, url: &Url) -> DestinationType {
    use DestinationType::*;
    if COMMUNICATION_SCHEMES.contains(&url.scheme()) {
        return Communication;
    }
    let by_type = source.type_attr.and_then(by_mime_type);
    match source.tag {
        "img" => return Image,
        "video" if source.attribute == "poster" => return Image,
        "video" => return Video,
        "audio" => return Audio,
        "iframe" | "frame" => return Document,
        "script" => return Script,
        "source" => {
            return by_type
                .or(match source.parent_tag {
                    Some("video") => Some(Video),
                    Some("audio") => Some(Audio),
                    Some("picture") => Some(Image),
                    _ => None,
                })
                .or_else(|| by_extension(url))
                .unwrap_or(Media);
        }
        "embed" | "object" => return by_type.or_else(|| by_extension(url)).unwrap_or(Media),
        "link" => {
            let rel = source.rel;
            if rel.has("stylesheet") {
                return Stylesheet;
            }
            if [
                "icon",
                "apple-touch-icon",
                "apple-touch-icon-precomposed",
                "mask-icon",
            ]
            .iter()
            .any(|t| rel.has(t))
            {
                return Image;
            }
            if rel.has("modulepreload") {
                return Script;
            }
            if rel.has("preload") || rel.has("prefetch") {
                let by_as = source
                    .as_attr
                    .map(|a| a.trim().to_ascii_lowercase())
                    .and_then(|a| match a.as_str() {
                        "script" | "worker" | "sharedworker" | "serviceworker" => Some(Script),
                        "style" => Some(Stylesheet),
                        "image" => Some(Image),
                        "audio" => Some(Audio),
                        "video" => Some(Video),
                        "document" => Some(Document),
                        "font" | "fetch" | "track" => Some(File),
                        _ => None,
                    });
                if let Some(t) = by_as {
                    return t;
                }
            }
            if rel.has("manifest") {
                return File;
            }
            return by_type.or_else(|| by_extension(url)).unwrap_or(Document);
        }
        _ => {}
    }
    by_type.or_else(|| by_extension(url)).unwrap_or(Document)
}

/// The destination type a MIME type names; None for an empty value.
pub fn by_mime_type(mime: &str) -> Option<DestinationType> {
    use DestinationType::*;
    let essence = mime
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if essence.is_empty() {
        return None;
    }
    Some(match essence.as_str() {
        "application/rss+xml"
        | "application/atom+xml"
        | "application/feed+json"
        | "application/rdf+xml" => Feed,
        "text/css" => Stylesheet,
        "text/javascript"
        | "application/javascript"
        | "application/x-javascript"
        | "text/ecmascript"
        | "application/ecmascript"
        | "module" => Script,
        "text/html" | "application/xhtml+xml" => Document,
        _ if essence.starts_with("image/") => Image,
        _ if essence.starts_with("audio/") => Audio,
        _ if essence.starts_with("video/") => Video,
        _ => File,
    })
}

/// The destination type the extension of the URL's last path segment suggests; None when
/// the segment has no extension (or the path ends in `/`).
///
/// Documents: html, htm, xhtml, shtml, php, asp, aspx, jsp, jspx, cfm, cgi, pl. Feeds: rss,
/// atom, and `.xml` files whose name contains "rss", "atom" or "feed". Stylesheets: css.
/// Scripts: js, mjs. Images: png, jpg, jpeg, jfif, gif, webp, svg, avif, bmp, ico, tif, tiff,
/// apng. Audio: mp3, ogg, oga, opus, wav, flac, m4a, aac, weba, mid, midi. Video: mp4, webm,
/// ogv, mov, avi, mkv, m4v, mpg, mpeg, wmv, flv, 3gp. Media: swf. Anything else (pdf, zip,
/// txt, …): file.
pub fn by_extension(url: &Url) -> Option<DestinationType> {
    use DestinationType::*;
    let path = url.path();
    let segment = memchr::memrchr(b'/', path.as_bytes()).map_or(path, |i| &path[i + 1..]);
    let dot = memchr::memrchr(b'.', segment.as_bytes())?;
    let (stem, extension) = (&segment[..dot], &segment[dot + 1..]);
    // Every known extension is short: lower-case it on the stack.
    let mut lower = [0u8; 8];
    if extension.is_empty() || extension.len() > lower.len() {
        return (!extension.is_empty()).then_some(File);
    }
    lower[..extension.len()].copy_from_slice(extension.as_bytes());
    lower.make_ascii_lowercase();
    let extension = std::str::from_utf8(&lower[..extension.len()]).unwrap_or("");
    Some(match extension {
        "html" | "htm" | "xhtml" | "shtml" | "php" | "asp" | "aspx" | "jsp" | "jspx" | "cfm"
        | "cgi" | "pl" => Document,
        "rss" | "atom" => Feed,
        "xml" => {
            let stem = stem.to_ascii_lowercase();
            if ["rss", "atom", "feed"].iter().any(|w| stem.contains(w)) {
                Feed
            } else {
                File
            }
        }
        "css" => Stylesheet,
        "js" | "mjs" => Script,
        "png" | "jpg" | "jpeg" | "jfif" | "gif" | "webp" | "svg" | "avif" | "bmp" | "ico"
        | "tif" | "tiff" | "apng" => Image,
        "mp3" | "ogg" | "oga" | "opus" | "wav" | "flac" | "m4a" | "aac" | "weba" | "mid"
        | "midi" => Audio,
        "mp4" | "webm" | "ogv" | "mov" | "avi" | "mkv" | "m4v" | "mpg" | "mpeg" | "wmv" | "flv"
        | "3gp" => Video,
        "swf" => Media,
        _ => File,
    })
}

/// Where `target` (without fragment) lies relative to `document` (without fragment).
pub fn locality(target: &Url, document: &Url) -> LinkLocality {
    if target.as_str() == document.as_str() {
        return LinkLocality::SelfDocument;
    }
    match (target.host_str(), document.host_str()) {
        (Some(a), Some(b)) if strip_www(a).eq_ignore_ascii_case(strip_www(b)) => {
            LinkLocality::SameSite
        }
        _ => LinkLocality::OtherSite,
    }
}

fn strip_www(host: &str) -> &str {
    match host.get(..4) {
        Some(prefix) if prefix.eq_ignore_ascii_case("www.") && host.len() > 4 => &host[4..],
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_resolve_as_the_whole_value_does() {
        let base = u("http://example.org/dir/page.html?q=1");
        let values = [
            "a.html",
            "a.html#x",
            "a.html#y",
            "a.html#",
            "#",
            "#top",
            "?q",
            "?q#f",
            "//other.org/p#f",
            "a.html\u{1}",
            "a.html\u{1}#x",
            "a.html#x\u{1}",
            "a.html#x\u{b}",
            "a.html\u{b}",
            "a.html#x y",
            "a.html#x\ty",
            "a.\thtml#f",
            "a.html#é\"<>`",
            "a.html#%zz",
            "a.html##x",
            "b c.html#z",
            "b%20c.html",
            "../up.html#u",
            "mailto:a@example.org#m",
            "mailto:a@example.org#a b",
            "mailto:a@example.org",
            "javascript:x#y",
            "data:text/plain,a#b",
            "http://[::1#x",
            "http://[::1",
            "HTTP://EXAMPLE.ORG#F",
            "file:///etc/passwd#p",
            "urn:isbn:123#x",
            "a.html#\u{0}x",
            "a.html#{}|^\\[]'%#!$&()*+,;=:@/?~-._",
            "a.html#\u{7f}",
            "a.html#a\u{a0}b",
        ];
        let mut targets = Targets::new(&base);
        for round in 0..2 {
            for value in values {
                let whole = base
                    .join(value)
                    .ok()
                    .filter(|u| !is_ignored_scheme(u.scheme()));
                let (url, first) = targets.resolve(value);
                let url = url.cloned();
                assert_eq!(
                    url.as_ref().map(Url::as_str),
                    whole
                        .as_ref()
                        .map(|w| {
                            let mut w = w.clone();
                            w.set_fragment(None);
                            w.to_string()
                        })
                        .as_deref(),
                    "{value:?}"
                );
                if round == 1 {
                    assert!(!first, "{value:?} resolved once");
                }
                if let Some(url) = url {
                    assert_eq!(
                        Targets::fragment(&url, value),
                        whole.as_ref().and_then(|w| w.fragment().map(str::to_owned)),
                        "fragment of {value:?}"
                    );
                }
            }
        }
    }

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn locality_rules() {
        let doc = u("https://www.example.org/a/b.html");
        assert_eq!(
            locality(&u("https://www.example.org/a/b.html"), &doc),
            LinkLocality::SelfDocument
        );
        assert_eq!(
            locality(&u("http://example.org/"), &doc),
            LinkLocality::SameSite
        );
        assert_eq!(
            locality(&u("https://EXAMPLE.org:8443/x"), &doc),
            LinkLocality::SameSite
        );
        assert_eq!(
            locality(&u("https://blog.example.org/"), &doc),
            LinkLocality::OtherSite
        );
        assert_eq!(
            locality(&u("mailto:a@example.org"), &doc),
            LinkLocality::OtherSite
        );
        assert_eq!(
            locality(&u("https://www./"), &u("https://www./x")),
            LinkLocality::SameSite
        );
    }

    #[test]
    fn rel_tokens() {
        let rel = Rel::parse(" NoFollow  external me\ttag external ugc");
        assert_eq!(
            rel,
            Rel {
                nofollow: true,
                me: true,
                tag: true,
                other: vec!["external".into(), "ugc".into()],
            }
        );
    }

    #[test]
    fn extensions() {
        let t = |s: &str| by_extension(&u(s));
        assert_eq!(t("http://x/a/"), None);
        assert_eq!(t("http://x/a"), None);
        assert_eq!(t("http://x/a.PDF"), Some(DestinationType::File));
        assert_eq!(
            t("http://x/v1.2/index.html?q=a.png"),
            Some(DestinationType::Document)
        );
        assert_eq!(t("http://x/feed.xml"), Some(DestinationType::Feed));
        assert_eq!(t("http://x/sitemap.xml"), Some(DestinationType::File));
        assert_eq!(t("http://x/.hidden"), Some(DestinationType::File));
    }
}
