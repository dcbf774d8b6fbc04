//! `session-doctor proxy` against a tiny loopback upstream (hyper, in the
//! test): byte-identical pass-through, SSE streamed as it arrives, a broken
//! PNG replaced, one retry on a rejection naming a block and never a second,
//! credentials kept out of the journal, the loopback as the only address.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Frame;

use crate::common::{b64, bin, media_corpus};

/// What the upstream received.
#[derive(Clone, Debug)]
struct Seen {
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// An answer the upstream gives: status and body parts; between parts it
/// waits for the test's word (a receiver per gap), so a part can be shown to
/// reach the agent before the next one is sent.
struct Reply {
    status: u16,
    content_type: &'static str,
    parts: Vec<Vec<u8>>,
    gates: Vec<std::sync::mpsc::Receiver<()>>,
}

impl Reply {
    fn json(status: u16, body: &str) -> Reply {
        Reply { status, content_type: "application/json", parts: vec![body.as_bytes().to_vec()], gates: Vec::new() }
    }
}

type Script = Box<dyn Fn(usize, &Seen) -> Reply + Send + Sync>;

/// The loopback upstream: answers each request by `script` (given its index
/// and what it received), and keeps what it received.
struct Upstream {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Upstream {
    fn start(script: Script) -> Upstream {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let kept = Arc::clone(&seen);
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap().port()).unwrap();
                let script = Arc::new(script);
                loop {
                    let (stream, _) = listener.accept().await.unwrap();
                    let (script, kept) = (Arc::clone(&script), Arc::clone(&kept));
                    tokio::spawn(async move {
                        let service = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                            let (script, kept) = (Arc::clone(&script), Arc::clone(&kept));
                            async move { answer(req, &script, &kept).await }
                        });
                        let io = hyper_util::rt::TokioIo::new(stream);
                        let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
                    });
                }
            });
        });
        Upstream { port: rx.recv().unwrap(), seen }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

type UpBody = http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>;

async fn answer(
    req: hyper::Request<hyper::body::Incoming>,
    script: &Script,
    kept: &Mutex<Vec<Seen>>,
) -> Result<hyper::Response<UpBody>, std::convert::Infallible> {
    let path = req.uri().path_and_query().unwrap().to_string();
    let headers =
        req.headers().iter().map(|(k, v)| (k.to_string(), String::from_utf8_lossy(v.as_bytes()).into())).collect();
    let body = req.into_body().collect().await.unwrap().to_bytes().to_vec();
    let seen = Seen { path, headers, body };
    let n = {
        let mut k = kept.lock().unwrap();
        k.push(seen.clone());
        k.len() - 1
    };
    let reply = script(n, &seen);
    let (mut tx, channel) = http_body_util::channel::Channel::<Bytes, std::convert::Infallible>::new(4);
    let parts = reply.parts;
    let mut gates = reply.gates.into_iter();
    tokio::spawn(async move {
        for p in parts {
            if tx.send(Frame::data(Bytes::from(p))).await.is_err() {
                return;
            }
            if let Some(gate) = gates.next() {
                let _ = tokio::task::spawn_blocking(move || gate.recv_timeout(Duration::from_secs(20))).await;
            }
        }
    });
    let body = if reply.status == 200 && reply.content_type == "text/event-stream" {
        channel.boxed()
    } else {
        // Whole answers go with a length, as providers send errors.
        let mut all = Vec::new();
        let mut c = channel;
        while let Some(Ok(f)) = c.frame().await {
            if let Ok(d) = f.into_data() {
                all.extend_from_slice(&d);
            }
        }
        Full::new(Bytes::from(all)).boxed()
    };
    let mut r = hyper::Response::new(body);
    *r.status_mut() = hyper::StatusCode::from_u16(reply.status).unwrap();
    r.headers_mut().insert("content-type", reply.content_type.parse().unwrap());
    r.headers_mut().insert("request-id", "req_upstream".parse().unwrap());
    Ok(r)
}

/// The proxy under test, in a state folder of its own; ended on drop.
struct Proxy {
    child: Child,
    port: u16,
    state: tempfile::TempDir,
}

impl Proxy {
    fn start(upstream: &str, extra: &[&str]) -> Proxy {
        let state = tempfile::tempdir().unwrap();
        let mut child = bin()
            .args(["proxy", "--port", "0", "--upstream", upstream])
            .args(extra)
            .env("XDG_STATE_HOME", state.path())
            .env("HOME", state.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the proxy starts");
        let mut first = String::new();
        BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut first).unwrap();
        let port = first
            .trim_end()
            .strip_prefix("listening on http://127.0.0.1:")
            .unwrap_or_else(|| panic!("first line names the address: {first:?}"))
            .parse()
            .unwrap();
        Proxy { child, port, state }
    }

    fn journal_path(&self) -> std::path::PathBuf {
        self.state.path().join("session-doctor").join("proxy").join("journal.jsonl")
    }

    fn journal(&self) -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(self.journal_path()).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    /// Ends the proxy and returns what it printed on stderr.
    fn stop(mut self) -> String {
        let _ = self.child.kill();
        let mut err = String::new();
        let _ = self.child.stderr.take().unwrap().read_to_string(&mut err);
        let _ = self.child.wait();
        err
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An answer as the agent reads it.
struct Got {
    status: u16,
    body: Vec<u8>,
}

fn request(port: u16, path: &str, headers: &[(&str, &str)], body: &[u8]) -> TcpStream {
    let mut s = TcpStream::connect(SocketAddr::from(([127, 0, 0, 1], port))).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut head = format!("POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nconnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    s
}

/// Reads an HTTP/1.1 answer to its end (the connection closes after it).
fn read_answer(s: &mut TcpStream) -> Got {
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    parse_answer(&raw)
}

fn parse_answer(raw: &[u8]) -> Got {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a head") + 4;
    let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
    let status = head[9..12].parse().unwrap();
    let mut body = raw[end..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        body = dechunk(&body);
    }
    Got { status, body }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let nl = b.windows(2).position(|w| w == b"\r\n").unwrap();
        let size = usize::from_str_radix(std::str::from_utf8(&b[..nl]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&b[nl + 2..nl + 2 + size]);
        b = &b[nl + 4 + size..];
    }
}

fn post(port: u16, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Got {
    read_answer(&mut request(port, path, headers, body))
}

const OK: &str = r#"{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}]}"#;

fn always_ok() -> Script {
    Box::new(|_, _| Reply::json(200, OK))
}

/// An Anthropic Messages body: one user turn with a text block and an image
/// block (`data`, declared PNG), spelled with the spacing and escapes an
/// agent might use, none of which the proxy may change.
fn anthropic(data: &[u8]) -> Vec<u8> {
    format!(
        "{{\"model\": \"claude-sonnet-4-5\",  \"max_tokens\":1024,\"messages\":[{{\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":\"look \\u00e9 \\/ at this\"}},{{\"type\":\"image\",\"source\":{{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"{}\"}}}}]}}], \"stream\":false, \"temperature\":1.0e0}}",
        b64(data)
    )
    .into_bytes()
}

#[test]
fn a_request_with_nothing_to_change_is_forwarded_byte_for_byte() {
    let up = Upstream::start(always_ok());
    let proxy = Proxy::start(&up.url(), &[]);
    let body = anthropic(&media_corpus::png(8, 8));
    let creds = [("x-api-key", "sk-ant-SECRET-1"), ("anthropic-version", "2023-06-01"), ("x-custom", "Kept As Is")];
    let got = post(proxy.port, "/v1/messages?beta=true", &creds, &body);
    assert_eq!(got.status, 200);
    assert_eq!(got.body, OK.as_bytes(), "the answer comes back as the upstream sent it");
    let seen = up.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].body, body, "the forwarded body is the agent's, byte for byte");
    assert_eq!(seen[0].path, "/v1/messages?beta=true");
    for (k, v) in creds {
        assert!(seen[0].headers.iter().any(|(hk, hv)| hk == k && hv == v), "{k} forwarded untouched");
    }
    assert!(proxy.journal().is_empty(), "nothing changed: nothing journaled");
}

#[test]
fn an_sse_answer_reaches_the_agent_as_it_is_sent() {
    let first = b"event: message_start\ndata: {\"type\":\"message_start\"}\n\n".to_vec();
    let rest = b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".to_vec();
    let (gate_tx, gate_rx) = std::sync::mpsc::channel();
    let gate = Mutex::new(Some(gate_rx));
    let parts = (first.clone(), rest.clone());
    let up = Upstream::start(Box::new(move |_, _| Reply {
        status: 200,
        content_type: "text/event-stream",
        parts: vec![parts.0.clone(), parts.1.clone()],
        gates: gate.lock().unwrap().take().into_iter().collect(),
    }));
    let proxy = Proxy::start(&up.url(), &[]);
    let mut s = request(proxy.port, "/v1/messages", &[], &anthropic(&media_corpus::png(4, 4)));
    // The first event arrives while the upstream still holds the second.
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    while !raw.windows(first.len()).any(|w| w == first.as_slice()) {
        let n = s.read(&mut buf).expect("the first event arrives before the upstream sends the rest");
        assert!(n > 0, "the stream ended before its first event");
        raw.extend_from_slice(&buf[..n]);
    }
    gate_tx.send(()).unwrap();
    s.read_to_end(&mut raw).unwrap();
    let got = parse_answer(&raw);
    assert_eq!(got.status, 200);
    assert_eq!(got.body, [first, rest].concat(), "the stream, byte for byte");
}

#[test]
fn a_broken_png_goes_as_the_note_repair_writes() {
    let up = Upstream::start(always_ok());
    let proxy = Proxy::start(&up.url(), &[]);
    let mut cut = media_corpus::png(16, 16);
    cut.truncate(60);
    let got = post(proxy.port, "/v1/messages", &[("x-api-key", "sk-ant-SECRET-2")], &anthropic(&cut));
    assert_eq!(got.status, 200);
    let sent: serde_json::Value = serde_json::from_slice(&up.seen()[0].body).unwrap();
    let block = &sent["messages"][0]["content"][1];
    assert_eq!(block["type"], "text", "the image block is a text note now: {block}");
    assert!(block["text"].as_str().unwrap().starts_with("[Attachment omitted: \"messages.0.content.1\" (image/png)."));
    assert_eq!(sent["messages"][0]["content"][0]["text"], "look é / at this", "the rest is as it was");
    let j = proxy.journal();
    assert_eq!(j.len(), 1, "{j:?}");
    assert_eq!(j[0]["changes"][0]["what"], "replaced");
    assert_eq!(j[0]["changes"][0]["block"], "messages.0.content.1");
    assert_eq!(j[0]["status"], 200);
}

/// Anthropic's 400 for an image it could not process, naming its block.
const REJECTED: &str = r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.0.content.1.image.source.base64: Could not process image"},"request_id":"req_1"}"#;

#[test]
fn a_rejection_naming_a_block_is_cured_and_retried_once() {
    let up = Upstream::start(Box::new(|n, _| if n == 0 { Reply::json(400, REJECTED) } else { Reply::json(200, OK) }));
    let proxy = Proxy::start(&up.url(), &[]);
    // Valid to every check here: only the provider knows it cannot process it.
    let body = anthropic(&media_corpus::png(8, 8));
    let got = post(proxy.port, "/v1/messages", &[], &body);
    assert_eq!(got.status, 200, "the agent sees the retry's answer");
    let seen = up.seen();
    assert_eq!(seen.len(), 2, "sent twice");
    assert_eq!(seen[0].body, body, "first as the agent wrote it");
    let second: serde_json::Value = serde_json::from_slice(&seen[1].body).unwrap();
    assert_eq!(second["messages"][0]["content"][1]["type"], "text", "then with the named block a note");
    let j = proxy.journal();
    assert_eq!(
        (j.len(), &j[0]["retried"], &j[0]["first_status"], &j[0]["status"]),
        (1, &true.into(), &400.into(), &200.into())
    );
    assert!(j[0]["changes"][0]["why"].as_str().unwrap().contains("Could not process image"), "{j:?}");
}

#[test]
fn a_deterministic_failure_is_never_retried_twice() {
    let up = Upstream::start(Box::new(|_, _| Reply::json(400, REJECTED)));
    let proxy = Proxy::start(&up.url(), &[]);
    let got = post(proxy.port, "/v1/messages", &[], &anthropic(&media_corpus::png(8, 8)));
    assert_eq!(got.status, 400);
    assert_eq!(got.body, REJECTED.as_bytes(), "the provider's answer, as it sent it");
    assert_eq!(up.seen().len(), 2, "one send, one retry, no more");
}

#[test]
fn a_rejection_naming_nothing_to_cure_is_not_retried() {
    let auth = r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
    let up = Upstream::start(Box::new(move |_, _| Reply::json(401, auth)));
    let proxy = Proxy::start(&up.url(), &[]);
    let got = post(proxy.port, "/v1/messages", &[], &anthropic(&media_corpus::png(8, 8)));
    assert_eq!((got.status, got.body.as_slice()), (401, auth.as_bytes()));
    assert_eq!(up.seen().len(), 1);
    assert!(proxy.journal().is_empty());
}

#[test]
fn credentials_are_never_journaled_nor_printed() {
    let up = Upstream::start(Box::new(|n, _| if n == 0 { Reply::json(400, REJECTED) } else { Reply::json(200, OK) }));
    let proxy = Proxy::start(&up.url(), &[]);
    let png = media_corpus::png(8, 8);
    let headers = [
        ("authorization", "Bearer sk-SECRET-bearer"),
        ("x-api-key", "sk-ant-SECRET-key"),
        ("x-goog-api-key", "SECRET-goog"),
        ("cookie", "session=SECRET-cookie"),
    ];
    // Refused once naming the image, then retried: the journal's fullest line.
    assert_eq!(post(proxy.port, "/v1/messages?key=SECRET-query", &headers, &anthropic(&png)).status, 200);
    let journal = std::fs::read_to_string(proxy.journal_path()).unwrap();
    assert!(!journal.is_empty());
    assert!(!journal.contains("SECRET"), "a credential in the journal: {journal}");
    assert!(!journal.contains(&b64(&png)[..20]), "a payload in the journal: {journal}");
    let mode = |p: &std::path::Path| {
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(p).unwrap().permissions()) & 0o777
    };
    assert_eq!(mode(&proxy.journal_path()), 0o600);
    assert_eq!(mode(proxy.journal_path().parent().unwrap()), 0o700);
    let shown = bin().args(["proxy", "--journal"]).env("XDG_STATE_HOME", proxy.state.path()).output().unwrap();
    let shown = String::from_utf8(shown.stdout).unwrap();
    assert!(shown.contains("replaced messages.0.content.1") && !shown.contains("SECRET"), "{shown}");
    let printed = proxy.stop();
    assert!(!printed.contains("SECRET"), "a credential on stderr: {printed}");
}

#[test]
fn it_listens_on_the_loopback_only() {
    let up = Upstream::start(always_ok());
    let proxy = Proxy::start(&up.url(), &[]);
    // /proc/net/tcp: local address 0100007F (127.0.0.1) for the port, state 0A (listen).
    let tcp = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let port = format!(":{:04X}", proxy.port);
    let listening: Vec<&str> = tcp
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() > 3 && f[1].ends_with(&port) && f[3] == "0A").then_some(f[1])
        })
        .collect();
    assert_eq!(listening, [format!("0100007F{port}")], "bound to 127.0.0.1 and nothing else");
    let tcp6 = std::fs::read_to_string("/proc/net/tcp6").unwrap_or_default();
    assert!(!tcp6.lines().any(|l| l.split_whitespace().nth(1).is_some_and(|a| a.ends_with(&port))), "no IPv6 socket");
    let help = String::from_utf8(bin().args(["proxy", "--help"]).output().unwrap().stdout).unwrap();
    assert!(
        !help.contains("--host") && !help.contains("--bind") && !help.contains("--listen"),
        "no option for another address"
    );
}

#[test]
fn a_9000_px_screenshot_is_fitted_and_31_images_keep_30() {
    let up = Upstream::start(always_ok());
    let proxy = Proxy::start(&up.url(), &["--max-images", "30"]);
    let got = post(proxy.port, "/v1/messages", &[], &anthropic(&media_corpus::png(9000, 40)));
    assert_eq!(got.status, 200);
    let sent: serde_json::Value = serde_json::from_slice(&up.seen()[0].body).unwrap();
    let data = sent["messages"][0]["content"][1]["source"]["data"].as_str().unwrap();
    let bytes = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, data).unwrap();
    let img = image::load_from_memory(&bytes).unwrap();
    assert_eq!(img.width(), 8000, "fitted to Anthropic's 8000 px side");
    assert!((35..=36).contains(&img.height()), "aspect kept: {}", img.height());
    let one = format!(
        "{{\"type\":\"image\",\"source\":{{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"{}\"}}}}",
        b64(&media_corpus::png(4, 4))
    );
    let many = vec![one; 31].join(",");
    let body =
        format!("{{\"model\":\"m\",\"max_tokens\":8,\"messages\":[{{\"role\":\"user\",\"content\":[{many}]}}]}}");
    assert_eq!(post(proxy.port, "/v1/messages", &[], body.as_bytes()).status, 200);
    let sent: serde_json::Value = serde_json::from_slice(&up.seen()[1].body).unwrap();
    let content = sent["messages"][0]["content"].as_array().unwrap();
    assert_eq!(content.iter().filter(|b| b["type"] == "image").count(), 30);
    assert!(content[0]["text"].as_str().unwrap().starts_with("[Earlier image omitted: this request keeps only the 30"));
    let j = proxy.journal();
    assert_eq!(
        (j[0]["changes"][0]["what"].as_str(), j[1]["changes"][0]["what"].as_str()),
        (Some("fitted"), Some("capped"))
    );
}

#[test]
fn too_many_images_for_a_limit_the_provider_names_is_retried_with_that_many() {
    let limit = r#"{"type":"error","error":{"type":"invalid_request_error","message":"too many images and documents: 31 + 0 > 30"}}"#;
    let up = Upstream::start(Box::new(move |n, _| if n == 0 { Reply::json(400, limit) } else { Reply::json(200, OK) }));
    let proxy = Proxy::start(&up.url(), &[]);
    let one = format!(
        "{{\"type\":\"image\",\"source\":{{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"{}\"}}}}",
        b64(&media_corpus::png(4, 4))
    );
    let body = format!(
        "{{\"model\":\"m\",\"max_tokens\":8,\"messages\":[{{\"role\":\"user\",\"content\":[{}]}}]}}",
        vec![one; 31].join(",")
    );
    assert_eq!(post(proxy.port, "/v1/messages", &[], body.as_bytes()).status, 200);
    let seen = up.seen();
    assert_eq!(seen.len(), 2);
    let sent: serde_json::Value = serde_json::from_slice(&seen[1].body).unwrap();
    assert_eq!(sent["messages"][0]["content"].as_array().unwrap().iter().filter(|b| b["type"] == "image").count(), 30);
}

#[test]
fn openai_and_gemini_attachments_are_checked_in_their_own_shapes() {
    let up = Upstream::start(always_ok());
    let proxy = Proxy::start(&up.url(), &[]);
    let mut cut = media_corpus::png(16, 16);
    cut.truncate(60);
    let url = format!("data:image/png;base64,{}", b64(&cut));
    let responses = format!(
        r#"{{"model":"gpt-5","input":[{{"role":"user","content":[{{"type":"input_text","text":"hi"}},{{"type":"input_image","image_url":"{url}"}}]}}],"store":false}}"#
    );
    let chat = format!(
        r#"{{"model":"gpt-4o","messages":[{{"role":"user","content":[{{"type":"image_url","image_url":{{"url":"{url}"}}}}]}}]}}"#
    );
    let gemini = format!(
        r#"{{"contents":[{{"role":"user","parts":[{{"text":"hi"}},{{"inlineData":{{"mimeType":"image/png","data":"{}"}}}}]}}]}}"#,
        b64(&cut)
    );
    for (path, body) in [
        ("/v1/responses", responses),
        ("/v1/chat/completions", chat),
        ("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", gemini),
    ] {
        assert_eq!(post(proxy.port, path, &[], body.as_bytes()).status, 200, "{path}");
    }
    let seen = up.seen();
    let v = |i: usize| serde_json::from_slice::<serde_json::Value>(&seen[i].body).unwrap();
    assert_eq!(v(0)["input"][0]["content"][1]["type"], "input_text");
    assert_eq!(v(1)["messages"][0]["content"][0]["type"], "text");
    assert!(v(2)["contents"][0]["parts"][1]["text"].as_str().unwrap().starts_with("[Attachment omitted"));
    let blocks: Vec<String> =
        proxy.journal().iter().map(|j| j["changes"][0]["block"].as_str().unwrap().to_string()).collect();
    assert_eq!(blocks, ["input[0].content[1]", "messages[0].content[0]", "contents[0].parts[1]"]);
}

#[test]
fn an_unresolvable_reasoning_id_under_store_false_is_dropped() {
    let up = Upstream::start(always_ok());
    let proxy = Proxy::start(&up.url(), &[]);
    let body = r#"{"model":"gpt-5","store":false,"input":[{"role":"user","content":"hi"},{"type":"reasoning","id":"rs_1","summary":[]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"x"}]},{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"gAAA"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"y"}]}]}"#;
    assert_eq!(post(proxy.port, "/v1/responses", &[], body.as_bytes()).status, 200);
    let sent: serde_json::Value = serde_json::from_slice(&up.seen()[0].body).unwrap();
    let ids: Vec<&str> = sent["input"].as_array().unwrap().iter().filter_map(|i| i["id"].as_str()).collect();
    assert_eq!(ids, ["rs_2"], "the item with its encrypted content stays; the one the API cannot resolve goes");
    assert_eq!(proxy.journal()[0]["changes"][0]["what"], "reasoning_dropped");
}

/// A Gemini request: an earlier turn whose call is unsigned, then the current
/// turn's first step signed and its second unsigned (a call another model made).
const GEMINI_TURNS: &str = r#"{"contents":[{"role":"user","parts":[{"text":"old"}]},{"role":"model","parts":[{"functionCall":{"name":"ls","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"ls","response":{}}}]},{"role":"model","parts":[{"text":"done"}]},{"role":"user","parts":[{"text":"now"}]},{"role":"model","parts":[{"functionCall":{"name":"read_file","args":{}},"thoughtSignature":"c2ln"}]},{"role":"user","parts":[{"functionResponse":{"name":"read_file","response":{}}}]},{"role":"model","parts":[{"functionCall":{"name":"grep","args":{}}},{"functionCall":{"name":"glob","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"grep","response":{}}},{"functionResponse":{"name":"glob","response":{}}}]}]}"#;

/// Gemini's refusal of an unsigned call (cases.tsv: zafiro#100).
const MISSING_SIGNATURE: &str = r#"{"error":{"code":400,"message":"Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:grep` , position 8. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.","status":"INVALID_ARGUMENT"}}"#;

/// What the request's parts carry as thought signatures, content by content.
fn signatures(body: &[u8]) -> Vec<Vec<Option<String>>> {
    let v: serde_json::Value = serde_json::from_slice(body).unwrap();
    let sig = |p: &serde_json::Value| p["thoughtSignature"].as_str().map(str::to_string);
    v["contents"].as_array().unwrap().iter().map(|c| c["parts"].as_array().unwrap().iter().map(sig).collect()).collect()
}

#[test]
fn a_gemini_3_call_of_the_current_turn_without_a_signature_gets_googles_placeholder() {
    let up = Upstream::start(always_ok());
    let proxy = Proxy::start(&up.url(), &[]);
    let path = "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse";
    assert_eq!(post(proxy.port, path, &[], GEMINI_TURNS.as_bytes()).status, 200);
    let sent = &up.seen()[0].body;
    let sigs = signatures(sent);
    let skip = Some("skip_thought_signature_validator".to_string());
    assert_eq!(sigs[1], [None], "an earlier turn's call is not checked by Gemini, and is left as it is");
    assert_eq!(sigs[5], [Some("c2ln".to_string())], "a signed call keeps its signature");
    assert_eq!(
        sigs[7],
        [skip, None],
        "the first call of an unsigned step gets the placeholder, its parallel call none"
    );
    // Nothing else moved: the body is the agent's with one member added.
    let added = r#""thoughtSignature":"skip_thought_signature_validator","#;
    assert_eq!(String::from_utf8_lossy(sent).replacen(added, "", 1), GEMINI_TURNS);
    let j = proxy.journal();
    assert_eq!(
        (&j[0]["changes"][0]["what"], &j[0]["changes"][0]["block"]),
        (&"signed".into(), &"contents[7].parts[0]".into())
    );
    // Gemini 2.5 checks no signature: its request goes as the agent wrote it.
    assert_eq!(
        post(proxy.port, "/v1beta/models/gemini-2.5-flash:generateContent", &[], GEMINI_TURNS.as_bytes()).status,
        200
    );
    assert_eq!(up.seen()[1].body, GEMINI_TURNS.as_bytes());
}

#[test]
fn a_missing_signature_refusal_is_cured_and_retried_once_whatever_the_model_is_called() {
    // An alias whose name says no version: the provider's refusal says it checks signatures.
    let up = Upstream::start(Box::new(
        |n, _| if n == 0 { Reply::json(400, MISSING_SIGNATURE) } else { Reply::json(200, OK) },
    ));
    let proxy = Proxy::start(&up.url(), &[]);
    let got = post(proxy.port, "/v1beta/models/gemini-pro-latest:generateContent", &[], GEMINI_TURNS.as_bytes());
    assert_eq!(got.status, 200, "the agent sees the retry's answer");
    let seen = up.seen();
    assert_eq!((seen.len(), seen[0].body.as_slice()), (2, GEMINI_TURNS.as_bytes()), "first as the agent wrote it");
    assert_eq!(signatures(&seen[1].body)[7][0].as_deref(), Some("skip_thought_signature_validator"));
    let j = proxy.journal();
    assert_eq!(
        (&j[0]["retried"], &j[0]["first_status"], &j[0]["changes"][0]["what"]),
        (&true.into(), &400.into(), &"signed".into())
    );
}

#[test]
fn print_env_names_each_agents_setting() {
    for (agent, want) in [
        ("claude-code", "ANTHROPIC_BASE_URL=http://127.0.0.1:9123"),
        ("codex", "OPENAI_BASE_URL=http://127.0.0.1:9123/v1"),
        ("gemini-cli", "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9123"),
        ("copilot", "COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:9123/"),
        ("opencode", "\"baseURL\": \"http://127.0.0.1:9123/v1\""),
        ("pi", "\"baseUrl\": \"http://127.0.0.1:9123\""),
        ("pi", "\"google\": {\"baseUrl\": \"http://127.0.0.1:9123/v1beta\"}"),
        ("cline", "-b http://127.0.0.1:9123/v1"),
    ] {
        let out = bin().args(["proxy", "--port", "9123", "--print-env", agent]).output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(out.status.success() && text.contains(want), "{agent}: {text}");
    }
}
