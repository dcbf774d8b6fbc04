//! Everything that turns results into bytes for a person or a machine.

mod sanitize;

pub use sanitize::sanitize;
