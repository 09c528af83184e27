//! One insta snapshot per spec: its operation inventory (method, path,
//! operationId, tags, parameters, request body, responses, deprecated flag),
//! rendered from the parsed spec as stable text by `xtask::inventory`.
//! A spec change that alters the API surface shows up as a snapshot diff.

use xtask::Workspace;
use xtask::codegen::load_spec;
use xtask::specs::SPECS;

#[test]
fn operation_inventories() {
    let ws = Workspace::from_manifest_dir();
    for config in SPECS {
        let spec = load_spec(&ws.path(config.spec)).unwrap();
        let inventory = xtask::inventory::render(&spec);
        insta::assert_snapshot!(format!("{}-inventory", config.name), inventory);
    }
}
