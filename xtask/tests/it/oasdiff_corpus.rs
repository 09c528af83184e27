//! The wire verdict against oasdiff's: the pairs in `tests/fixtures/oasdiff/`
//! (`cases.txt` lists each with the level oasdiff's checker test asserts;
//! `NOTICE` says where each file comes from). A change oasdiff calls an
//! error must break clients on the wire; one it calls info must not; one it
//! calls a warning must be at least a warning here. The test prints the
//! figures.

use std::fs;
use std::path::Path;

use xtask::diff::{self, Class};
use xtask::specs::SpecConfig;

#[test]
fn wire_verdicts_match_oasdiff() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/oasdiff");
    let list = fs::read_to_string(dir.join("cases.txt")).unwrap();
    let config = SpecConfig {
        name: "oasdiff",
        spec: "tests/fixtures/oasdiff/new.yaml",
        output: "unused.rs",
        int64_strings: false,
        plain_string_constraints: &[],
        inner_type: None,
    };
    let (mut breaking, mut found, mut compatible, mut alarms, mut warnings, mut warned) =
        (0, 0, 0, 0, 0, 0);
    let mut failures = Vec::new();
    for line in list
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.split('|').map(str::trim).collect();
        let [name, base, new, level, _test] = cols[..] else {
            panic!("bad line in cases.txt: {line}");
        };
        let read = |f: &str| fs::read_to_string(dir.join(f)).unwrap();
        let spec = diff::diff_texts(&config, Some(&read(base)), Some(&read(new))).unwrap();
        let classes: Vec<Class> = spec.changes.iter().map(|c| c.class()).collect();
        let clients = classes
            .iter()
            .any(|c| matches!(c, Class::Clients | Class::ClientsAndServers));
        let flagged = classes.iter().any(|c| c.is_breaking() || c.is_warning());
        let shown: Vec<String> = spec
            .changes
            .iter()
            .map(|c| format!("{} ({}): {}", c.rule.id, c.class(), c.message()))
            .collect();
        match level {
            "error" => {
                breaking += 1;
                if clients {
                    found += 1;
                } else {
                    failures.push(format!("{name}: oasdiff error, missed: {shown:?}"));
                }
            }
            "info" => {
                compatible += 1;
                if clients {
                    alarms += 1;
                    failures.push(format!("{name}: oasdiff info, false alarm: {shown:?}"));
                }
            }
            "warning" => {
                warnings += 1;
                if flagged {
                    warned += 1;
                } else {
                    failures.push(format!("{name}: oasdiff warning, not reported: {shown:?}"));
                }
            }
            other => panic!("{name}: unknown level {other}"),
        }
    }
    println!(
        "oasdiff corpus: recall {found}/{breaking} breaking, false alarms {alarms}/{compatible} \
         compatible, warnings {warned}/{warnings} reported at least as warnings"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
