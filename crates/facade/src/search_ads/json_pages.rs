//! Property-test strategies for JSON pages, shared by the tests of the two page decoders (the v2
//! read's `read/page.rs` and the report's `reporting/decode.rs`): objects whose members may be
//! absent or unknown, and values of any JSON type.

use proptest::prelude::*;
use serde_json::Value;

/// One member of a generated object; `None` when it is absent.
pub(crate) type Member = Option<(String, Value)>;

/// Members the spec does not have (ignored by both decoders), with any JSON value; the keys of
/// nested objects come from `key`.
pub(crate) fn unknown_members(key: BoxedStrategy<String>) -> BoxedStrategy<Vec<(String, Value)>> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "[a-z\"\\\\é]{0,6}".prop_map(Value::from),
    ];
    let value = leaf.prop_recursive(2, 8, 3, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::vec((key.clone(), inner), 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    prop::collection::vec(("unknown[A-Za-z]{0,5}", value), 0..2).boxed()
}

/// An object of the present `members`, followed by the `unknown` ones.
pub(crate) fn object(
    members: Vec<BoxedStrategy<Member>>,
    unknown: BoxedStrategy<Vec<(String, Value)>>,
) -> BoxedStrategy<Value> {
    (members, unknown)
        .prop_map(|(members, unknown)| {
            Value::Object(members.into_iter().flatten().chain(unknown).collect())
        })
        .boxed()
}

/// One of `values`, as JSON text.
pub(crate) fn one_of(values: &'static [&'static str]) -> BoxedStrategy<Value> {
    prop::sample::select(values).prop_map(Value::from).boxed()
}
