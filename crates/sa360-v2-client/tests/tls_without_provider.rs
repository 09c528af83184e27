//! An application's own `reqwest::Client`, built before anything of ours runs, works: with reqwest's
//! `rustls-no-provider` feature (unified into every reqwest in a build that holds these crates),
//! reqwest panics with "No rustls crypto provider is configured" unless a provider is installed,
//! so `sa360-video-client-support` installs rustls' `ring` provider when the program loads (ARCHITECTURE.md,
//! "TLS"). Own test binary = own process: nothing else has installed a provider before `main`.

#[test]
fn a_reqwest_client_built_first_works_without_an_explicit_provider() {
    // Nothing of ours has been called yet in this process.
    let outcome = std::panic::catch_unwind(|| reqwest::Client::builder().build());
    let client = outcome.expect("building a reqwest client first must not panic");
    client.expect("the client builds");

    // Installing it again (what the generated clients' glue does) is harmless.
    sa360_v2_client::install_crypto_provider();
    reqwest::Client::builder()
        .build()
        .expect("builds after the glue's install too");
}
