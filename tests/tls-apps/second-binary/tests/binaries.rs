//! The second binaries of a package that depends on the SDK (issue 37, item 3; ARCHITECTURE.md,
//! "TLS"): the one that calls `sa360_video_sdk::http::install_crypto_provider()` builds its reqwest
//! client; the one that never names the SDK panics in reqwest. If the second starts to pass, a
//! sounder fix has landed (a reqwest feature that selects ring, say): drop the rule from
//! ARCHITECTURE.md, DECISIONS G-6 and `install_crypto_provider`'s docs.

use std::process::{Command, Output};

fn run(binary: &str) -> Output {
    Command::new(binary)
        .output()
        .unwrap_or_else(|e| panic!("running {binary}: {e}"))
}

#[test]
fn a_second_binary_that_installs_the_provider_builds_its_client() {
    let out = run(env!("CARGO_BIN_EXE_own-client-with-provider"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}\n{stderr}", out.status);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "built a reqwest client\n");
}

#[test]
fn a_second_binary_that_never_names_the_sdk_panics_in_reqwest() {
    let out = run(env!("CARGO_BIN_EXE_own-client-without-provider"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(101), "{:?}\n{stderr}", out.status);
    assert!(
        stderr.contains("No rustls crypto provider is configured"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
}
