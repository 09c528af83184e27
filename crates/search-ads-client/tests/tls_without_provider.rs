//! Documents the trap `install_crypto_provider` exists for: with reqwest's
//! `rustls-no-provider` feature, building any `reqwest::Client` before a
//! rustls crypto provider is installed panics. (Own test binary = own process,
//! so nothing has installed a provider yet.) If this test starts failing
//! because building succeeds, some crate in the build now enables a reqwest
//! feature with a built-in provider (e.g. `rustls` = aws-lc-rs); the glue
//! still works, but check that this was intended.

#[test]
fn building_a_reqwest_client_without_a_provider_panics() {
    let outcome = std::panic::catch_unwind(|| reqwest::Client::builder().build());
    let payload = outcome.expect_err("build() should panic without a crypto provider");
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default();
    assert!(message.contains("No rustls crypto provider"), "{message}");

    search_ads_client::install_crypto_provider();
    reqwest::Client::builder()
        .build()
        .expect("builds once the provider is installed");
}
