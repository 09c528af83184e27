//! The login scenarios: the generated client's `login` against the SDK's, and the SDK over
//! a `MemoryStore` against a `RedisStore`.
//!
//! The `logins` row measures a few microseconds of guard work inside a loopback round trip of
//! about 170 µs whose length varies by ±15 % from one process to the next on a small VM. Two
//! processes running the same code differ by more than the guard costs, so that row runs both
//! sides in one process ([`logins_paired`]): blocks of [`LOGIN_BLOCK`] logins, alternating
//! baseline, SDK, SDK, baseline, … so that drift falls on both sides alike.

use std::hint::black_box;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};

use sa360_video_sdk::http::BaseUrl;
use sa360_video_sdk::video_session::{
    Credentials, LockoutStore, MemoryStore, RedisStore, VideoSessionClient,
};
use video_session_client::types as vs;

use crate::scenarios::{Measurement, VideoTarget, plain_client};

/// Logins per block of the paired `logins` run (about 17 ms on loopback: short blocks spread a
/// slow moment of the machine over both sides).
pub const LOGIN_BLOCK: u64 = 100;

/// The generated `video-session-client` on the plain client, with the login body built once.
struct GeneratedLogin {
    api: video_session_client::Client,
    body: vs::LoginRequest,
}

impl GeneratedLogin {
    fn new(target: &VideoTarget) -> Result<Self> {
        let api = video_session_client::Client::new_with_client(
            &target.base_url,
            plain_client(true)?,
            video_session_client::ClientContext::new(),
        );
        let body = vs::LoginRequest {
            secret_key: target.secret_key.clone(),
            user_name: target.user_name.clone(),
            password: target.password.clone(),
        };
        Ok(Self { api, body })
    }

    /// `count` logins one after the other; each must succeed.
    async fn run(&self, count: u64) -> Result<Duration> {
        let started = Instant::now();
        for _ in 0..count {
            let answer = self
                .api
                .login()
                .body(self.body.clone())
                .send()
                .await
                .map_err(|e| anyhow::anyhow!("login failed: {e}"))?;
            black_box(answer.into_inner());
        }
        Ok(started.elapsed())
    }
}

/// An SDK client with the target's credentials.
struct SdkLogin {
    client: VideoSessionClient,
    credentials: Credentials,
}

impl SdkLogin {
    /// Over the process-wide `MemoryStore` (named: the default store is a
    /// per-user file, which a benchmark must not write into), or over `store`.
    fn new(target: &VideoTarget, store: Option<std::sync::Arc<dyn LockoutStore>>) -> Result<Self> {
        let store = store.unwrap_or_else(|| MemoryStore::shared());
        let client = VideoSessionClient::builder(BaseUrl::parse(&target.base_url)?)
            .lockout_store(store)
            .build()
            .context("building the video client")?;
        let credentials = Credentials::new(
            target.secret_key.clone(),
            target.user_name.clone(),
            target.password.clone(),
        )?;
        Ok(Self {
            client,
            credentials,
        })
    }

    /// `count` logins one after the other; each must succeed.
    async fn run(&self, count: u64) -> Result<Duration> {
        let started = Instant::now();
        for _ in 0..count {
            let session = self.client.login(&self.credentials).send().await?;
            black_box(session);
        }
        Ok(started.elapsed())
    }
}

/// Baseline logins: `count` sequential logins with the generated
/// `video_session_client::Client` on the plain client; each must succeed.
pub async fn logins_baseline(target: &VideoTarget, count: u64) -> Result<Measurement> {
    let elapsed = GeneratedLogin::new(target)?.run(count).await?;
    Ok(Measurement::new(count, count, elapsed))
}

/// SDK logins: `count` sequential [`VideoSessionClient::login`]s through
/// a lockout guard over the process-wide in-memory store; each must succeed.
pub async fn logins_sdk(target: &VideoTarget, count: u64) -> Result<Measurement> {
    let elapsed = SdkLogin::new(target, None)?.run(count).await?;
    Ok(Measurement::new(count, count, elapsed))
}

/// Both sides of `logins` in this process: `count` logins each, in blocks of `block` (at least
/// 1), the generated client first in even rounds and the SDK first in odd ones (B F F B B F
/// …). Returns (baseline, SDK), each the sum of its blocks.
pub async fn logins_paired(
    target: &VideoTarget,
    count: u64,
    block: u64,
) -> Result<(Measurement, Measurement)> {
    let generated = GeneratedLogin::new(target)?;
    let sdk = SdkLogin::new(target, None)?;
    let block = block.max(1);
    let (mut baseline_time, mut sdk_time) = (Duration::ZERO, Duration::ZERO);
    let mut done = 0;
    let mut round = 0u64;
    while done < count {
        let n = block.min(count - done);
        if round.is_multiple_of(2) {
            baseline_time += generated.run(n).await?;
            sdk_time += sdk.run(n).await?;
        } else {
            sdk_time += sdk.run(n).await?;
            baseline_time += generated.run(n).await?;
        }
        done += n;
        round += 1;
    }
    Ok((
        Measurement::new(count, count, baseline_time),
        Measurement::new(count, count, sdk_time),
    ))
}

/// SDK logins through a `MemoryStore` of their own (the `logins-redis`
/// baseline).
pub async fn logins_memory_store(target: &VideoTarget, count: u64) -> Result<Measurement> {
    let store = std::sync::Arc::new(MemoryStore::new());
    let elapsed = SdkLogin::new(target, Some(store))?.run(count).await?;
    Ok(Measurement::new(count, count, elapsed))
}

/// SDK logins through a `RedisStore` on `target.redis_url` (connected
/// before the clock starts).
pub async fn logins_redis_store(target: &VideoTarget, count: u64) -> Result<Measurement> {
    let url = target
        .redis_url
        .as_deref()
        .context("BENCH_REDIS_URL is not set (the suite starts a redis-server for logins-redis)")?;
    let store = RedisStore::connect(url).await?;
    // The suite's own new server: declared new, as an operator does once.
    store.initialize().await?;
    let elapsed = SdkLogin::new(target, Some(std::sync::Arc::new(store)))?
        .run(count)
        .await?;
    Ok(Measurement::new(count, count, elapsed))
}
