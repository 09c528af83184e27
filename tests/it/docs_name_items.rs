//! The items the documents name exist (issue 46), beside `docs_match_code`'s files, paths and
//! commands: every type named alone (`WriteJournal`), every cargo feature (``feature `redis` ``),
//! and the credential kinds: the credential file types the SDK's README and crate docs list are
//! exactly the ones `DefaultCredentials` reads, and the README names every `CredentialKind`.

use std::collections::BTreeSet;

use crate::docs_match_code::{code_spans, declared, documents, read};
use crate::self_contained::tracked;

/// Types of other crates, wire field names and kernel counters the docs name.
const FOREIGN_TYPES: &[&str] = &[
    "ClientConfig",
    "RetryAfterSeconds",
    "UserToken",
    "VmHWM",
    "DateTime",
    "DeserializeOwned",
    "NaiveDate",
    "RequestBuilder",
    "UnexpectedResponse",
    "ErrorResponse",
    "ResponseValue",
    "TryStreamExt",
    "StreamExt",
    "AsyncRead",
    "AsyncWrite",
    "JoinSet",
    "TcpListener",
    "BTreeMap",
    "HashMap",
    "IntoIterator",
    "SystemTime",
    "ConnectionManager",
];

/// The hand-written and generated Rust sources of the workspace, concatenated.
fn workspace_source() -> String {
    tracked()
        .into_iter()
        .filter(|p| (p.starts_with("crates/") || p.starts_with("xtask/")) && p.ends_with(".rs"))
        .map(|p| read(&p))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A type name: two or more capitalised humps (`WriteJournal`, `IdLookup`), before any `::`.
fn type_name(span: &str) -> Option<&str> {
    let first = span.split("::").next()?;
    let camel = first.starts_with(|c: char| c.is_ascii_uppercase())
        && first.chars().all(|c| c.is_ascii_alphanumeric())
        && first.chars().filter(char::is_ascii_uppercase).count() >= 2
        && first.chars().any(|c| c.is_ascii_lowercase());
    camel.then_some(first)
}

#[test]
fn every_type_the_docs_name_exists() {
    let source = workspace_source();
    let mut missing = BTreeSet::new();
    for doc in documents() {
        for span in code_spans(&read(&doc)) {
            if let Some(name) = type_name(span.trim())
                && !FOREIGN_TYPES.contains(&name)
                && !declared(name, &source)
            {
                missing.insert(format!("{doc}: `{name}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the docs name types that do not exist:\n{}",
        missing.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// The features every package declares.
fn features() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for toml in tracked().into_iter().filter(|p| p.ends_with("Cargo.toml")) {
        let text = read(&toml);
        let Some(section) = text.split("\n[features]\n").nth(1) else {
            continue;
        };
        for line in section.lines().take_while(|l| !l.starts_with('[')) {
            if let Some((name, _)) = line.split_once(" = ")
                && !name.starts_with('#')
            {
                out.insert(name.trim().to_owned());
            }
        }
    }
    out
}

/// Features of other crates the docs name (reqwest's `rustls`, hyper's `server`).
const FOREIGN_FEATURES: &[&str] = &["rustls", "server"];

/// Every feature a text names: ``feature `x` ``, ``features `x` `` or `` `x` feature``.
fn features_named(text: &str) -> Vec<String> {
    let text = text.replace('\n', " ");
    let mut out = Vec::new();
    let spans: Vec<&str> = text.split('`').collect();
    for i in (1..spans.len()).step_by(2) {
        let before = spans[i - 1].trim_end();
        let after = spans.get(i + 1).map_or("", |s| s.trim_start());
        let word = spans[i];
        let is_name = !word.is_empty() && word.chars().all(|c| c.is_ascii_lowercase() || c == '-');
        if is_name
            && (before.ends_with("feature")
                || before.ends_with("features")
                || after.starts_with("feature"))
        {
            out.push(word.to_owned());
        }
    }
    out
}

#[test]
fn every_feature_the_docs_name_exists() {
    let features = features();
    assert!(
        features.contains("service-account") && features.contains("fakes"),
        "{features:?}"
    );
    let mut missing = BTreeSet::new();
    let sdk_docs = "crates/sa360-video-sdk/src/lib.rs".to_owned();
    for doc in documents().into_iter().chain([sdk_docs]) {
        for feature in features_named(&read(&doc)) {
            if !features.contains(&feature) && !FOREIGN_FEATURES.contains(&feature.as_str()) {
                missing.insert(format!("{doc}: feature `{feature}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the docs name cargo features no package declares:\n{}",
        missing.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// A credential file type: `authorized_user`, `service_account`, `external_account`, …
fn credential_types_named(text: &str) -> BTreeSet<String> {
    code_spans(text)
        .into_iter()
        .filter(|s| {
            (s.ends_with("_account") || s.ends_with("_user"))
                && s.chars().all(|c| c.is_ascii_lowercase() || c == '_')
        })
        .collect()
}

/// The `type`s of a credentials file `DefaultCredentials` reads (`Some("authorized_user") =>`).
fn credential_types_read() -> BTreeSet<String> {
    let adc = read("crates/sa360-video-sdk/src/search_ads/auth/adc.rs");
    adc.split("Some(\"")
        .skip(1)
        .filter_map(|rest| rest.split_once("\") =>").map(|(t, _)| t))
        .filter(|t| t.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_credential_kinds_the_sdk_docs_list_are_the_ones_it_reads() {
    let read_types = credential_types_read();
    assert!(read_types.len() >= 4, "{read_types:?}");
    let crate_docs: String = read("crates/sa360-video-sdk/src/lib.rs")
        .lines()
        .filter(|l| l.starts_with("//!"))
        .collect::<Vec<_>>()
        .join("\n");
    let readme = read("crates/sa360-video-sdk/README.md");
    for (doc, text) in [
        ("crates/sa360-video-sdk/README.md", &readme),
        ("the crate docs (lib.rs)", &crate_docs),
    ] {
        assert_eq!(
            credential_types_named(text),
            read_types,
            "{doc} lists other credential file types than DefaultCredentials reads"
        );
    }
    // Every kind an error can name (`CredentialKind`'s labels) is in the README's sign-in list.
    let kinds = read("crates/sa360-video-sdk/src/search_ads/auth/credential_kind.rs");
    let labels: Vec<&str> = kinds
        .split("match self {")
        .nth(1)
        .and_then(|arms| arms.split("\n        }").next())
        .expect("CredentialKind's label match")
        .split(" => \"")
        .skip(1)
        .filter_map(|rest| rest.split_once('"').map(|(label, _)| label))
        .collect();
    assert!(labels.len() >= 6, "{labels:?}");
    let flat = readme.replace('\n', " ").replace("  ", " ");
    for label in labels {
        assert!(
            flat.contains(label),
            "crates/sa360-video-sdk/README.md does not name the credential kind `{label}`"
        );
    }
}
