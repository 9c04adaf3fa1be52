//! The HTML fast path against html5ever: wherever the fast path accepts a document, its tree
//! must be html5ever's tree (same nodes, names, kept attributes, hidden flags and texts).
//! Documents: every HTML payload of the WARCs in the shared corpus (read with Python's
//! warcio), the HTML fixtures, snippets that exercise each tree-construction rule the fast
//! path implements, and generated tag soup.

mod common;

use std::path::Path;

use sediment::internals::html::dom::{compare_trees, parse_fast, parse_with_html5ever};

/// Compares the two paths on `html`; returns whether the fast path accepted it.
fn check(label: &str, html: &str) -> bool {
    let Ok(fast) = parse_fast(html) else {
        return false;
    };
    let full = parse_with_html5ever(html);
    if let Err(difference) = compare_trees(&fast, &full) {
        let shown: String = html.chars().take(400).collect();
        panic!("{label}: the fast path's tree differs from html5ever's: {difference}\n{shown:?}");
    }
    true
}

#[test]
fn corpus_pages_give_html5evers_tree() {
    let Some(pages) = common::corpus_html_pages() else {
        return;
    };
    assert!(
        pages.len() >= 50,
        "only {} HTML pages in the corpus",
        pages.len()
    );
    let mut given_up = std::collections::BTreeMap::new();
    let mut accepted = 0;
    for page in &pages {
        let html = String::from_utf8_lossy(&page.body);
        if check(&page.label, &html) {
            accepted += 1;
        } else if let Err(reason) = parse_fast(&html) {
            *given_up.entry(reason.0).or_insert(0) += 1;
        }
    }
    eprintln!(
        "fast path: {accepted} of {} corpus pages; given up: {given_up:?}",
        pages.len()
    );
    // Most real pages keep to what the fast path implements; if this drops, the fast path
    // has started to give up on something common.
    assert!(accepted * 2 > pages.len(), "{accepted} of {}", pages.len());
}

#[test]
fn fixture_pages_give_html5evers_tree() {
    let mut accepted = 0;
    let mut total = 0;
    let mut pending = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("fixtures") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "html" || e == "htm") {
                let bytes = std::fs::read(&path).expect("read fixture");
                total += 1;
                accepted += usize::from(check(
                    &path.display().to_string(),
                    &String::from_utf8_lossy(&bytes),
                ));
            }
        }
    }
    assert!(total >= 20, "{total} fixture pages");
    assert!(accepted * 2 > total, "{accepted} of {total}");
}

/// One or more snippets per rule of the fast path. Each is checked, and each must be
/// accepted (so the rule is really exercised) unless it is listed as given up.
const RULES: &[&str] = &[
    "",
    "plain text only",
    "  \n <!-- c --> <!DOCTYPE html>\n<html lang=en><head><title>T</title></head><body>x</body></html>\n",
    "<!DOCTYPE html><p>one<p>two<div>three</div>four",
    "<!doctype HTML><P CLASS=x>upper</P>",
    "<html><!-- c --><head> \n <meta charset=utf-8>\n<link rel=stylesheet href=a.css>  x</head>",
    "<head></head> \n<script>var a = 1;</script><body>b",
    "<title>a &amp; b &lt;c&gt;</title><body>",
    "<ul><li>a<li>b<ul><li>c</ul><li>d</ul><dl><dt>t<dd>d<dt>u</dl>",
    "<ol><li><p>para<li>next</ol>",
    "<h1>one<h2>two</h1>three</h2><h3>x</h4>",
    "<p>a<h1>h</h1><p>b<hr>c<pre>\nfirst line\n</pre><listing>\r\nl</listing>",
    "<textarea>\nkept</textarea><textarea>\n\ntwo</textarea>",
    "<pre>&lt;tag&gt;</pre><pre>&lt\nx</pre>",
    "<b>bold<i>both</b>italic</i>after",
    "<p><b>bold<p>next",
    "<div><b>x</div>y",
    "<a href=/1>one</a><a href='/2'>two</a><a href=\"/3\">three",
    "<b>1<b>2<b>3</b></b></b>",
    "<em>a</em><strong>b</strong><code>c</code><small>d</small><u>e</u><s>f</s><tt>g</tt>",
    "<p>a</p></p><p>b</span>c</div>d",
    "</p>stray",
    "<br></br><img src=a.png alt=x><input type=text><wbr><embed src=e><area href=m>",
    "<form action=/x><input name=q><button>go</button></form><form><p>second",
    "<div><form><p>a</div></form>b",
    "<button>a<button>b</button>",
    "<table><tr><td>1<td>2<tr><th>3</table>",
    "<table>\n <caption>c</caption>\n <colgroup><col><col></colgroup>\n <thead><tr><th>h</thead>\n <tbody><tr><td>d</td></tr></tbody>\n <tfoot><tr><td>f</tfoot>\n</table>after",
    "<table><col><tr><td>x</td></tr></table>",
    "<table><tbody><tr><td><table><tr><td>nested</table></td></tr></tbody></table>",
    "<table><tr><td><b>bold</td><td>plain</table>",
    "<table><td>cell</td></table><p>a<table><tr><td>q</table>",
    "<!DOCTYPE html><p>para<table><tr><td>no quirks</table>",
    "<p>para<table><tr><td>quirks</table>",
    "<table><tr><td>a</tr></tbody></table>",
    "<table><thead><tr><th>h<tbody><tr><td>b</table>",
    "<table><caption><b>cap</caption><tr><td>x</table>",
    "<table><form><input type=hidden name=h><tr><td>x</table>",
    "<table><tr><td>x<script>s</script><style>p{}</style></td></tr></table>",
    "<table><!-- comment --><tr><!-- c --><td>x</table>",
    "<table></table></table></td>",
    "<table><tr><td>x</td></tr><table><tr><td>y</table>",
    "a &amp b &notit; c &notin; d &lt e &#x41;&#65;&#x;&#; &#1234567; &#x80; &#0; &#xD800; &#xFFFE;",
    "<a href='?a=1&b=2&copy=3&amp;x=&lang=en&not=1'>q</a>",
    "<a title='&notit; &amp &ampx &gt=1'>t</a>",
    "line\r\nbreaks\rand\r\r\n<p title='a\r\nb'>p</p>",
    "<!--->x<!---->y<!-- a -- b --!>z<!-- --->w<!---x-->v",
    "<?pi stuff?>a<!bogus>b</ >c</>d<!DOCTYPE html>e",
    "<script><!-- document.write('<script>x</script>'); --></script>after",
    "<script><!--</script>ends",
    "<script>a</script >b<script>c</SCRIPT>d<script>e</scripts></script>f",
    "<style>a < b {}</style><xmp><b>x</b></xmp><iframe src=i><p></iframe><noscript><p>n</noscript>",
    "<noembed>x</noembed><noframes>y</noframes>",
    "<p hidden>h</p><div aria-hidden=' true '>a</div><span style='display: none'>s</span>",
    "<div class=a id=b data-x=1 role=main lang=de title=t>attrs</div>",
    "<a href=1 href=2 HREF=3 Title=x title=y>dup</a>",
    "<p =a b= c=d e>odd</p><p a='x'b='y'>no space</p>",
    "<div/>self<br/><img src=x />",
    "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 1 1'><g><path d='M0'/></g></svg>after",
    "<svg><a xlink:href=#x xml:lang=en href=y>svg link</a><linearGradient/><clippath></clippath></svg>",
    "<p>a<svg><title>t</title><desc>d <b>x</b></desc><foreignObject><div>f</div></foreignObject></svg>b",
    "<svg><rect></svg></p>x",
    "<svg><g></svg><span>out</span>",
    "<svg><style>s{}</style><script>1<2</script></svg>",
    "<svg/><p>after",
    "<main><article><section><nav><aside><header><footer>x</footer></header></aside></nav></section></article></main>",
    "<details><summary>s</summary>d</details><figure><figcaption>c</figcaption></figure>",
    "<address>a<p>b</address>c",
    "<center><dir><menu><li>m</menu></dir></center>",
    "<span><div>block in inline</div></span>",
    "<body><p>a</body><!-- after body --> tail",
    "<body>x</body></html> <!-- c -->tail",
    "<html><body>x</html><p>after html",
    "<head><base href=/b/><meta name=description content=d><meta name=robots content=noindex></head>",
    "<head><noscript><link rel=x></noscript></head>",
    "<frame src=x><head><caption><col><tr><td>ignored",
    "<label>l</label><q>q</q><abbr>a</abbr><custom-element>c</custom-element>",
    "\u{feff}<p>leading bom</p>",
    "<table>text in table</table>",
    "<table><div>x</div></table>",
    "<table><tr>x<td>y</table>",
    "<table><b>bold</b><tr><td>c</table>",
    "<p>before<table> x <tr><td>c</td></tr></table>",
    "<table><input type=text><tr><td>x</table>",
    "<table><tr><td>a</td></tr><span>s</span></table>",
    "<table><tr><td>a</td></tr>\n e<!DOCTYPE html>\n<title>t</title></table>",
    "<table>x<!DOCTYPE html> <tr><td>y</table>",
    "<select><option>a<option>b<optgroup><option>c</select>after",
    "<select><input name=i></select><p><select><hr></select>",
    "<option>a<option>b<optgroup>g<option>o</optgroup>",
    "<select><select>x",
    "<form><select name=s><option value=1 selected>one</option></select></form>",
    "<a href=1>a<a href=2>b</a>",
    "<p><a href=1>a<div><a href=2>b</a></div>",
    "<html><html lang=x hidden><p>x",
    "<html xlink:title=t xlink:href=h href=x><p>y",
    "<p><html xlink:href=h lang=l>",
    "<body><body class=x lang=y style=display:none>b",
    "<body lang=a><body lang=b title=t>",
    "<svg><p>breaks out</svg>",
    "<svg><g><span>x</span></g></svg><svg><desc><span>in desc</span></desc></svg>",
    "<svg><g></p>after",
    "<title>no end",
    "<textarea>a &amp; b</texta",
    "<style>p { } </sty",
    "<script>unterminated",
    "<script>if (a<b) x</scr",
    "<script><!-- x",
    "<script><!-- <script> </script> still",
    "<p><xmp>raw",
];

/// Snippets the fast path gives up on (checked against html5ever's tree only if accepted).
const GIVEN_UP: &[&str] = &[
    "<b>1<p>2</b>3",
    "<object data=x></object>",
    "<template><p>t</template>",
    "<math><mi>x</mi></math>",
    "<frameset><frame></frameset>",
    "<plaintext>x",
    "<nobr>a<nobr>b",
    "<p unterminated",
    "<pre>&#10x</pre>",
    "<textarea>&#xa</textarea>",
    "<p>\u{feff}bom in text</p>",
    "<meta charset=utf-8>\u{feff}\t<p>x",
    "<table> <!DOCTYPE html>x</table>",
    "<svg><font color=red>x</font></svg>",
    "<svg><![CDATA[x]]></svg>",
    "<b><b><b><b>four",
    "text\0nul",
    "<!DOCTYPE html PUBLIC \"-//W3C//DTD HTML 4.01//EN\"><p>x<table><tr><td>y</table>",
    "<!-- unterminated",
];

#[test]
fn each_rule_gives_html5evers_tree() {
    for (i, html) in RULES.iter().enumerate() {
        assert!(
            check(&format!("rule {i}"), html),
            "rule {i}: the fast path gave up on {html:?}: {:?}",
            parse_fast(html).err()
        );
    }
    for (i, html) in GIVEN_UP.iter().enumerate() {
        assert!(
            parse_fast(html).is_err(),
            "given-up snippet {i} accepted: {html:?}"
        );
    }
}

#[test]
fn generated_tag_soup_gives_html5evers_tree() {
    const PIECES: &[&str] = &[
        "<p>",
        "</p>",
        "<div>",
        "</div>",
        "<b>",
        "</b>",
        "<i>",
        "</i>",
        "<a href=x>",
        "</a>",
        "<em>",
        "</em>",
        "<code>",
        "</code>",
        "<span>",
        "</span>",
        "<ul>",
        "</ul>",
        "<ol>",
        "<li>",
        "</li>",
        "<dl>",
        "<dt>",
        "<dd>",
        "</dd>",
        "<h1>",
        "</h1>",
        "<h2>",
        "</h3>",
        "<table>",
        "</table>",
        "<tr>",
        "</tr>",
        "<td>",
        "</td>",
        "<th>",
        "<tbody>",
        "</tbody>",
        "<thead>",
        "<caption>",
        "</caption>",
        "<colgroup>",
        "<col>",
        "<form>",
        "</form>",
        "<input type=hidden>",
        "<input>",
        "<button>",
        "</button>",
        "<pre>",
        "\n",
        "<br>",
        "</br>",
        "<hr>",
        "<img src=i>",
        "<title>",
        "</title>",
        "<head>",
        "</head>",
        "<body>",
        "</body>",
        "</html>",
        "<script>",
        "</script>",
        "<style>",
        "</style>",
        "<textarea>",
        "</textarea>",
        "<svg>",
        "</svg>",
        "<path/>",
        "<g>",
        "</g>",
        "<desc>",
        "</desc>",
        "<section>",
        "</section>",
        "<nav>",
        "<main>",
        "</main>",
        "<blockquote>",
        "text ",
        " ",
        "&amp;",
        "&not",
        "&#65;",
        "<!-- c -->",
        "<!DOCTYPE html>",
        "<meta charset=x>",
        "<link rel=a href=b>",
        "<p hidden>",
        "<span style=display:none>",
        "</x>",
        "<x>",
        "<u>",
        "</u>",
        "<s>",
        "<strong>",
        "</strong>",
        "<noscript>",
        "</noscript>",
    ];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut accepted = 0;
    let mut given_up = std::collections::BTreeMap::new();
    const DOCUMENTS: usize = 20_000;
    for n in 0..DOCUMENTS {
        let pieces = 1 + next() % 40;
        let mut html = String::new();
        for _ in 0..pieces {
            html.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
        }
        if check(&format!("soup {n}"), &html) {
            accepted += 1;
        } else if let Err(reason) = parse_fast(&html) {
            *given_up.entry(reason.0).or_insert(0) += 1;
        }
    }
    eprintln!("fast path: {accepted} of {DOCUMENTS} generated documents; given up: {given_up:?}");
    assert!(accepted > DOCUMENTS / 10, "{accepted}");
}
