//! Streaming line reader.
