//! One fixture case per rule, and the walk's invariants.

use super::differ::*;
use super::*;
use crate::diff::rules::{self as r, Class, RULES};
use crate::openapi::{Document, read};

/// A small spec exercising both directions: `Thing` only in responses,
/// `ThingInput` (closed) and `Color` only in requests, `Kind` in both.
pub(super) const BASE: &str = r##"
openapi: 3.0.3
info: {title: T, version: "1"}
security: [{key: []}]
paths:
  /things/{id}:
    get:
      operationId: getThing
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: limit, in: query, required: false, schema: {type: integer, format: int32, minimum: 1, maximum: 100}}
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Thing"}}}}
        4XX: {description: e, content: {application/json: {schema: {$ref: "#/components/schemas/Error"}}}}
    put:
      operationId: putThing
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: "#/components/schemas/ThingInput"}}}
      responses:
        "204": {description: done}
        4XX: {description: e, content: {application/json: {schema: {$ref: "#/components/schemas/Error"}}}}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Key}
  schemas:
    Thing:
      type: object
      required: [id]
      properties:
        id: {type: string}
        kind: {$ref: "#/components/schemas/Kind"}
        size: {type: integer, format: int32}
        note: {nullable: true, allOf: [{$ref: "#/components/schemas/Note"}]}
        tags: {type: array, items: {type: string}}
        parent: {$ref: "#/components/schemas/Thing"}
    ThingInput:
      type: object
      additionalProperties: false
      required: [name]
      properties:
        name: {type: string, maxLength: 10}
        kind: {$ref: "#/components/schemas/Kind"}
        color: {$ref: "#/components/schemas/Color"}
    Kind: {type: string, enum: [a, b, c]}
    Color: {type: string, enum: [red, green]}
    Note: {type: string}
    Error: {type: object, properties: {message: {type: string}}}
"##;

/// One row per rule: the edits to `BASE` and the class the rule's change
/// must get.
struct Case {
    rule: &'static str,
    /// Edits to `BASE` giving the base side (usually none).
    base: &'static [(&'static str, &'static str)],
    /// Edits to `BASE` giving the new side.
    edits: &'static [(&'static str, &'static str)],
    class: Class,
}

use Class::{Clients, ClientsAndServers as Both, Compatible, Servers, Warning};

const DONE: &str = "\"204\": {description: done}";
const LINKED: &str = "\"204\": {description: done, links: {get: {operationId: getThing, parameters: {id: \"$request.path.id\"}}}}";
const CALLBACK: &str = "      operationId: putThing\n      callbacks:\n        done:\n          \"{$request.body#/url}\":\n            post:\n              parameters:\n                - {name: attempt, in: query, schema: {type: integer}}\n              requestBody: {content: {application/json: {schema: {type: string, enum: [ok, failed]}}}}\n              responses: {\"204\": {description: ok}}\n";
const PUT_BODY: &str =
    "content: {application/json: {schema: {$ref: \"#/components/schemas/ThingInput\"}}}";
const MULTIPART_TEXT: &str = "content: {multipart/form-data: {schema: {$ref: \"#/components/schemas/ThingInput\"}, encoding: {name: {contentType: text/plain}}}}";
const MULTIPART_JSON: &str = "content: {multipart/form-data: {schema: {$ref: \"#/components/schemas/ThingInput\"}, encoding: {name: {contentType: application/json}}}}";
const GET_LIMIT: &str = "        - {name: limit, in: query, required: false, schema: {type: integer, format: int32, minimum: 1, maximum: 100}}\n";
pub(super) const NAME: &str = "name: {type: string, maxLength: 10}";
pub(super) const SIZE: &str = "size: {type: integer, format: int32}";
const NOTE: &str = "note: {nullable: true, allOf: [{$ref: \"#/components/schemas/Note\"}]}";
const ONE_OF_2: &str = "note: {oneOf: [{$ref: \"#/components/schemas/Note\"}, {type: integer}]}";
const ONE_OF_3: &str =
    "note: {oneOf: [{$ref: \"#/components/schemas/Note\"}, {type: integer}, {type: boolean}]}";
const PUT_OP: &str = "    put:\n      operationId: putThing\n      parameters:\n        - {name: id, in: path, required: true, schema: {type: string}}\n      requestBody:\n        required: true\n        content: {application/json: {schema: {$ref: \"#/components/schemas/ThingInput\"}}}\n      responses:\n        \"204\": {description: done}\n        4XX: {description: e, content: {application/json: {schema: {$ref: \"#/components/schemas/Error\"}}}}\n";

#[rustfmt::skip]
    const CASES: &[Case] = &[
        Case { base: &[], rule: "operation-removed", edits: &[(PUT_OP, "")], class: Clients },
        Case { base: &[], rule: "operation-added", edits: &[("paths:\n", "paths:\n  /ping:\n    get:\n      operationId: ping\n      responses: {\"204\": {description: ok}}\n")], class: Compatible },
        Case { base: &[], rule: "operation-id-changed", edits: &[("operationId: getThing", "operationId: fetchThing")], class: Compatible },
        Case { base: &[], rule: "operation-route-changed", edits: &[("/things/{id}:", "/items/{id}:")], class: Both },
        Case { base: &[], rule: "deprecated", edits: &[("      operationId: getThing\n", "      operationId: getThing\n      deprecated: true\n")], class: Compatible },
        Case { base: &[("Note: {type: string}", "Note: {type: string, deprecated: true}")], rule: "undeprecated", edits: &[], class: Compatible },
        Case { base: &[], rule: "security-tightened", edits: &[("security: [{key: []}]", "security: [{key: [admin]}]")], class: Warning },
        Case { base: &[], rule: "security-relaxed", edits: &[("security: [{key: []}]", "security: [{key: []}, {}]")], class: Servers },
        Case { base: &[], rule: "security-scheme-changed", edits: &[("name: X-Key}", "name: X-Api-Key}")], class: Both },
        Case { base: &[("    key: {type: apiKey, in: header, name: X-Key}\n", "    key: {type: apiKey, in: header, name: X-Key}\n    oauth: {type: oauth2, flows: {implicit: {authorizationUrl: \"https://a.example/auth\", scopes: {read: r}}}}\n")], rule: "security-flows-changed", edits: &[("    key: {type: apiKey, in: header, name: X-Key}\n", "    key: {type: apiKey, in: header, name: X-Key}\n    oauth: {type: oauth2, flows: {implicit: {authorizationUrl: \"https://b.example/auth\", scopes: {read: r}}}}\n")], class: Warning },
        Case { base: &[], rule: "parameter-added", edits: &[(GET_LIMIT, "        - {name: limit, in: query, required: false, schema: {type: integer, format: int32, minimum: 1, maximum: 100}}\n        - {name: q, in: query, schema: {type: string}}\n")], class: Compatible },
        Case { base: &[], rule: "parameter-added-required", edits: &[(GET_LIMIT, "        - {name: limit, in: query, required: false, schema: {type: integer, format: int32, minimum: 1, maximum: 100}}\n        - {name: q, in: query, required: true, schema: {type: string}}\n")], class: Clients },
        Case { base: &[], rule: "parameter-removed", edits: &[(GET_LIMIT, "")], class: Warning },
        Case { base: &[], rule: "parameter-renamed", edits: &[("/things/{id}:", "/things/{thingId}:"), ("{name: id, in: path", "{name: thingId, in: path"), ("{name: id, in: path", "{name: thingId, in: path")], class: Compatible },
        Case { base: &[], rule: "parameter-became-required", edits: &[("name: limit, in: query, required: false", "name: limit, in: query, required: true")], class: Clients },
        Case { base: &[("name: limit, in: query, required: false", "name: limit, in: query, required: true")], rule: "parameter-became-optional", edits: &[], class: Servers },
        Case { base: &[], rule: "request-body-added", edits: &[("      operationId: getThing\n", "      operationId: getThing\n      requestBody: {content: {application/json: {schema: {type: string}}}}\n")], class: Compatible },
        Case { base: &[], rule: "request-body-added-required", edits: &[("      operationId: getThing\n", "      operationId: getThing\n      requestBody: {required: true, content: {application/json: {schema: {type: string}}}}\n")], class: Clients },
        Case { base: &[], rule: "request-body-removed", edits: &[("      requestBody:\n        required: true\n        content: {application/json: {schema: {$ref: \"#/components/schemas/ThingInput\"}}}\n", "")], class: Clients },
        Case { base: &[("      requestBody:\n        required: true\n", "      requestBody:\n        required: false\n")], rule: "request-body-became-required", edits: &[], class: Clients },
        Case { base: &[], rule: "request-body-became-optional", edits: &[("      requestBody:\n        required: true\n", "      requestBody:\n        required: false\n")], class: Servers },
        Case { base: &[], rule: "response-added", edits: &[("        \"204\": {description: done}\n", "        \"204\": {description: done}\n        \"202\": {description: accepted}\n")], class: Compatible },
        Case { base: &[], rule: "response-success-removed", edits: &[("        \"204\": {description: done}\n", "        \"200\": {description: done}\n")], class: Both },
        Case { base: &[], rule: "response-removed", edits: &[("        \"204\": {description: done}\n        4XX: {description: e, content: {application/json: {schema: {$ref: \"#/components/schemas/Error\"}}}}\n", "        \"204\": {description: done}\n")], class: Servers },
        Case { base: &[], rule: "response-body-added", edits: &[("\"204\": {description: done}", "\"204\": {description: done, content: {application/json: {schema: {type: string}}}}")], class: Compatible },
        Case { base: &[], rule: "response-body-removed", edits: &[("4XX: {description: e, content: {application/json: {schema: {$ref: \"#/components/schemas/Error\"}}}}\n    put:", "4XX: {description: e}\n    put:")], class: Clients },
        Case { base: &[], rule: "media-type-added", edits: &[("content: {application/json: {schema: {$ref: \"#/components/schemas/ThingInput\"}}}", "content: {application/json: {schema: {$ref: \"#/components/schemas/ThingInput\"}}, application/x-www-form-urlencoded: {schema: {$ref: \"#/components/schemas/ThingInput\"}}}")], class: Servers },
        Case { base: &[], rule: "media-type-added", edits: &[("\"200\": {description: ok, content: {application/json:", "\"200\": {description: ok, content: {application/xml: {schema: {type: string}}, application/json:")], class: Compatible },
        Case { base: &[], rule: "media-type-removed", edits: &[("\"200\": {description: ok, content: {application/json:", "\"200\": {description: ok, content: {application/xml:")], class: Both },
        Case { base: &[], rule: "media-type-specialized", edits: &[("\"200\": {description: ok, content: {application/json:", "\"200\": {description: ok, content: {application/vnd.thing+json:")], class: Servers },
        Case { base: &[("\"200\": {description: ok, content: {application/json:", "\"200\": {description: ok, content: {application/vnd.thing+json:")], rule: "media-type-generalized", edits: &[], class: Clients },
        Case { base: &[], rule: "media-type-specialized", edits: &[(PUT_BODY, "content: {application/json; charset=utf-8: {schema: {$ref: \"#/components/schemas/ThingInput\"}}}")], class: Clients },
        Case { base: &[], rule: "property-added", edits: &[(SIZE, "size: {type: integer, format: int32}\n        weight: {type: number}")], class: Compatible },
        Case { base: &[], rule: "property-added-to-closed-object", edits: &[(NAME, "name: {type: string, maxLength: 10}\n        extra: {type: string}")], class: Servers },
        Case { base: &[], rule: "property-added-required", edits: &[(NAME, "name: {type: string, maxLength: 10}\n        extra: {type: string}"), ("required: [name]", "required: [name, extra]")], class: Clients },
        Case { base: &[], rule: "property-removed", edits: &[("        tags: {type: array, items: {type: string}}\n", "")], class: Clients },
        Case { base: &[], rule: "property-became-required", edits: &[("required: [id]", "required: [id, size]")], class: Servers },
        Case { base: &[], rule: "property-became-optional", edits: &[("required: [id]", "required: []")], class: Clients },
        Case { base: &[], rule: "object-closed", edits: &[("Error: {type: object, properties", "Error: {type: object, additionalProperties: false, properties")], class: Servers },
        Case { base: &[], rule: "object-opened", edits: &[("      additionalProperties: false\n", "")], class: Servers },
        Case { base: &[], rule: "type-changed", edits: &[(SIZE, "size: {type: string}")], class: Both },
        Case { base: &[], rule: "format-narrowed", edits: &[("id: {type: string}", "id: {type: string, format: uuid}")], class: Servers },
        Case { base: &[], rule: "format-widened", edits: &[(SIZE, "size: {type: integer, format: int64}")], class: Clients },
        Case { base: &[("id: {type: string}", "id: {type: string, format: date}")], rule: "format-changed", edits: &[("id: {type: string}", "id: {type: string, format: uuid}")], class: Both },
        Case { base: &[], rule: "enum-narrowed", edits: &[("enum: [red, green]", "enum: [red]")], class: Clients },
        Case { base: &[], rule: "enum-widened", edits: &[("enum: [a, b, c]", "enum: [a, b, c, d]")], class: Both },
        Case { base: &[], rule: "bound-narrowed", edits: &[("maximum: 100", "maximum: 50")], class: Clients },
        Case { base: &[], rule: "bound-widened", edits: &[("maxLength: 10", "maxLength: 20")], class: Servers },
        Case { base: &[("Note: {type: string}", "Note: {type: string, pattern: \"^a\"}")], rule: "pattern-changed", edits: &[("Note: {type: string}", "Note: {type: string, pattern: \"^b\"}")], class: Warning },
        Case { base: &[("Note: {type: string}", "Note: {type: string, pattern: \"^a\"}")], rule: "pattern-removed", edits: &[("Note: {type: string}", "Note: {type: string, pattern: \".*\"}")], class: Warning },
        Case { base: &[(NAME, "name: {type: string, maxLength: 10, pattern: \"^a\"}")], rule: "pattern-removed", edits: &[], class: Servers },
        Case { base: &[(NOTE, ONE_OF_2)], rule: "discriminator-changed", edits: &[(NOTE, "note: {oneOf: [{$ref: \"#/components/schemas/Note\"}, {type: integer}], discriminator: {propertyName: kind}}")], class: Warning },
        Case { base: &[(NOTE, "note: {anyOf: [{$ref: \"#/components/schemas/Note\"}, {type: integer}]}")], rule: "composition-loosened", edits: &[(NOTE, "note: {anyOf: [{$ref: \"#/components/schemas/Note\"}, {type: integer}, {type: boolean}]}")], class: Warning },
        Case { base: &[], rule: "property-removed-from-closed-object", edits: &[("        color: {$ref: \"#/components/schemas/Color\"}\n", "")], class: Clients },
        Case { base: &[], rule: "parameter-default-changed", edits: &[("minimum: 1, maximum: 100}", "minimum: 1, maximum: 100, default: 10}")], class: Clients },
        Case { base: &[], rule: "constraint-changed", edits: &[("Error: {type: object, properties", "Error: {type: object, not: {required: [code]}, properties")], class: Both },
        Case { base: &[], rule: "property-became-write-only", edits: &[("id: {type: string}", "id: {type: string, writeOnly: true}")], class: Warning },
        Case { base: &[], rule: "nullable-removed", edits: &[("note: {nullable: true, allOf", "note: {allOf")], class: Servers },
        Case { base: &[], rule: "nullable-added", edits: &[("id: {type: string}", "id: {type: string, nullable: true}")], class: Clients },
        Case { base: &[(NOTE, ONE_OF_3)], rule: "composition-narrowed", edits: &[(NOTE, ONE_OF_2)], class: Servers },
        Case { base: &[(NOTE, ONE_OF_2)], rule: "composition-widened", edits: &[(NOTE, ONE_OF_3)], class: Clients },
        Case { base: &[], rule: "default-changed", edits: &[(SIZE, "size: {type: integer, format: int32, default: 3}")], class: Warning },
        Case { base: &[], rule: "schema-replaced", edits: &[("color: {$ref: \"#/components/schemas/Color\"}", "color: {type: string, enum: [red, green]}")], class: Compatible },
        Case { base: &[("      operationId: putThing\n", "      operationId: putThing\n      deprecated: true\n      x-sunset: \"2000-01-01\"\n")], rule: "operation-removed-after-sunset", edits: &[(PUT_OP, "")], class: Compatible },
        Case { base: &[("      operationId: getThing\n", "      operationId: getThing\n      deprecated: true\n      x-sunset: \"2999-06-01\"\n")], rule: "sunset-brought-forward", edits: &[("      operationId: getThing\n", "      operationId: getThing\n      deprecated: true\n      x-sunset: \"2999-01-01\"\n")], class: Clients },
        Case { base: &[], rule: "sunset-changed", edits: &[("      operationId: getThing\n", "      operationId: getThing\n      deprecated: true\n      x-sunset: \"2999-01-01\"\n")], class: Compatible },
        Case { base: &[(GET_LIMIT, "        - {name: limit, in: query, deprecated: true, x-sunset: \"2000-01-01\", schema: {type: integer}}\n")], rule: "parameter-removed-after-sunset", edits: &[(GET_LIMIT, "")], class: Compatible },
        Case { base: &[], rule: "parameter-style-changed", edits: &[("name: limit, in: query, required: false,", "name: limit, in: query, required: false, explode: false,")], class: Both },
        Case { base: &[], rule: "response-header-added", edits: &[(DONE, "\"204\": {description: done, headers: {X-Rate: {schema: {type: integer}}}}")], class: Compatible },
        Case { base: &[], rule: "response-header-added-required", edits: &[(DONE, "\"204\": {description: done, headers: {X-Rate: {required: true, schema: {type: integer}}}}")], class: Servers },
        Case { base: &[(DONE, "\"204\": {description: done, headers: {X-Rate: {schema: {type: integer}}}}")], rule: "response-header-removed", edits: &[], class: Clients },
        Case { base: &[(DONE, "\"204\": {description: done, headers: {X-Rate: {required: true, schema: {type: integer}}}}")], rule: "response-header-became-optional", edits: &[(DONE, "\"204\": {description: done, headers: {x-rate: {schema: {type: integer}}}}")], class: Clients },
        Case { base: &[(DONE, "\"204\": {description: done, headers: {X-Rate: {schema: {type: integer}}}}")], rule: "response-header-became-required", edits: &[(DONE, "\"204\": {description: done, headers: {X-Rate: {required: true, schema: {type: integer}}}}")], class: Servers },
        Case { base: &[], rule: "link-added", edits: &[(DONE, LINKED)], class: Compatible },
        Case { base: &[(DONE, LINKED)], rule: "link-removed", edits: &[], class: Clients },
        Case { base: &[(DONE, LINKED)], rule: "link-changed", edits: &[(DONE, "\"204\": {description: done, links: {get: {operationId: getThing, parameters: {id: \"$request.body#/id\"}}}}")], class: Clients },
        Case { base: &[], rule: "callback-added", edits: &[("      operationId: putThing\n", CALLBACK)], class: Compatible },
        Case { base: &[("      operationId: putThing\n", CALLBACK)], rule: "callback-removed", edits: &[], class: Clients },
        Case { base: &[(PUT_BODY, MULTIPART_TEXT)], rule: "encoding-changed", edits: &[(PUT_BODY, MULTIPART_JSON)], class: Both },
        Case { base: &[(SIZE, "size: {type: number}")], rule: "type-narrowed", edits: &[(SIZE, "size: {type: integer}")], class: Servers },
        Case { base: &[(SIZE, "size: {type: integer}")], rule: "type-widened", edits: &[(SIZE, "size: {type: number}")], class: Clients },
        Case { base: &[("Note: {type: string}", "Note: {type: string, x-extensible-enum: [a, b]}")], rule: "extensible-enum-narrowed", edits: &[("Note: {type: string}", "Note: {type: string, x-extensible-enum: [a]}")], class: Servers },
        Case { base: &[("Note: {type: string}", "Note: {type: string, x-extensible-enum: [a]}")], rule: "extensible-enum-widened", edits: &[("Note: {type: string}", "Note: {type: string, x-extensible-enum: [a, b]}")], class: Compatible },
        Case { base: &[], rule: "schema-added", edits: &[("    Note: {type: string}\n", "    Note: {type: string}\n    Spare: {type: boolean}\n")], class: Compatible },
        Case { base: &[("    Note: {type: string}\n", "    Note: {type: string}\n    Spare: {type: boolean}\n")], rule: "schema-removed", edits: &[], class: Compatible },
        Case { base: &[], rule: "schema-renamed", edits: &[("Color: {type: string", "Colour: {type: string"), ("schemas/Color\"", "schemas/Colour\"")], class: Compatible },
    ];

pub(super) fn diff(old: &str, new: &str) -> Vec<Change> {
    let (old, new) = (read(old).unwrap(), read(new).unwrap());
    assert!(
        old.warnings.is_empty() && new.warnings.is_empty(),
        "{:?}",
        (old.warnings, new.warnings)
    );
    compare(&old, &new)
}

fn edited(edits: &[(&str, &str)]) -> String {
    let mut spec = BASE.to_owned();
    for (from, to) in edits {
        assert!(spec.contains(from), "edit target not found: {from:?}");
        spec = spec.replacen(from, to, 1);
    }
    spec
}

#[test]
fn every_rule_has_a_case() {
    for rule in RULES {
        assert!(
            CASES.iter().any(|c| c.rule == rule.id),
            "rule {} has no case in CASES",
            rule.id
        );
    }
    for case in CASES {
        assert!(r::find(case.rule).is_some(), "unknown rule {}", case.rule);
    }
}

#[test]
fn each_rule_is_detected_and_classed() {
    let mut failures = Vec::new();
    for case in CASES {
        let (old, new) = (edited(case.base), edited(case.edits));
        let changes = diff(&old, &new);
        let shown: Vec<String> = changes
            .iter()
            .map(|c| {
                format!(
                    "{} {}: {} -> {}",
                    c.rule.id,
                    c.location,
                    c.message(),
                    c.class()
                )
            })
            .collect();
        // `DIFF_CASES_SHOW=1 cargo test -p xtask each_rule -- --nocapture`
        // prints what every case finds.
        if std::env::var_os("DIFF_CASES_SHOW").is_some() {
            eprintln!("== {}\n{}", case.rule, shown.join("\n"));
        }
        match changes.iter().find(|c| c.rule.id == case.rule) {
            None => failures.push(format!("{}: not detected; got {shown:#?}", case.rule)),
            Some(c) if c.class() != case.class => failures.push(format!(
                "{}: class {} (expected {}); got {shown:#?}",
                case.rule,
                c.class(),
                case.class
            )),
            Some(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn identical_specs_have_no_changes() {
    assert_eq!(diff(BASE, BASE), vec![]);
    // Descriptions, examples and summaries are not changes.
    let documented = BASE
        .replace(
            "Note: {type: string}",
            "Note: {type: string, description: A note., example: hi}",
        )
        .replace(
            "      operationId: getThing\n",
            "      operationId: getThing\n      summary: Get it.\n",
        );
    assert_eq!(diff(BASE, &documented), vec![]);
}

#[test]
fn a_component_used_both_ways_gets_both_classes() {
    let changes = diff(BASE, &BASE.replace("enum: [a, b, c]", "enum: [a, b]"));
    assert_eq!(changes.len(), 1, "{changes:#?}");
    let c = &changes[0];
    assert_eq!(c.subject, Subject::Schema("Kind".into()));
    assert_eq!(c.location, "#/components/schemas/Kind");
    assert_eq!(c.class(), Class::ClientsAndServers);
    assert_eq!(
        c.message(),
        "`Kind`: enum values removed: \"c\" [request: breaking for clients; response: breaking for servers]"
    );
}

#[test]
fn a_status_covered_by_a_range_is_not_a_new_response() {
    let changes = diff(
            BASE,
            &BASE.replace(
                "        \"204\": {description: done}\n",
                "        \"204\": {description: done}\n        \"404\": {description: e, content: {application/json: {schema: {$ref: \"#/components/schemas/Error\"}}}}\n",
            ),
        );
    assert_eq!(changes, vec![]);
}

#[test]
fn a_missing_base_means_everything_is_added() {
    let changes = compare(&Document::empty(), &read(BASE).unwrap());
    assert!(
        changes.iter().all(|c| !c.class().is_breaking()),
        "{changes:#?}"
    );
    let ops = changes
        .iter()
        .filter(|c| c.rule.id == "operation-added")
        .count();
    assert_eq!(ops, 2);
}

#[test]
fn done_criteria() {
    // Removing an operation, adding a required parameter or narrowing an
    // enum is breaking; adding an optional field is not, and is listed.
    for (edit, rule) in [
        ((PUT_OP, ""), "operation-removed"),
        (
            (
                GET_LIMIT,
                "        - {name: q, in: query, required: true, schema: {type: string}}\n",
            ),
            "parameter-added-required",
        ),
        (("enum: [red, green]", "enum: [red]"), "enum-narrowed"),
    ] {
        let changes = diff(BASE, &edited(&[edit]));
        assert!(
            changes
                .iter()
                .any(|c| c.rule.id == rule && c.class().is_breaking()),
            "{rule}: {changes:#?}"
        );
    }
    let changes = diff(
        BASE,
        &edited(&[(
            SIZE,
            "size: {type: integer, format: int32}\n        weight: {type: number}",
        )]),
    );
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].rule.id, "property-added");
    assert!(!changes[0].class().is_breaking());
}

#[test]
fn a_reused_operation_id_pairs_route_by_route() {
    // Two paths share one operationId (invalid for progenitor, common in
    // the wild): identical documents have no changes.
    let spec = BASE.replace("operationId: putThing", "operationId: getThing");
    assert_eq!(diff(&spec, &spec), vec![]);
    // And a change on the second route is reported there, not as a move.
    let edited = spec.replace(
        "      requestBody:\n        required: true\n",
        "      requestBody:\n        required: false\n",
    );
    let kinds: Vec<&str> = diff(&spec, &edited).iter().map(|c| c.rule.id).collect();
    assert_eq!(kinds, ["request-body-became-optional"]);
    // The same two routes listed in another order: still no changes.
    let a_then_b = "openapi: 3.0.3\ninfo: {title: T, version: '1'}\npaths:\n  /a: {get: {operationId: same, responses: {'200': {description: ok}}}}\n  /b: {get: {operationId: same, responses: {'200': {description: ok}}}}\n";
    let b_then_a = "openapi: 3.0.3\ninfo: {title: T, version: '1'}\npaths:\n  /b: {get: {operationId: same, responses: {'200': {description: ok}}}}\n  /a: {get: {operationId: same, responses: {'200': {description: ok}}}}\n";
    assert_eq!(diff(a_then_b, b_then_a), vec![]);
    // One of the two moves (PUT → POST): it pairs with the operation left
    // over, not with the first one of that operationId.
    let moved = spec.replace("    put:\n", "    post:\n");
    let shown: Vec<String> = diff(&spec, &moved).iter().map(|c| c.message()).collect();
    assert_eq!(
        shown,
        ["route changed from PUT /things/{id} to POST /things/{id}"]
    );
}

#[test]
fn response_header_schemas_are_compared_as_responses() {
    let base = BASE.replace(
        DONE,
        "\"204\": {description: done, headers: {X-Rate: {schema: {type: integer, format: int32}}}}",
    );
    let edited = base.replace(
        "{type: integer, format: int32}}}}",
        "{type: integer, format: int64, nullable: true}}}}",
    );
    let shown: Vec<String> = diff(&base, &edited)
        .iter()
        .map(|c| format!("{} {} -> {}", c.rule.id, c.location, c.class()))
        .collect();
    assert_eq!(
        shown,
        [
            "nullable-added #/paths/~1things~1{id}/put/responses/204/headers/X-Rate/schema -> breaking for clients",
            "format-widened #/paths/~1things~1{id}/put/responses/204/headers/X-Rate/schema -> breaking for clients",
        ]
    );
}

#[test]
fn inside_a_callback_the_roles_swap() {
    let base = BASE.replace("      operationId: putThing\n", CALLBACK);
    // The provider now sends a value consumers' receivers do not know.
    let widened = base.replace("enum: [ok, failed]", "enum: [ok, failed, retried]");
    let changes = diff(&base, &widened);
    assert_eq!(changes.len(), 1, "{changes:#?}");
    assert_eq!(changes[0].rule.id, "enum-widened");
    assert_eq!(changes[0].class(), Class::Clients);
    assert!(
        changes[0]
            .detail
            .starts_with("callback `done` request body"),
        "{changes:#?}"
    );
    // The provider does not send a parameter the receivers now require.
    let required = base.replace(
        "{name: attempt, in: query, schema",
        "{name: attempt, in: query, required: true, schema",
    );
    let changes = diff(&base, &required);
    assert_eq!(changes.len(), 1, "{changes:#?}");
    assert_eq!(changes[0].rule.id, "parameter-became-required");
    assert_eq!(changes[0].class(), Class::Servers);
    assert_eq!(
        changes[0].detail,
        "callback `done`: query parameter `attempt` became required"
    );
}

#[test]
fn header_parameter_names_are_case_insensitive() {
    // HTTP header names are case-insensitive: a header parameter whose name
    // only changes case is the same parameter, at the operation and at the
    // path level, and nothing about it changed.
    let base = BASE.replace(
        GET_LIMIT,
        "        - {name: limit, in: query, required: false, schema: {type: integer, format: int32, minimum: 1, maximum: 100}}\n        - {name: X-Trace-Id, in: header, required: true, schema: {type: string}}\n",
    );
    let recased = base.replace("name: X-Trace-Id", "name: x-trace-id");
    assert_eq!(diff(&base, &recased), vec![]);
    // The same parameter under another name is still a change.
    let renamed = base.replace("name: X-Trace-Id", "name: X-Request-Id");
    let kinds: Vec<(&str, Class)> = diff(&base, &renamed)
        .iter()
        .map(|c| (c.rule.id, c.class()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("parameter-removed", Class::Warning),
            ("parameter-added-required", Class::Clients)
        ]
    );
    // An operation-level header overrides a path-level one whatever the case.
    let path_level = BASE.replace(
        "  /things/{id}:\n",
        "  /things/{id}:\n    parameters:\n      - {name: X-Tenant, in: header, required: true, schema: {type: string}}\n",
    );
    let overridden = path_level.replace(
        GET_LIMIT,
        "        - {name: limit, in: query, required: false, schema: {type: integer, format: int32, minimum: 1, maximum: 100}}\n        - {name: x-tenant, in: header, required: false, schema: {type: string}}\n",
    );
    let changes = diff(&path_level, &overridden);
    assert_eq!(changes.len(), 1, "{changes:#?}");
    assert_eq!(
        (changes[0].rule.id, changes[0].class()),
        ("parameter-became-optional", Class::Servers)
    );
}

#[test]
fn an_unreadable_security_scheme_is_compared_as_written() {
    // `type: http` without `scheme` cannot be typed; the reader leaves the
    // scheme out with a warning, and a change to it is still a change.
    let base = BASE.replace(
        "    key: {type: apiKey, in: header, name: X-Key}\n",
        "    key: {type: apiKey, in: header, name: X-Key}\n    basic: {type: http}\n",
    );
    let changed = base.replace("basic: {type: http}", "basic: {type: apiKey}");
    let (old, new) = (read(&base).unwrap(), read(&changed).unwrap());
    assert_eq!(old.warnings.len(), 1, "{:?}", old.warnings);
    assert!(
        old.left_out
            .contains_key("#/components/securitySchemes/basic")
    );
    let changes = compare(&old, &new);
    assert_eq!(changes.len(), 1, "{changes:#?}");
    assert_eq!(
        (changes[0].rule.id, changes[0].class()),
        ("security-scheme-changed", Class::ClientsAndServers)
    );
    assert_eq!(changes[0].location, "#/components/securitySchemes/basic");
    // Unchanged, it is no change; only its description changed, neither.
    let same = read(&base).unwrap();
    assert_eq!(compare(&old, &same), vec![]);
    let described = read(&base.replace(
        "basic: {type: http}",
        "basic: {type: http, description: Basic auth}",
    ))
    .unwrap();
    assert_eq!(compare(&old, &described), vec![]);
}

#[test]
fn dropping_a_scheme_from_a_requirement_relaxes_it() {
    // Both schemes were required together; now one is enough: every client
    // that sent both still passes, so only servers are affected.
    let both = BASE
        .replace("security: [{key: []}]", "security: [{key: [], token: []}]")
        .replace(
            "    key: {type: apiKey, in: header, name: X-Key}\n",
            "    key: {type: apiKey, in: header, name: X-Key}\n    token: {type: http, scheme: bearer}\n",
        );
    let one = both.replace("security: [{key: [], token: []}]", "security: [{key: []}]");
    let kinds: Vec<(&str, Class)> = diff(&both, &one)
        .iter()
        .map(|c| (c.rule.id, c.class()))
        .collect();
    assert!(!kinds.is_empty());
    assert!(
        kinds
            .iter()
            .all(|k| *k == ("security-relaxed", Class::Servers)),
        "{kinds:?}"
    );
    // The other way round a scheme is added to the requirement: tightened.
    let kinds: Vec<(&str, Class)> = diff(&one, &both)
        .iter()
        .map(|c| (c.rule.id, c.class()))
        .collect();
    assert!(
        kinds.contains(&("security-tightened", Class::Warning)),
        "{kinds:?}"
    );
}

#[test]
fn a_header_parameter_default_is_classed_as_a_query_parameter_default() {
    // A parameter's default is what the server assumes when a client leaves it out, wherever
    // the parameter travels (oasdiff: request-parameter-default-value-changed, for every
    // location): a header's default is no documentation-only `default-changed`.
    for (location, name) in [("header", "X-Mode"), ("query", "mode"), ("cookie", "mode")] {
        let base = BASE.replace(
            GET_LIMIT,
            &format!(
                "{GET_LIMIT}        - {{name: {name}, in: {location}, required: false, schema: {{type: string}}}}\n"
            ),
        );
        let added = base.replace(
            &format!("in: {location}, required: false, schema: {{type: string}}}}"),
            &format!("in: {location}, required: false, schema: {{type: string, default: fast}}}}"),
        );
        let changed = added.replace("default: fast", "default: slow");
        for (old, new, what) in [
            (&base, &added, "added"),
            (&added, &changed, "changed"),
            (&added, &base, "removed"),
        ] {
            let kinds: Vec<(&str, Class)> = diff(old, new)
                .iter()
                .map(|c| (c.rule.id, c.class()))
                .collect();
            assert_eq!(
                kinds,
                [("parameter-default-changed", Class::Clients)],
                "{location} default {what}"
            );
        }
    }
    // Through a `$ref` to a component parameter, too.
    let with_component = BASE
        .replace(
            GET_LIMIT,
            &format!("{GET_LIMIT}        - {{$ref: \"#/components/parameters/Mode\"}}\n"),
        )
        .replace(
            "components:\n",
            "components:\n  parameters:\n    Mode: {name: X-Mode, in: header, required: false, schema: {type: string}}\n",
        );
    let defaulted = with_component.replace(
        "Mode: {name: X-Mode, in: header, required: false, schema: {type: string}}",
        "Mode: {name: X-Mode, in: header, required: false, schema: {type: string, default: fast}}",
    );
    let kinds: Vec<(&str, Class)> = diff(&with_component, &defaulted)
        .iter()
        .map(|c| (c.rule.id, c.class()))
        .collect();
    assert_eq!(kinds, [("parameter-default-changed", Class::Clients)]);
}

#[test]
fn a_default_on_a_component_schema_a_parameter_references_is_a_parameter_default_change() {
    // The parameter's default is its schema's wherever that schema is defined: written on the
    // component, it breaks clients as it does written inline (issue 46).
    for (location, name) in [("header", "X-Mode"), ("query", "mode"), ("path", "id")] {
        let parameter = format!(
            "{{name: {name}, in: {location}, required: {}, schema: {{$ref: \"#/components/schemas/Mode\"}}}}",
            location == "path"
        );
        let base = BASE
            .replace(GET_LIMIT, &format!("{GET_LIMIT}        - {parameter}\n"))
            .replace(
                "    Note: {type: string}\n",
                "    Note: {type: string}\n    Mode: {type: string}\n",
            );
        let base = if location == "path" {
            base.replacen(
                "        - {name: id, in: path, required: true, schema: {type: string}}\n",
                "",
                1,
            )
        } else {
            base
        };
        let added = base.replace(
            "    Mode: {type: string}\n",
            "    Mode: {type: string, default: fast}\n",
        );
        let changed = added.replace("default: fast", "default: slow");
        for (old, new, what) in [
            (&base, &added, "added"),
            (&added, &changed, "changed"),
            (&added, &base, "removed"),
        ] {
            let found = diff(old, new);
            let at_parameter: Vec<(&str, Class)> = found
                .iter()
                .filter(|c| c.location.contains("/parameters/"))
                .map(|c| (c.rule.id, c.class()))
                .collect();
            assert_eq!(
                at_parameter,
                [("parameter-default-changed", Class::Clients)],
                "{location} default {what}: {found:?}"
            );
        }
    }
}
