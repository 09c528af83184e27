//! One insta snapshot per spec: its operation inventory (method, path,
//! operationId, tags, parameters, request body, responses, deprecated flag),
//! rendered from the parsed spec as stable text by `xtask::inventory`.
//! A spec change that alters the API surface shows up as a snapshot diff.

use xtask::Workspace;
use xtask::specs::SPECS;

#[test]
fn operation_inventories() {
    let ws = Workspace::from_manifest_dir();
    for config in SPECS {
        let text = std::fs::read_to_string(ws.path(config.spec)).unwrap();
        let doc = xtask::openapi::read(&text).unwrap();
        assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
        let inventory = xtask::inventory::render(&doc);
        insta::assert_snapshot!(format!("{}-inventory", config.name), inventory);
    }
}
