//! Errors as a test shows them.

/// The error and its whole source chain, joined with ": ".
#[must_use]
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use super::error_chain;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|l| l as _)
        }
    }

    #[test]
    fn joins_every_source() {
        let error = Layer(
            "outer",
            Some(Box::new(Layer(
                "middle",
                Some(Box::new(Layer("inner", None))),
            ))),
        );
        assert_eq!(error_chain(&error), "outer: middle: inner");
    }
}
