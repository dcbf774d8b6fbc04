//! The proxy's HTTP side: hyper 1 on a current-thread tokio runtime, HTTP/1.1
//! from the agent, HTTP/1.1 to the provider over rustls (webpki roots, ring).
//!
//! A request is read whole (its body is what gets mended), sent on, and the
//! answer streamed back as it arrives: an SSE stream is never buffered. Only
//! a 4xx answer to a route the proxy mends is read whole first, to tell
//! whether it is a deterministic rejection naming a block: then the block is
//! replaced and the request sent a second time, and whatever answers that is
//! streamed back. There is never a third send.

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderName};
use hyper::http::request::Parts;
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};

use super::journal::{Entry, Journal};
use super::mend::{self, Change, Mended};
use crate::classify::{self, Class, Hint};
use crate::media::rules::Rules;
use crate::request::Dialect;

type Body = BoxBody<Bytes, hyper::Error>;

/// The largest request body the proxy reads (a request past every provider's
/// cap is refused by the provider anyway; this only bounds memory).
const MAX_REQUEST: usize = 256 << 20;
/// The largest error answer read to judge it.
const MAX_ERROR: usize = 4 << 20;

/// How the proxy runs.
pub struct Options {
    /// 0: any free port.
    pub port: u16,
    /// Where every request goes; `None`: each dialect's real provider.
    pub upstream: Option<Uri>,
    /// Rule overrides (`--rules FILE`) applied to each provider's rules.
    pub rules_file: Option<PathBuf>,
    /// At most this many images in one request (else the provider's rules).
    pub max_images: Option<usize>,
    pub journal: PathBuf,
}

struct State {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    upstream: Option<Uri>,
    max_images: Option<usize>,
    /// Rules by dialect: Anthropic, OpenAI (both APIs), Gemini.
    rules: [Rules; 3],
    journal: Journal,
}

impl State {
    fn rules(&self, d: Dialect) -> &Rules {
        match d {
            Dialect::Anthropic => &self.rules[0],
            Dialect::OpenaiResponses | Dialect::OpenaiChat => &self.rules[1],
            Dialect::Gemini => &self.rules[2],
        }
    }
}

fn rules_for(provider: &str, file: Option<&std::path::Path>) -> anyhow::Result<Rules> {
    let rules = Rules::builtin(provider).unwrap_or_else(Rules::generic);
    match file {
        Some(f) => rules.with_overrides_from(f),
        None => Ok(rules),
    }
}

/// Runs the proxy until the process ends; `ready` is told the port once it listens.
pub fn run(opts: Options, ready: impl FnOnce(u16) -> anyhow::Result<()>) -> anyhow::Result<()> {
    let rules = [
        rules_for("anthropic", opts.rules_file.as_deref())?,
        rules_for("openai", opts.rules_file.as_deref())?,
        rules_for("gemini", opts.rules_file.as_deref())?,
    ];
    let journal = Journal::open(&opts.journal)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(async move {
        // The loopback, and only it: no option names another address.
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, opts.port));
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("listening on 127.0.0.1:{}", opts.port))?;
        ready(listener.local_addr()?.port())?;
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(std::time::Duration::from_secs(30)));
        http.set_nodelay(true);
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new()).build(https);
        let state = Arc::new(State { client, upstream: opts.upstream, max_images: opts.max_images, rules, journal });
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                // Out of descriptors, or a connection reset before it was accepted: keep serving.
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            };
            let _ = stream.set_nodelay(true);
            let state = Arc::clone(&state);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| handle(Arc::clone(&state), req));
                let _ =
                    hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    })
}

async fn handle(state: Arc<State>, req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    Ok(forward(&state, req).await.unwrap_or_else(|e| failure(&e)))
}

/// The proxy's own answer when it could not reach the provider: a 502 in the
/// shape every dialect's clients read (`error.message`), no request content in it.
fn failure(e: &anyhow::Error) -> Response<Body> {
    let message = crate::text::sanitize(&format!("session-doctor proxy: {e:#}"));
    let v = serde_json::json!({"type": "error", "error": {"type": "proxy_error", "message": message}});
    let mut r = Response::new(full(Bytes::from(v.to_string())));
    *r.status_mut() = StatusCode::BAD_GATEWAY;
    r.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    r
}

fn full(b: Bytes) -> Body {
    Full::new(b).map_err(|never| match never {}).boxed()
}

/// Headers that belong to one hop, not to the request (RFC 9110 §7.6.1).
fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
    )
}

async fn forward(state: &State, req: Request<Incoming>) -> anyhow::Result<Response<Body>> {
    let (parts, body) = req.into_parts();
    let body = Limited::new(body, MAX_REQUEST)
        .collect()
        .await
        .map_err(|e| anyhow::anyhow!("reading the request: {e}"))?
        .to_bytes();
    let path = parts.uri.path().to_string();
    let dialect = if parts.method == Method::POST { super::dialect_of(&path) } else { None };
    let mut changes: Vec<Change> = Vec::new();
    let mut sent = body.clone();
    if let Some(d) = dialect {
        let rules = state.rules(d).clone();
        let max = state.max_images;
        let model = super::model_of(&path).map(str::to_string);
        let m = tokio::task::spawn_blocking(move || mend::mend(&body, d, &rules, max, model.as_deref())).await?;
        if let Some(b) = m.body {
            sent = Bytes::from(b);
        }
        changes = m.changes;
    }
    let target = target(state.upstream.as_ref(), &parts)?;
    let answer = send(state, &parts, &target, sent.clone()).await?;
    let status = answer.status();
    let Some(d) = dialect.filter(|_| status.is_client_error()) else {
        note(state, &parts, &changes, None, status);
        return Ok(streamed(answer));
    };
    let (aparts, abody) = answer.into_parts();
    let text = Limited::new(abody, MAX_ERROR)
        .collect()
        .await
        .map_err(|e| anyhow::anyhow!("reading the provider's answer: {e}"))?
        .to_bytes();
    let encoded = aparts.headers.get(header::CONTENT_ENCODING).is_some_and(|v| v.as_bytes() != b"identity");
    let again = if encoded { None } else { retry_body(&text, status, d, &sent, state.rules(d)) };
    let Some(again) = again else {
        note(state, &parts, &changes, None, status);
        let mut answer = Response::from_parts(aparts, full(text));
        strip_hop_by_hop(answer.headers_mut());
        return Ok(answer);
    };
    changes.extend(again.changes);
    let body = Bytes::from(again.body.unwrap_or_default());
    let second = send(state, &parts, &target, body).await?;
    note(state, &parts, &changes, Some(status), second.status());
    Ok(streamed(second))
}

/// The body to send a second time after the provider refused `sent` with
/// `answer`: only a deterministic rejection the request can be cured of
/// (an attachment it names, too many images for a limit it names, a Gemini
/// function call of the current turn without a thought signature).
fn retry_body(answer: &[u8], status: StatusCode, d: Dialect, sent: &[u8], rules: &Rules) -> Option<Mended> {
    let text = std::str::from_utf8(answer).ok()?;
    let hint = Hint { status: Some(status.as_u16()), provider: Some(super::provider_of(d).to_string()) };
    let c = classify::classify(text, &hint);
    if c.retryable != Some(false) {
        return None;
    }
    let why = format!("the provider answered {}: {}", status.as_u16(), c.message.as_deref().unwrap_or("(no message)"));
    let why = crate::text::sanitize(&why);
    match c.class {
        Class::MediaRejected => mend::replace_named(sent, d, c.block.as_deref()?, &why),
        Class::ImageLimit => mend::cap_to(sent, d, usize::try_from(c.limit?).ok()?, rules),
        Class::ReasoningRejected if d == Dialect::Gemini => {
            let m = c.message.as_deref().unwrap_or_default().to_ascii_lowercase();
            (m.contains("missing a thought_signature") || m.contains("missing thought_signature"))
                .then(|| mend::sign_refused(sent))
                .flatten()
        }
        _ => None,
    }
}

/// Journals a request that was changed or retried (and says so on stderr).
fn note(state: &State, parts: &Parts, changes: &[Change], first: Option<StatusCode>, status: StatusCode) {
    if changes.is_empty() && first.is_none() {
        return;
    }
    let at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let entry = Entry {
        at,
        method: parts.method.as_str(),
        path: parts.uri.path(),
        changes,
        retried: first.is_some(),
        first_status: first.map(|s| s.as_u16()),
        status: status.as_u16(),
    };
    if let Err(e) = state.journal.write(&entry) {
        eprintln!("session-doctor proxy: writing the journal: {e}");
    }
    let what: Vec<String> = changes.iter().map(|c| format!("{} {}", c.what, c.block)).collect();
    let retried = first.map(|s| format!(" (retried after a {})", s.as_u16())).unwrap_or_default();
    let line = format!("{} {}: {}{retried} -> {}", parts.method, parts.uri.path(), what.join(", "), status.as_u16());
    eprintln!("{}", crate::text::sanitize(&line));
}

/// Where the request goes: the upstream's scheme and authority, its path as a
/// prefix of the request's path and query.
fn target(upstream: Option<&Uri>, parts: &Parts) -> anyhow::Result<Uri> {
    let path_q = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let base = match upstream {
        Some(u) => u.clone(),
        None => {
            let headers: Vec<(&str, &str)> = parts.headers.keys().map(|k| (k.as_str(), "")).collect();
            super::default_upstream(parts.uri.path(), &headers).parse()?
        }
    };
    let prefix = base.path().trim_end_matches('/');
    Uri::builder()
        .scheme(base.scheme().cloned().context("the upstream URL has no scheme")?)
        .authority(base.authority().cloned().context("the upstream URL has no host")?)
        .path_and_query(format!("{prefix}{path_q}"))
        .build()
        .context("building the upstream URL")
}

async fn send(state: &State, parts: &Parts, target: &Uri, body: Bytes) -> anyhow::Result<Response<Incoming>> {
    let mut req = Request::builder().method(parts.method.clone()).uri(target.clone()).version(hyper::Version::HTTP_11);
    // Every header as the agent sent it, credentials included and untouched;
    // the host and the framing are this hop's.
    for (k, v) in &parts.headers {
        if hop_by_hop(k) || k == header::HOST || k == header::CONTENT_LENGTH {
            continue;
        }
        req = req.header(k, v);
    }
    if !body.is_empty() || parts.headers.contains_key(header::CONTENT_LENGTH) {
        req = req.header(header::CONTENT_LENGTH, body.len());
    }
    let req = req.body(Full::new(body)).context("building the request")?;
    let host = target.authority().map_or("", hyper::http::uri::Authority::as_str).to_string();
    state.client.request(req).await.with_context(|| format!("sending to {host}"))
}

/// The provider's answer as it arrives, chunk by chunk.
fn streamed(answer: Response<Incoming>) -> Response<Body> {
    let (mut parts, body) = answer.into_parts();
    strip_hop_by_hop(&mut parts.headers);
    Response::from_parts(parts, body.boxed())
}

fn strip_hop_by_hop(headers: &mut hyper::HeaderMap) {
    let hop: Vec<HeaderName> = headers.keys().filter(|k| hop_by_hop(k)).cloned().collect();
    for k in hop {
        headers.remove(k);
    }
}
