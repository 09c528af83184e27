//! A second binary of a package that depends on the SDK, using only reqwest and never naming
//! the SDK: it is not linked, so its load-time provider is not either, while the package's one
//! reqwest has the SDK's `rustls-no-provider` feature. `ClientBuilder::build` panics here; this
//! binary shows that the rule of `sa360_video_sdk::http::install_crypto_provider` is needed.

fn main() -> Result<(), reqwest::Error> {
    let _client = reqwest::Client::builder().build()?;
    println!("built a reqwest client");
    Ok(())
}
