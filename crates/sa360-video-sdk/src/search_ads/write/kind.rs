//! Insert or update: the one difference the write modules branch on.

/// Insert or update: what is required and whether a duplicate counts as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteKind {
    Insert,
    Update,
}

impl WriteKind {
    pub(crate) fn operation(self) -> &'static str {
        match self {
            WriteKind::Insert => "conversion.insert",
            WriteKind::Update => "conversion.update",
        }
    }

    pub(crate) fn verb(self) -> &'static str {
        match self {
            WriteKind::Insert => "insert",
            WriteKind::Update => "update",
        }
    }
}
