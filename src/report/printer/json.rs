//! `--json` and `--output-format json`: the result's stable schema, pretty-printed.
//!
//! Every object a `--json` output prints at its top level carries
//! `schema_version` ([`SCHEMA_VERSION`]), first; an output that is an array
//! (`sessions`, `guard`, `scan` over several files) carries it in each element.
//! `session-doctor schema <command>` prints the JSON Schema of each.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;

use super::Printer;

/// The version of the `--json` schemas: raised only when a field is renamed,
/// removed or changes type (with a major version of session-doctor); a field
/// added leaves it as it is.
pub const SCHEMA_VERSION: u32 = 1;

/// `inner`'s fields after `schema_version`.
#[derive(Serialize)]
pub struct Versioned<'a, T: ?Sized + Serialize> {
    schema_version: u32,
    #[serde(flatten)]
    inner: &'a T,
}

/// `inner` (a struct or map) with `schema_version` first.
pub fn versioned<T: ?Sized + Serialize>(inner: &T) -> Versioned<'_, T> {
    Versioned { schema_version: SCHEMA_VERSION, inner }
}

/// A result built as a JSON value: `schema_version` in the object, or in each
/// object of an array.
pub fn version_value(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.insert("schema_version".into(), SCHEMA_VERSION.into());
        }
        Value::Array(items) => items.iter_mut().for_each(version_value),
        _ => {}
    }
}

/// Prints any serializable result (a struct or map) as one pretty JSON document
/// with its `schema_version`, and a newline.
#[derive(Clone, Copy, Debug, Default)]
pub struct Json;

impl Json {
    /// An array output: each element versioned.
    pub fn print_each<T: Serialize>(&self, out: &mut dyn Write, items: &[T]) -> io::Result<()> {
        let each: Vec<Versioned<'_, T>> = items.iter().map(versioned).collect();
        serde_json::to_writer_pretty(&mut *out, &each)?;
        writeln!(out)
    }
}

impl<R: Serialize + ?Sized> Printer<R> for Json {
    fn print(&self, out: &mut dyn Write, results: &R) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, &versioned(results))?;
        writeln!(out)
    }
}
