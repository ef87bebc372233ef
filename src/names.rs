//! Names a workload gives and claimbench ships, checked the same way wherever they
//! are declared: the shipped index layouts, the rule for a declared strategy's or
//! layout's name, and the one place a declared name becomes `'static`. It sits at the
//! bottom of the house, so that `strategy` and `custom_layout` check names without
//! importing `workload`, which imports them.

/// The index layouts every backend ships; the files live in `migrations/<backend>/indexes/`.
pub const INDEX_LAYOUTS: [&str; 4] = [
    "pk-only",
    "status-created",
    "fetch-order",
    "pending-partial",
];

/// Letters, digits, `-` and `_`, at least one: the names a workload gives (itself,
/// blocks, declared strategies and layouts), safe in file names and run ids.
pub fn is_plain_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Checks the name a workload declares a strategy or layout under: not one claimbench
/// ships (`shipped_as` says what it is, e.g. "a built-in strategy"), and plain.
pub fn check_declared_name(name: &str, kind: &str, shipped_as: Option<&str>) -> Result<(), String> {
    if let Some(what) = shipped_as {
        return Err(format!("`{name}` is {what}; give yours another name"));
    }
    if !is_plain_name(name) {
        return Err(format!(
            "`{name}` is not a {kind} name; use letters, digits, `-` and `_`"
        ));
    }
    Ok(())
}

/// A declared name or text as `'static`: declared strategies and layouts live as long as
/// the process (the registries hand out `&'static` definitions), a handful per run.
pub fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}
