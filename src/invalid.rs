//! Why a value is refused: the sentence a person reads after the file and field, the
//! flag or the URL it came from. The checks of names, settings, thresholds, addresses,
//! declared statements and layouts return it rather than a bare `String`, so a refusal is
//! a type of its own that `?` carries into the caller's error (a workload's file and
//! field, a command's flag) and that can be told apart from any other text.

/// A refusal, as the sentence that says what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

impl From<String> for Invalid {
    fn from(message: String) -> Invalid {
        Invalid(message)
    }
}

impl From<&str> for Invalid {
    fn from(message: &str) -> Invalid {
        Invalid(message.to_string())
    }
}

/// A caller that builds its own message around the refusal (`file: field: …`) takes it
/// as text.
impl From<Invalid> for String {
    fn from(i: Invalid) -> String {
        i.0
    }
}

/// `Invalid(format!(…))`.
#[macro_export]
macro_rules! invalid {
    ($($t:tt)*) => {
        $crate::invalid::Invalid(format!($($t)*))
    };
}

/// Read as the sentence it is (a test looks for a word in it; a caller for its file).
impl std::ops::Deref for Invalid {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}
