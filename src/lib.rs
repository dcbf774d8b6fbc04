//! session-doctor: read a coding agent's session, find what a provider rejects in it,
//! and get the user going again without ever modifying the original history.
//!
//! The pipeline is `reader` (stream lines) → `formats` (one adapter per agent, into
//! `model`) → `media` (validate bytes) / `classify` (provider errors) → `report`.

pub mod alias;
pub mod atomic;
pub mod check;
pub mod classify;
pub mod cli;
pub mod clock;
pub mod codes;
pub mod contain;
pub mod diagnose;
pub mod discover;
pub mod exit;
pub mod file;
pub mod fit;
pub mod formats;
pub mod guard;
pub mod history;
pub mod json;
pub mod media;
pub mod model;
pub mod overlay;
pub mod preview;
pub mod provider;
pub mod proxy;
pub mod reader;
pub mod repair;
pub mod report;
pub mod request;
pub mod rewrite;
pub mod text;
