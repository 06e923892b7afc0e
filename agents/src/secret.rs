//! A wrapper for API keys and passwords: `Debug` and `Display` never print the value, so a
//! secret cannot reach a log line or a page by accident.

#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }
    /// The value, for the one place that must send it (an HTTP header).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret([REDACTED])")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[REDACTED]")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn secrets_never_print() {
        let s = super::Secret::new("sk-very-secret");
        assert!(!format!("{s:?} {s}").contains("very-secret"));
        assert_eq!(s.expose(), "sk-very-secret");
    }
}
