//! A repaired copy is a new session: a fresh id, the agent's own file naming,
//! and the id written wherever the agent keeps it, so the agent lists it
//! beside the original and resumes it (the original stays as it was).

use std::path::{Path, PathBuf};

use crate::model::{Fork, Format};

use crate::json::splice;

/// Where the copy goes and how it is known.
#[derive(Clone, Debug)]
pub struct Identity {
    pub path: PathBuf,
    /// The new session id, where the format has one.
    pub id: Option<String>,
    /// The old id, to be replaced wherever the format keeps it.
    pub old_id: Option<String>,
    /// The command that resumes the copy.
    pub resume: Option<String>,
    /// What the user must know for that command to work, when something is needed.
    pub resume_note: Option<String>,
}

/// The new identity of a repaired copy of `src` (read as `format`, written by
/// `written_by`), in `dir` (default: beside the original). `first_line` is the
/// file's first record, where most agents keep the session's id.
pub fn new(format: Format, written_by: Option<Fork>, src: &Path, dir: Option<&Path>, first_line: &[u8]) -> Identity {
    let place = Place::new(src, dir, first_line);
    match format {
        Format::ClaudeCode => place.claude_code(),
        Format::Codex => place.codex(),
        Format::Pi => place.pi(),
        Format::GeminiCli => place.gemini_cli(),
        Format::Copilot => place.copilot(),
        Format::QwenCode => place.qwen_code(),
        Format::Opencode if place.field("/info/id").is_some_and(|i| i.starts_with("ses_")) => {
            place.opencode_export(written_by)
        }
        Format::Cline if crate::formats::cline::request::is_task_document(&src.to_string_lossy()) => place.cline_task(),
        Format::Cline if src.file_name().is_some_and(|n| n == CLINE_HISTORY) => place.cline_ide(),
        Format::Mux => Identity { resume_note: Some(MUX_NOTE.into()), ..place.beside() },
        Format::Kiro => place.kiro(),
        _ => place.beside(),
    }
}

/// Where a copy of `src` goes, and what naming it takes.
struct Place<'a> {
    src: &'a Path,
    /// The folder the user gave (`--out`).
    given: Option<&'a Path>,
    /// The folder the copy goes in: the one given, else the original's.
    dir: PathBuf,
    stem: String,
    ext: String,
    first_line: &'a [u8],
    v4: String,
    now: String,
}

impl<'a> Place<'a> {
    fn new(src: &'a Path, given: Option<&'a Path>, first_line: &'a [u8]) -> Place<'a> {
        let dir =
            given.map(Path::to_path_buf).unwrap_or_else(|| src.parent().map(Path::to_path_buf).unwrap_or_default());
        // A compressed session (`x.jsonl.zst`) is copied as plain text: named as its plain form.
        let plain = src.to_str().and_then(|s| s.strip_suffix(".zst")).map(Path::new).unwrap_or(src);
        let stem = plain.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "session".into());
        let ext = plain.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_else(|| "jsonl".into());
        let (v4, now) = (uuid::Uuid::new_v4().to_string(), crate::clock::now_rfc3339());
        Place { src, given, dir, stem, ext, first_line, v4, now }
    }

    /// A string field of the first record.
    fn field(&self, ptr: &str) -> Option<String> {
        let r = splice::locate(self.first_line, ptr)?;
        serde_json::from_slice::<String>(&self.first_line[r]).ok()
    }

    /// The folder above the original's (an agent that keeps a folder per session), or the one given.
    fn above(&self) -> PathBuf {
        match self.given {
            Some(d) => d.to_path_buf(),
            None => self.src.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_default(),
        }
    }

    /// `now` as a file name's time: `2026-11-30T05-12-40`.
    fn stamp(&self) -> String {
        self.now.trim_end_matches('Z').replace(':', "-")
    }

    /// `<dir>/<new uuid>.jsonl`, resumed by `<cli> --resume <uuid>` from the folder
    /// the agent looks in (`folder`, `up` levels above the file's): every line names
    /// its session, so a renamed file keeps no old id to replace.
    fn uuid_file(self, cli: &str, folder: &str, up: usize, note: &str) -> Identity {
        let v4 = self.v4;
        Identity {
            path: self.dir.join(format!("{v4}.jsonl")),
            old_id: None,
            resume: Some(format!("{cli} --resume {v4}")),
            resume_note: (!in_folder(&self.dir, folder, up)).then(|| note.to_string()),
            id: Some(v4),
        }
    }

    /// `claude --resume <id>` looks in the project folder of the folder it runs in.
    fn claude_code(self) -> Identity {
        self.uuid_file(
            "claude",
            "projects",
            1,
            "Claude Code resumes a session only from its project folder (~/.claude/projects/<the project's path, each / as ->, or under $CLAUDE_CONFIG_DIR): move the copy there first, and resume it from the project's folder",
        )
    }

    fn codex(self) -> Identity {
        let id = uuid::Uuid::now_v7().to_string();
        // rollout-2026-11-30T05-12-40-<uuid>.jsonl, as Codex names them.
        let path = self.dir.join(format!("rollout-{}-{id}.jsonl", self.stamp()));
        let (resume, resume_note) = codex_resume(&path, self.src, &id);
        let old_id = self.field("/payload/id").or_else(|| self.field("/id"));
        Identity { path, old_id, resume: Some(resume), resume_note, id: Some(id) }
    }

    fn pi(self) -> Identity {
        let path = self.dir.join(format!("{}-000Z_{}.jsonl", self.stamp(), self.v4));
        Identity {
            resume: Some(format!("pi --session {}", crate::text::shell_quote(&path.display().to_string()))),
            path,
            old_id: self.field("/id"),
            resume_note: None,
            id: Some(self.v4),
        }
    }

    fn gemini_cli(self) -> Identity {
        let ts: String = self.now.chars().take(16).collect::<String>().replace(':', "-");
        let v4 = &self.v4;
        Identity {
            path: self.dir.join(format!("session-{ts}-{}.{}", &v4[..8], self.ext)),
            old_id: self.field("/sessionId"),
            resume: Some(format!("gemini --resume {v4}")),
            // `gemini --resume <id>` looks in the chats folder of the project it runs in.
            resume_note: (!in_folder(&self.dir, "chats", 0)).then(|| {
                "Gemini CLI resumes a session only from its project's chats folder (~/.gemini/tmp/<project>/chats): move the copy there first, and resume it from the project's folder".to_string()
            }),
            id: Some(self.v4.clone()),
        }
    }

    /// Kiro CLI: `sessions/cli/<id>.jsonl`, named by the id its metadata
    /// `<id>.json` (a companion, [`companions`]) holds as `session_id`.
    fn kiro(self) -> Identity {
        let v4 = self.v4;
        Identity {
            path: self.dir.join(format!("{v4}.jsonl")),
            old_id: Some(self.stem.clone()),
            resume: Some(format!("kiro-cli chat --resume-id {v4}")),
            resume_note: if kiro_metadata(self.src, &self.dir.join("x.jsonl"), &self.stem, &v4).is_none() {
                Some(format!(
                    "the original has no metadata {}.json that parses beside it, so the copy has none either: Kiro CLI lists and resumes a session only with its .json",
                    self.stem
                ))
            } else {
                (!in_folder(&self.dir, "cli", 0)).then(|| {
                    "Kiro CLI resumes a session only from its sessions folder ($KIRO_HOME/sessions/cli, by default ~/.kiro/sessions/cli): move the copy and its .json there first".to_string()
                })
            },
            id: Some(v4),
        }
    }

    /// `<chats>/<id>.jsonl` beside the original: Qwen Code finds a session by
    /// that name in the chats folder of the project it runs in.
    fn qwen_code(self) -> Identity {
        self.uuid_file(
            "qwen",
            "chats",
            0,
            "Qwen Code resumes a session only from its project's chats folder (~/.qwen/projects/<the project's path, each character other than a letter or digit as ->/chats, or under $QWEN_RUNTIME_DIR): move the copy there first, and resume it from the project's folder",
        )
    }

    /// `<session-state>/<id>/events.jsonl`: a folder of its own beside the original's.
    fn copilot(self) -> Identity {
        let state = self.above();
        let v4 = &self.v4;
        Identity {
            path: state.join(v4).join("events.jsonl"),
            old_id: self.field("/data/sessionId"),
            resume: Some(format!("copilot --resume={v4}")),
            resume_note: (!in_folder(&state, "session-state", 0)).then(|| {
                "Copilot CLI resumes a session only from its session-state folder ($COPILOT_HOME/session-state, by default ~/.copilot/session-state): move the copy's folder there first".to_string()
            }),
            id: Some(self.v4.clone()),
        }
    }

    /// An `opencode export` (or `kilo export`, `written_by` Kilo Code CLI): imported back, it would
    /// replace the original session (and its messages) under the same ids, so the copy gets ids of its own.
    fn opencode_export(self, written_by: Option<Fork>) -> Identity {
        let old = self.field("/info/id");
        let id = old.as_deref().map(opencode_id).unwrap_or_default();
        let path = self.dir.join(format!("{id}.json"));
        let quoted = crate::text::shell_quote(&path.display().to_string());
        let cli = crate::formats::opencode::command(written_by);
        // Kilo Code CLI's import gives the session the folder it runs in (the fixture
        // kilo.db, imported in /tmp/kfix, holds `directory` /tmp/kfix whatever its export
        // said), and Kilo's `<environment_details>` sends that folder: imported elsewhere,
        // the copy sends another directory than its preview shows.
        let resume_note = (written_by == Some(Fork::Kilo)).then(|| self.field("/info/directory")).flatten().map(|dir| {
            format!(
                "kilo import gives the session the folder it runs in: run it from {} so the copy sends the directory its preview shows",
                crate::text::shell_quote(&dir)
            )
        });
        Identity {
            resume: Some(format!("{cli} import {quoted} && {cli} --session {id}")),
            path,
            old_id: old,
            id: Some(id),
            resume_note,
        }
    }

    /// Cline CLI 3: `<data>/sessions/<id>/<id>.messages.json`; the copy is a
    /// task folder of its own beside the original's.
    fn cline_task(self) -> Identity {
        let sessions = self.above();
        // A path typed relative to the sessions folder (`X/X.messages.json`) names it too.
        let sessions = if sessions.as_os_str().is_empty() { PathBuf::from(".") } else { sessions };
        let sessions = std::path::absolute(&sessions).unwrap_or(sessions);
        let id = cline_id();
        Identity {
            path: sessions.join(&id).join(format!("{id}.messages.json")),
            old_id: self.field("/sessionId"),
            resume: Some(format!("cline --id {id}")),
            resume_note: (!in_folder(&sessions, "sessions", 0)).then(|| {
                format!(
                    "Cline resumes a task only from its data folder's sessions/ (~/.cline/data/sessions, or --data-dir's): move the folder {} there first",
                    sessions.join(&id).display()
                )
            }),
            id: Some(id),
        }
    }

    /// Cline's IDE (and CLI 2) task: `tasks/<id>/api_conversation_history.json`,
    /// found by its task id and these names only.
    fn cline_ide(self) -> Identity {
        let mended = crate::reader::mended_ui(self.src).map(|(_, n)| n);
        Identity { resume_note: Some(cline_task_note(mended)), ..self.beside() }
    }

    /// `<name>.repaired.<ext>` beside the original, with no id of its own.
    fn beside(&self) -> Identity {
        Identity {
            path: self.dir.join(format!("{}.repaired.{}", self.stem, self.ext)),
            id: None,
            old_id: None,
            resume: None,
            resume_note: None,
        }
    }
}

/// Whether `dir`, `up` folders above it, is named `name`: where an agent
/// finds the sessions it resumes by id.
fn in_folder(dir: &Path, name: &str, up: usize) -> bool {
    dir.ancestors().nth(up).and_then(Path::file_name).is_some_and(|n| n == name)
}

/// mux opens a workspace's history by one name in the workspace's folder.
const MUX_NOTE: &str = "mux reads a workspace's history only from the chat.jsonl in its session folder (~/.mux/sessions/<workspace>/, or under $MUX_ROOT): to resume the copy, stop mux, move the original elsewhere and put the copy in its place as chat.jsonl";

const PI_HARNESS_NOTE: &str = "a compaction here carries `retainedTail`, as pi-agent-core's agent harness writes it: resume the copy with the program that wrote it. The `pi` CLI reads such a file otherwise: it sends the entries from the compaction's `firstKeptEntryId` on, not the retained copies, so what was left out of those copies is sent again";

/// What to say of a copy holding `line` (as the copy reads it), where its
/// agent resumes such a line otherwise than the program that wrote it: a pi
/// compaction with `retainedTail` (see `formats::pi`), which the harness and
/// the `pi` CLI send differently. The copy is judged line by line as it is
/// written, so the session is not read again for this.
pub fn resume_note_for(format: Format, line: &[u8]) -> Option<&'static str> {
    let harness = format == Format::Pi
        && line.starts_with(br#"{"type":"compaction""#)
        && memchr::memmem::find(line, br#""retainedTail":["#).is_some();
    harness.then_some(PI_HARNESS_NOTE)
}

/// The history of a task of Cline's IDE extension and CLI 2.
const CLINE_HISTORY: &str = "api_conversation_history.json";

/// The name of the mended `ui_messages.json` beside a Cline task's copy.
const CLINE_UI_COPY: &str = "ui_messages.repaired.json";

/// How to resume a Cline task's copy: Cline reads a task from its folder under
/// fixed names, so the copy (and the mended UI record, when `mended` messages
/// were left out of it) must take the originals' places.
fn cline_task_note(mended: Option<usize>) -> String {
    match mended {
        None => "Cline resumes a task only from its own folder, under the name api_conversation_history.json: to resume the copy, move the original elsewhere and put the copy in its place".into(),
        Some(n) => format!(
            "Cline resumes a task only from its own folder, under the names api_conversation_history.json and ui_messages.json: to resume the copy, move those two originals elsewhere and put the copy and {CLINE_UI_COPY} in their places. {CLINE_UI_COPY} leaves out {n} of the task's messages, the `ask: \"api_req_failed\"` and `say: \"error\"` ones: `cline -T` stops the resumed task at the first it finds (Cline issue 9948), and Cline only shows them, never sends them to the model"
        ),
    }
}

/// A Cline CLI 3 task id as Cline makes them: milliseconds since the epoch,
/// `_`, five base-36 characters.
fn cline_id() -> String {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let tail: String =
        uuid::Uuid::new_v4().as_bytes()[..5].iter().map(|b| digits[usize::from(*b) % 36] as char).collect();
    format!("{ms}_{tail}")
}

/// Files the agent needs beside the copy, with their bytes: Cline's IDE task
/// the mended `ui_messages.json` (see `cline_task_note`); Cline CLI 3 finds
/// a task by its manifest `<id>.json` (without one, `cline --id` starts an
/// empty task under that id and writes over the copy), so the copy gets the
/// original's manifest under its own id and path.
pub fn companions(format: Format, id: &Identity, src: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    // Cline's IDE task: its UI record without the failure messages that stop its resume.
    if format == Format::Cline && src.file_name().is_some_and(|n| n == CLINE_HISTORY) {
        let (Some((bytes, _)), Some(dir)) = (crate::reader::mended_ui(src), id.path.parent()) else {
            return Vec::new();
        };
        return vec![(dir.join(CLINE_UI_COPY), bytes)];
    }
    if let (Format::Kiro, Some(new), Some(old)) = (format, id.id.as_deref(), id.old_id.as_deref()) {
        return kiro_metadata(src, &id.path, old, new).into_iter().collect();
    }
    let (Format::Cline, Some(new), Some(old)) = (format, id.id.as_deref(), id.old_id.as_deref()) else {
        return Vec::new();
    };
    let Some(manifest) = src.parent().map(|d| d.join(format!("{old}.json"))) else { return Vec::new() };
    let Ok(text) = std::fs::read(&manifest) else { return Vec::new() };
    let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(&text) else { return Vec::new() };
    let Some(m) = v.as_object_mut() else { return Vec::new() };
    m.insert("session_id".into(), new.into());
    // Cline reads the history from this path, and finds none where it names no
    // file: the copy's, absolute; for a copy written outside a sessions folder
    // (to be moved there first), where it will sit in the original's.
    if let Some(old_path) = m.get("messages_path").and_then(|p| p.as_str()).map(PathBuf::from) {
        let here = std::path::absolute(&id.path).unwrap_or_else(|_| id.path.clone());
        let in_sessions = here.parent().and_then(Path::parent).is_some_and(|d| d.ends_with("sessions"));
        let theirs = old_path.parent().and_then(Path::parent).filter(|d| d.is_absolute());
        let copy = match theirs {
            Some(d) if !in_sessions => d.join(new).join(format!("{new}.messages.json")),
            _ => here,
        };
        m.insert("messages_path".into(), copy.display().to_string().into());
    }
    let Some(dir) = id.path.parent() else { return Vec::new() };
    let mut bytes = serde_json::to_vec_pretty(&v).unwrap_or_default();
    bytes.push(b'\n');
    vec![(dir.join(format!("{new}.json")), bytes)]
}

/// Kiro CLI's metadata of the copy: the original's `<old>.json` with the new
/// id as `session_id` and as the model state's `conversation_id`, beside the
/// copy. `None` when the original has none that parses (the copy is then a
/// transcript Kiro does not list, which the copy's resume note says).
fn kiro_metadata(src: &Path, copy: &Path, old: &str, new: &str) -> Option<(PathBuf, Vec<u8>)> {
    let text = std::fs::read(src.parent()?.join(format!("{old}.json"))).ok()?;
    let mut v = serde_json::from_slice::<serde_json::Value>(&text).ok()?;
    v.as_object_mut()?.insert("session_id".into(), new.into());
    if let Some(rts) = v.pointer_mut("/session_state/rts_model_state").and_then(serde_json::Value::as_object_mut)
        && rts.contains_key("conversation_id")
    {
        rts.insert("conversation_id".into(), new.into());
    }
    let mut bytes = serde_json::to_vec_pretty(&v).ok()?;
    bytes.push(b'\n');
    Some((copy.parent()?.join(format!("{new}.json")), bytes))
}

/// Where Codex finds the copy. `codex resume ID` looks only under its sessions
/// folder (`$CODEX_HOME/sessions/YYYY/MM/DD/`; 0.171.0 answers "no rollout found
/// for thread id" for a rollout elsewhere, and takes a path for a new prompt), so
/// a copy written outside it is resumed only once moved there.
fn codex_resume(path: &Path, src: &Path, id: &str) -> (String, Option<String>) {
    let in_sessions = |p: &Path| p.ancestors().any(|a| a.file_name().is_some_and(|n| n == "sessions"));
    let plain = format!("codex resume {id}");
    if in_sessions(path) {
        return (plain, None);
    }
    let quote = |p: &Path| crate::text::shell_quote(&p.display().to_string());
    match src.parent().filter(|d| in_sessions(d)) {
        Some(beside) => (
            format!("mv {} {}/ && {plain}", quote(path), quote(beside)),
            Some(format!(
                "Codex resumes a session only from its sessions folder: the copy is outside it, so the command moves it beside the original ({}) first",
                beside.display()
            )),
        ),
        None => (
            plain,
            Some("Codex resumes a session only from its sessions folder: move the copy into $CODEX_HOME/sessions/YYYY/MM/DD/ (by default ~/.codex/sessions/…) first".into()),
        ),
    }
}

/// A fresh opencode id for `old` (`ses_`, `msg_`, `prt_` + 12 hex of time + 14
/// random base62): the time part is kept, so the copy's messages and parts sort
/// as the original's do; the random part is new.
fn opencode_id(old: &str) -> String {
    const B62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let keep = old.len().saturating_sub(14).max(4).min(old.len());
    let bytes = uuid::Uuid::new_v4().into_bytes();
    let tail: String = bytes.iter().take(old.len() - keep).map(|b| B62[usize::from(*b) % B62.len()] as char).collect();
    format!("{}{tail}", &old[..keep])
}

/// Every opencode id in an export (the session's, its messages' and parts'), as
/// edits to fresh ones: each id the same new id wherever it appears. An id is
/// opencode's when the export gives something that `id`; a string that only
/// looks like one is left as it is: the `msg_…` item id OpenAI gave a reply,
/// which opencode keeps in a part's `metadata.openai.itemId`.
fn opencode_ids(text: &[u8]) -> Vec<splice::Edit> {
    let candidates = opencode_id_strings(text);
    let own: std::collections::HashSet<&[u8]> =
        candidates.iter().filter(|c| c.is_id).map(|c| &text[c.at + 1..c.at + 1 + c.len]).collect();
    let mut fresh: std::collections::HashMap<&[u8], String> = std::collections::HashMap::new();
    let mut edits = Vec::new();
    for c in &candidates {
        let id = &text[c.at + 1..c.at + 1 + c.len];
        if own.contains(id) {
            let new = fresh.entry(id).or_insert_with(|| opencode_id(std::str::from_utf8(id).unwrap_or_default()));
            edits.push(splice::Edit { range: c.at..c.at + c.len + 2, with: format!("\"{new}\"") });
        }
    }
    edits
}

/// A JSON string shaped as an opencode id (`ses_`, `msg_`, `prt_`): where its
/// opening quote is, its length, and whether it is the value of an `"id"` key.
struct IdString {
    at: usize,
    len: usize,
    is_id: bool,
}

fn opencode_id_strings(text: &[u8]) -> Vec<IdString> {
    let mut out = Vec::new();
    let mut i = 0;
    // Where the last key ended, and whether it was `"id"`.
    let mut key_is_id = false;
    while let Some(at) = memchr::memchr(b'"', &text[i..]).map(|k| i + k) {
        let body = &text[at + 1..];
        let len = body.iter().position(|b| !b.is_ascii_alphanumeric() && *b != b'_').unwrap_or(body.len());
        let id = &body[..len];
        let closed = body.get(len) == Some(&b'"');
        // A value follows its key's colon (whitespace aside).
        let value = text[..at].iter().rev().find(|b| !b.is_ascii_whitespace()) == Some(&b':');
        if closed && len > 4 && [&b"ses_"[..], b"msg_", b"prt_"].iter().any(|p| id.starts_with(p)) {
            out.push(IdString { at, len, is_id: value && key_is_id });
            i = at + len + 2;
            continue;
        }
        // Past this string (escapes included), to the next one.
        let mut k = at + 1;
        while k < text.len() && text[k] != b'"' {
            k += if text[k] == b'\\' { 2 } else { 1 };
        }
        key_is_id = !value && &text[at + 1..k.min(text.len())] == b"id";
        i = (k + 1).min(text.len());
    }
    out
}

/// The edits that write the new id into one record, where `format` keeps it.
pub fn edit(format: Format, id: &Identity, line: &[u8], first: bool) -> Vec<splice::Edit> {
    if format == Format::Opencode && id.id.is_some() {
        let mut edits = opencode_ids(line);
        // The session's own id is the one the identity chose (the resume command names it).
        if let (Some(old), Some(new)) = (&id.old_id, &id.id) {
            let (old, new) = (format!("\"{old}\""), format!("\"{new}\""));
            for e in edits.iter_mut().filter(|e| line[e.range.clone()] == *old.as_bytes()) {
                e.with.clone_from(&new);
            }
        }
        return edits;
    }
    let Some(new) = id.id.as_deref() else { return Vec::new() };
    let pointers: Vec<&str> = match format {
        // Every line names its session.
        Format::ClaudeCode | Format::QwenCode => vec!["/sessionId"],
        // 0.171.0 names the session twice in its `session_meta`.
        Format::Codex if first => vec!["/payload/id", "/payload/session_id"],
        Format::Pi if first => vec!["/id"],
        Format::Copilot if first => vec!["/data/sessionId"],
        Format::GeminiCli => gemini_cli_pointer(line, first).into_iter().collect(),
        Format::Cline => vec!["/sessionId", "/origin/sessionId"],
        _ => return Vec::new(),
    };
    pointers
        .iter()
        .filter_map(|pointer| {
            let range = splice::locate(line, pointer)?;
            let old: String = serde_json::from_slice(&line[range.clone()]).ok()?;
            (id.old_id.as_deref().is_none_or(|o| o == old)).then(|| splice::Edit { range, with: format!("\"{new}\"") })
        })
        .collect()
}

/// Where a Gemini CLI line names its session. The CLI takes the last name it
/// reads: every metadata line (a start in the same minute appends a second one
/// to the same file) and every `{"$set":{"sessionId":…}}` (written on resume),
/// not only the first line, or it resumes the copy as the original.
fn gemini_cli_pointer(line: &[u8], first: bool) -> Option<&'static str> {
    if splice::locate(line, "/$set/sessionId").is_some() {
        return Some("/$set/sessionId");
    }
    (first || splice::locate(line, "/projectHash").is_some()).then_some("/sessionId")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Before, every string shaped as an opencode id was renamed, OpenAI's
    /// `msg_` item id too: a copy under `store: true` then referenced an item
    /// no provider ever had.
    #[test]
    fn only_the_ids_the_export_gives_are_renamed() {
        let text = br#"{"info":{"id":"ses_1a2b3c4d5e6f7"},"messages":[{"info":{"id":"msg_1a2b3c4d5e6f8","sessionID":"ses_1a2b3c4d5e6f7"},
            "parts":[{"type":"text","text":"msg_1a2b3c4d5e6f8","metadata":{"openai":{"itemId":"msg_5be687de7531"}},"id":"prt_1a2b3c4d5e6f9","messageID":"msg_1a2b3c4d5e6f8"}]}]}"#;
        let out = String::from_utf8(splice::apply(text, &opencode_ids(text))).unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let (m, p) = (&v["messages"][0], &v["messages"][0]["parts"][0]);
        assert_eq!(p["metadata"]["openai"]["itemId"], "msg_5be687de7531", "{out}");
        assert_ne!(m["info"]["id"], "msg_1a2b3c4d5e6f8");
        assert_eq!(
            (&m["info"]["id"], &p["messageID"], &p["text"]),
            (&p["messageID"], &m["info"]["id"], &m["info"]["id"])
        );
        assert_eq!(m["info"]["sessionID"], v["info"]["id"]);
        assert!(v["info"]["id"].as_str().unwrap().starts_with("ses_") && v["info"]["id"] != "ses_1a2b3c4d5e6f7");
        assert!(p["id"].as_str().unwrap().starts_with("prt_") && p["id"] != "prt_1a2b3c4d5e6f9");
    }
}
