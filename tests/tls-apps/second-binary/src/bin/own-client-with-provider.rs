//! A second binary of a package that depends on the SDK, using only reqwest, that follows the
//! rule of `sa360_video_sdk::http::install_crypto_provider` (ARCHITECTURE.md, "TLS"): it installs
//! the provider before it builds its client.

fn main() -> Result<(), reqwest::Error> {
    sa360_video_sdk::http::install_crypto_provider();
    let _client = reqwest::Client::builder().build()?;
    println!("built a reqwest client");
    Ok(())
}
