//! The reader's tests.

use super::*;

fn warnings(doc: &Document) -> Vec<String> {
    doc.warnings.iter().map(ToString::to_string).collect()
}

#[test]
fn anchors_aliases_and_merge_keys_are_resolved() {
    // The specs share schemas through anchors (`&id`), aliases (`*id`) and merge keys
    // (`<<: *id`): the YAML crate must resolve all three.
    let doc = read(
        r##"
openapi: 3.0.3
info: {title: t, version: '1'}
paths: {}
components:
  schemas:
    Base: &base {type: string, format: int64, description: shared}
    Alias: *base
    Merged:
      <<: *base
      description: own
"##,
    )
    .unwrap();
    let schemas = &doc.json["components"]["schemas"];
    assert_eq!(schemas["Alias"], schemas["Base"]);
    assert_eq!(schemas["Merged"]["format"], "int64");
    assert_eq!(schemas["Merged"]["description"], "own");
    assert!(schemas["Merged"].get("<<").is_none(), "{schemas}");
}

#[test]
fn a_valid_document_reads_without_warnings() {
    let doc = read("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n").unwrap();
    assert!(doc.warnings.is_empty());
    assert_eq!(doc.spec.info.title, "t");
}

#[test]
fn ordinary_omissions_are_defaulted_without_warnings() {
    let doc = read(
        r##"
openapi: 3.0.0
info: {title: t, version: '1'}
paths:
  /a/{id}:
    get:
      parameters:
        - {name: id, in: path}
      responses:
        200:
          content:
          headers:
        404: {description: gone, content: {application/json: }}
    post: {}
components:
  responses:
    Plain: {}
  schemas:
    WithExamples:
      type: object
      example: {0: zero, 1: one}
"##,
    )
    .unwrap();
    assert_eq!(warnings(&doc), Vec::<String>::new());
    let ops = doc.operations();
    assert_eq!(ops.len(), 2);
    let params = doc.parameters(&ops[0]);
    assert_eq!(params[0].param.parameter_data_ref().name, "id");
    assert!(params[0].param.parameter_data_ref().required);
    let responses = &ops[0].operation.responses.responses;
    assert_eq!(responses.len(), 2, "{responses:?}");
    assert!(ops[1].operation.responses.responses.is_empty());
    assert_eq!(
        doc.json
            .pointer("/components/schemas/WithExamples/example/0"),
        Some(&Value::from("zero"))
    );
}

#[test]
fn unreadable_parts_are_dropped_with_their_pointer() {
    let doc = read(
        r##"
openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /a:
    get:
      parameters:
        - {name: q, in: body, schema: {type: string}}
        - {name: ok, in: query, schema: {type: integer, minimum: low}}
      responses:
        "200": {description: ok}
  /b: {$ref: "#/paths/~1a"}
components:
  securitySchemes:
    broken: {type: magic}
"##,
    )
    .unwrap();
    assert_eq!(
        warnings(&doc),
        [
            "#/paths/~1a/get/parameters/0: parameter cannot be read ({\"in\":\"body\",\"name\":\"q\",\"schema\":{\"type\":\"string\"}}); left out",
            "#/paths/~1a/get/parameters/1/schema/minimum: `minimum: \"low\"` cannot be read (invalid type: string \"low\", expected a JSON number); ignored",
            "#/paths/~1b: path item `/b` cannot be read ({\"$ref\":\"#/paths/~1a\"}); left out",
            "#/components/securitySchemes/broken: security scheme `broken` cannot be read ({\"type\":\"magic\"}); left out",
        ]
    );
    let ops = doc.operations();
    assert_eq!(ops.len(), 1);
    assert_eq!(doc.parameters(&ops[0]).len(), 1);
}

#[test]
fn swagger_2_isms_and_broken_references_are_named() {
    let doc = read(
        r##"
openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /a:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  id: {type: string, required: true}
                  owner: {$ref: "#/components/schemas/Missing"}
                  other: {$ref: "other.yaml#/Thing"}
"##,
    )
    .unwrap();
    assert_eq!(
        warnings(&doc),
        [
            "#/paths/~1a/get/responses/200/content/application~1json/schema/properties/id/required: `required: true` cannot be read (invalid type: boolean `true`, expected a sequence); ignored",
            "#/paths/~1a/get/responses/200/content/application~1json/schema/properties/other: `$ref: other.yaml#/Thing` points outside this document and is not followed",
            "#/paths/~1a/get/responses/200/content/application~1json/schema/properties/owner: `$ref: #/components/schemas/Missing` points at nothing in this document; ignored",
        ]
    );
    assert_eq!(doc.operations().len(), 1);
}

#[test]
fn oversized_documents_are_refused() {
    let big = " ".repeat(MAX_DOCUMENT_BYTES + 1);
    assert!(read(&big).unwrap_err().0.contains("bytes"));
}

#[test]
fn a_3_1_null_member_becomes_nullable() {
    let doc = read(
        r##"
openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /a:
    get:
      parameters:
        - name: s
          in: query
          schema:
            oneOf: [{type: "null"}, {type: string, enum: [x]}]
      responses: {}
"##,
    )
    .unwrap();
    let schema = doc
        .json
        .pointer("/paths/~1a/get/parameters/0/schema")
        .unwrap();
    assert_eq!(schema["nullable"], true);
    assert_eq!(schema["oneOf"].as_array().unwrap().len(), 1);
}

#[test]
fn openapi_3_1_spellings_are_translated() {
    let doc = read(
        r##"
openapi: 3.0.3
info: {title: t, version: '1'}
paths: {}
components:
  schemas:
    N: {type: [integer, "null"], exclusiveMinimum: 0}
    C: {const: fixed}
"##,
    )
    .unwrap();
    assert_eq!(warnings(&doc), Vec::<String>::new());
    let n = doc.json.pointer("/components/schemas/N").unwrap();
    assert_eq!(n["type"], "integer");
    assert_eq!(n["nullable"], true);
    assert_eq!(n["minimum"], 0);
    assert_eq!(n["exclusiveMinimum"], true);
    assert_eq!(
        doc.json.pointer("/components/schemas/C/enum/0"),
        Some(&Value::from("fixed"))
    );
}

#[test]
fn only_non_documents_are_refused() {
    assert!(
        read("just: [unclosed")
            .unwrap_err()
            .0
            .contains("not a YAML")
    );
    assert!(read("- a\n- b\n").unwrap_err().0.contains("not a mapping"));
    assert!(
        read("swagger: '2.0'\n")
            .unwrap_err()
            .0
            .contains("Swagger 2.0")
    );
    let doc = read("info: {title: t}\n").unwrap();
    assert_eq!(
        warnings(&doc),
        ["#/openapi: no openapi version; read as 3.0.3"]
    );
}
