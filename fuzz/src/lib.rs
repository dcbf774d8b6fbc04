//! The fuzz targets' bodies live in `targets.rs`, shared with `tests/it/fuzz_corpus.rs`
//! (which replays every committed corpus file in `cargo test`).
pub mod targets;
#[path = "../../tests/common/wrap.rs"]
pub mod wrap;
