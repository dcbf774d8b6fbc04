//! The same media in every format: each adapter finds every payload, in order,
//! with its origin, tool path and the sha256 of its decoded bytes.

use crate::common;

use common::wrap::{FORMATS, Item, session};
use common::{b64, scan_json};
use sha2::{Digest, Sha256};

#[test]
fn every_format_reports_every_payload_with_origin_path_and_hash() {
    let payloads: Vec<Vec<u8>> = (0..3u8).map(|i| [b"\x89PNG\r\n\x1a\n".as_slice(), &[i; 16]].concat()).collect();
    let texts: Vec<String> = payloads.iter().map(|p| b64(p)).collect();
    let items: Vec<Item<'_>> = texts.iter().map(|t| Item { base64: t, mime: "image/png" }).collect();
    for format in FORMATS {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, session(format, &items)).expect("write");
        let (doc, _) = scan_json(&path, &[]);
        assert_eq!(doc["format"], format, "detected");
        let got = doc["attachments"].as_array().expect("array");
        assert_eq!(got.len(), 3, "{format}: {doc:#}");
        for (n, (a, bytes)) in got.iter().zip(&payloads).enumerate() {
            assert_eq!(a["sha256"], format!("{:x}", Sha256::digest(bytes)), "{format} #{n}");
            assert_eq!(a["bytes"], bytes.len(), "{format} #{n}");
            if n == 0 {
                assert_eq!(a["origin"], "user", "{format}");
            } else {
                assert_eq!(a["origin"], "tool_result", "{format} #{n}");
                assert_eq!(a["name"], format!("/tmp/media-{}", n - 1), "{format} #{n}: tool path");
                assert!(a["call_id"].is_string(), "{format} #{n}: call id");
            }
        }
    }
}

#[test]
fn either_spelling_of_image_url_is_read() {
    let url = format!("data:image/png;base64,{}", b64(b"\x89PNG\r\n\x1a\nQ"));
    for part in [
        serde_json::json!({"type": "input_image", "image_url": url}),
        serde_json::json!({"type": "input_image", "image_url": {"url": url}}),
        serde_json::json!({"type": "image_url", "image_url": url}),
        serde_json::json!({"type": "image_url", "image_url": {"url": url, "detail": "high"}}),
    ] {
        let body =
            serde_json::json!({"model": "gpt-5", "input": [{"type": "message", "role": "user", "content": [part]}]});
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, format!("{body}\n")).expect("write");
        let (doc, _) = scan_json(&path, &[]);
        assert_eq!(doc["attachments"].as_array().map(Vec::len), Some(1), "{part}");
    }
}
