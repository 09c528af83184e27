//! A batch's request body: its conversions in the request shape of its method
//! (the spec's `ConversionInsertList` or `ConversionUpdateList`), built once as
//! the rows join the batch, each conversion's text moved rather than copied,
//! and serialized again for each attempt.

use sa360_v2_client::types;

use super::super::conversion::Conversion;
use super::super::wire;
use super::kind::WriteKind;

/// The conversions of a batch in the request shape of its method.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Body {
    Insert(types::ConversionInsertList),
    Update(types::ConversionUpdateList),
}

impl Body {
    /// An empty body of `kind`'s method.
    pub(crate) fn new(kind: WriteKind) -> Self {
        match kind {
            WriteKind::Insert => Body::Insert(types::ConversionInsertList {
                conversion: Vec::new(),
                kind: None,
            }),
            WriteKind::Update => Body::Update(types::ConversionUpdateList {
                conversion: Vec::new(),
                kind: None,
            }),
        }
    }

    /// Conversions in the body.
    pub(crate) fn len(&self) -> usize {
        match self {
            Body::Insert(list) => list.conversion.len(),
            Body::Update(list) => list.conversion.len(),
        }
    }

    /// Appends `c` (checked before: a conversion an insert or update refuses
    /// never gets here); the error names a required member it lacks.
    pub(crate) fn push(&mut self, c: Conversion) -> Result<(), String> {
        match self {
            Body::Insert(list) => list.conversion.push(wire::conversion_into_insert(c)?),
            Body::Update(list) => list.conversion.push(wire::conversion_into_update(c)?),
        }
        Ok(())
    }
}
