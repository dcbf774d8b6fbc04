//! opencode's stores (stub).
use super::Options;
use std::path::Path;
pub struct Store {
    pub lines: std::sync::Arc<Vec<u8>>,
    pub note: Option<String>,
    pub session: String,
}
pub fn open(_path: &Path, _opts: &Options) -> anyhow::Result<Option<Store>> {
    Ok(None)
}
