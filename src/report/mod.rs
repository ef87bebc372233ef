//! Renderers from a `RunResult` alone. Each output format is its own module.

pub mod summary;
