//! A borrowed JSON value.
