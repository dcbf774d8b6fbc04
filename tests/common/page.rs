//! Checks on the HTML pages (`diagnose --html`, `check --output-format html`).

use scraper::{Html, Selector};

pub fn sel(s: &str) -> Selector {
    Selector::parse(s).expect("selector")
}

/// No resource leaves the page: every `src`/`href` is a `data:` URL or a
/// fragment, nothing is scripted or linked, and a CSP forbids any load.
pub fn assert_offline(html: &str, doc: &Html) {
    for el in doc.select(&sel("[src], [href]")) {
        for attr in ["src", "href"] {
            if let Some(v) = el.value().attr(attr) {
                assert!(
                    v.starts_with("data:") || v.starts_with('#'),
                    "<{}> {attr}={v:.60} loads something outside the page",
                    el.value().name()
                );
            }
        }
    }
    assert_eq!(doc.select(&sel("script, link, iframe, object, embed, base")).count(), 0);
    for bad in ["src=\"http", "href=\"http", "url(http", "@import"] {
        assert!(!html.contains(bad), "the page contains {bad}");
    }
    let csp = doc.select(&sel("meta[http-equiv=Content-Security-Policy]")).next().expect("a CSP");
    assert!(csp.value().attr("content").expect("content").starts_with("default-src 'none'"));
}
