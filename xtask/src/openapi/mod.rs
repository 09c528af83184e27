//! The one OpenAPI 3.0 model of xtask, shared by [`crate::inventory`],
//! [`crate::lint`] and [`crate::diff`].
//!
//! * [`read`](read::read) is a tolerant reader: YAML keys become strings,
//!   parts that are optional in practice are defaulted, and what still cannot
//!   be understood is dropped with a [`Warning`] naming its JSON pointer, so
//!   the rest of the document can be used.
//! * [`Document::operations`] lists the typed operations (the only list of
//!   HTTP methods in xtask is [`METHODS`]).
//! * [`Document::resolve`] follows `$ref` chains for every component kind;
//!   [`resolve::unwrap_wrappers`] is the one rule for single-member
//!   `allOf`/`oneOf`/`anyOf` wrappers around a value.

pub mod document;
pub mod read;
pub mod resolve;

pub use document::*;
pub use read::read;
pub use resolve::{Component, Meta, Resolved, SchemaRef, unwrap_wrappers, wrapped_reference};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_erase_parameter_names() {
        assert_eq!(route_of("/a/{id}/b/{x}"), "/a/{}/b/{}");
        assert_eq!(escape("/a~b"), "~1a~0b");
    }

    #[test]
    fn operations_come_in_document_then_method_order() {
        let doc = read(
            "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /b:\n    post: {responses: {}}\n    get: {responses: {}}\n  /a:\n    delete: {responses: {}}\n",
        )
        .unwrap();
        let labels: Vec<String> = doc.operations().iter().map(Op::label).collect();
        assert_eq!(labels, ["GET /b", "POST /b", "DELETE /a"]);
    }

    #[test]
    fn operation_parameters_override_path_parameters() {
        let doc = read(
            "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    parameters:\n      - {name: q, in: query, schema: {type: string}}\n      - {$ref: '#/components/parameters/P'}\n    get:\n      parameters:\n        - {name: q, in: query, required: true, schema: {type: string}}\n      responses: {}\ncomponents:\n  parameters:\n    P: {$ref: '#/components/parameters/Q'}\n    Q: {name: h, in: header, schema: {type: string}}\n",
        )
        .unwrap();
        let ops = doc.operations();
        let params = doc.parameters(&ops[0]);
        let shown: Vec<(String, bool, Option<&str>, &str)> = params
            .iter()
            .map(|p| {
                let data = p.param.parameter_data_ref();
                (
                    data.name.clone(),
                    data.required,
                    p.component,
                    p.pointer.as_str(),
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("h".to_owned(), false, Some("Q"), "#/paths/~1a/parameters/1"),
                ("q".to_owned(), true, None, "#/paths/~1a/get/parameters/0"),
            ]
        );
    }
}
