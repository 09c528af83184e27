//! What the rule tests share: a spec that passes every rule but one, and
//! helpers that lint a variant of it.

use super::lint;
use crate::openapi::read;
use crate::specs::SpecConfig;

pub(super) const CONFIG: SpecConfig = SpecConfig {
    name: "t",
    spec: "specs/t.yaml",
    output: "out.rs",
    int64_strings: true,
    plain_string_constraints: &[],
    inner_type: None,
};

pub(super) fn findings(yaml: &str) -> Vec<String> {
    lint(&CONFIG, &read(yaml).unwrap())
        .iter()
        .map(ToString::to_string)
        .collect()
}

pub(super) fn ids(yaml: &str) -> Vec<&'static str> {
    lint(&CONFIG, &read(yaml).unwrap())
        .iter()
        .map(|f| f.rule.id)
        .collect()
}

pub(super) const CLEAN: &str = r##"
openapi: 3.0.3
info: {title: T, version: "1"}
tags:
  - {name: things, description: Things.}
paths:
  /things/{id}:
    get:
      operationId: getThing
      summary: Get a thing.
      tags: [things]
      parameters:
        - {name: id, in: path, required: true, description: The ID., schema: {type: string, format: int64}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Thing"}
        "201":
          description: also ok
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Thing"}
        4XX:
          description: e
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Error"}
        "500":
          description: e
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Error"}
  /report:
    get:
      operationId: getReport
      summary: Get the report.
      tags: [things]
      responses:
        "200":
          description: csv
          content:
            text/csv:
              schema: {type: string}
        2XX:
          description: csv
          content:
            text/csv:
              schema: {type: string}
        default:
          description: e
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Error"}
components:
  schemas:
    Thing:
      description: A thing.
      type: object
      properties:
        id: {type: string, format: int64, nullable: true, description: ID, example: "1"}
        tags: {type: array, items: {$ref: "#/components/schemas/Tag"}, description: Tags.}
    Tag:
      description: A tag.
      type: object
      properties:
        name: {type: string, description: Name.}
    Error:
      description: An error.
      type: object
      additionalProperties: false
      properties:
        message: {type: string, description: Message.}
"##;
