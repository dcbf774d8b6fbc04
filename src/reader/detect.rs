//! Before reading: which format, which provider's rules, one document or lines.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use anyhow::{Context as _, bail};

use crate::formats::{self, Format, LineOut};
use crate::json::Value;
use crate::media::rules::Rules;

use super::{Options, Plan};

/// Lines and bytes looked at to tell the format.
const SNIFF_LINES: usize = 32;
const SNIFF_BYTES: usize = 64 << 20;

/// Decides how to read `path`.
pub fn plan(path: &Path, opts: &Options) -> anyhow::Result<Plan> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut r = BufReader::new(file);
    let mut raws: Vec<Vec<u8>> = Vec::new();
    let mut total = 0;
    let mut first_is_partial = false;
    while raws.len() < SNIFF_LINES && total < SNIFF_BYTES {
        let mut buf = Vec::new();
        let n = r.read_until(b'\n', &mut buf).with_context(|| format!("reading {}", path.display()))?;
        if n == 0 {
            break;
        }
        total += n;
        let text = String::from_utf8_lossy(&buf);
        let t = text.trim().trim_start_matches('\u{feff}');
        if t.is_empty() {
            continue;
        }
        if raws.is_empty() {
            first_is_partial = matches!(Value::parse(t.as_bytes()), Err(e) if e.is_eof());
        }
        raws.push(t.as_bytes().to_vec());
    }
    let values: Vec<Value<'_>> = raws.iter().filter_map(|b| Value::parse(b).ok()).collect();
    let single_document = values.is_empty() && first_is_partial;
    let whole: Vec<u8>;
    let doc: Vec<Value<'_>>;
    let sniffed: &[Value<'_>] = if single_document {
        whole = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let body = whole.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&whole);
        doc = match Value::parse(body) {
            Ok(v) => vec![v],
            Err(e) => bail!("{} is neither JSON Lines nor one JSON document: {e}", path.display()),
        };
        &doc
    } else {
        &values
    };
    let (format, detected) = match opts.format {
        Some(f) => (f, false),
        None => match formats::detect(sniffed) {
            Some(f) => (f, true),
            None => bail!(
                "{}: cannot tell which agent wrote this file (looked at its first {} lines); pass --format with one of: {}",
                path.display(),
                sniffed.len(),
                Format::ALL.map(Format::name).join(", ")
            ),
        },
    };
    let mut rules = rules_for(format, opts, sniffed)?;
    if let Some(file) = &opts.rules_file {
        rules = rules.with_overrides_from(file)?;
    }
    Ok(Plan { format, detected, rules, single_document })
}

/// `--provider`, else the provider the session names, else the format's own.
fn rules_for(format: Format, opts: &Options, lines: &[Value<'_>]) -> anyhow::Result<Rules> {
    if let Some(p) = &opts.provider {
        return Rules::builtin(p)
            .with_context(|| format!("unknown provider `{p}`; expected one of: {}", Rules::names().join(", ")));
    }
    let adapter = format.adapter();
    for v in lines {
        let mut out = LineOut::default();
        adapter.read(v, &mut out);
        let named = out.context_provider.iter().chain(out.entries.iter().filter_map(|e| e.provider.as_ref()));
        for p in named {
            if let Some(r) = Rules::builtin(p) {
                return Ok(r);
            }
        }
        let models = out.context_model.iter().chain(out.entries.iter().filter_map(|e| e.model.as_ref()));
        for m in models {
            if let Some(r) = Rules::provider_for_model(m).and_then(Rules::builtin) {
                return Ok(r);
            }
        }
    }
    Ok(format.default_provider().and_then(Rules::builtin).unwrap_or_else(Rules::generic))
}
