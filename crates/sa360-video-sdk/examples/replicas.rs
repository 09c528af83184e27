//! Several replicas of an application log in to the same account, each with its own
//! [`VideoSessionClient`] and its own connection to one Redis server ([`RedisStore`]): the
//! lockout count is shared, so all of them together never send the login whose failure could
//! block the account (more than 5 failures in 10 minutes block it).
//!
//! The replicas run as tasks of this process, but share nothing except the Redis server, as
//! replicas on several hosts would. The program:
//!
//! 1. logs every replica in with the right password, at once;
//! 2. lets every replica try two wrong passwords, at once: the shared count lets exactly 5
//!    failures reach the service and refuses the others without sending them;
//! 3. shows that a further login of any replica is refused too, with the time when trying again
//!    is safe.
//!
//! It exits 1 if more than 5 failures were sent or the service reported the account blocked.
//! Afterwards the account's logins stay paused for 10 minutes in that Redis (that is the
//! point): run it once per sandbox, or against a fresh Redis and sandbox.
//!
//! Run it against the local fakes (see `conversion_report.rs` for `apictl sandbox`) and a Redis
//! server (Debian: `apt-get install redis-server`):
//!
//! ```sh
//! redis-server --port 6390 --save '' --appendonly no &
//! # once, for a Redis that has never held lockout counts (see below)
//! cargo run -p sa360-video-cli -- video lockout-init --lockout-store redis://127.0.0.1:6390/0
//! REDIS_URL=redis://127.0.0.1:6390/0 cargo run -p sa360-video-sdk --example replicas -- --replicas 4
//! ```
//!
//! A Redis store keeps a record that says since when it remembers every attempt; a server
//! without it (new, or one that lost its data) refuses logins for one lockout window, because
//! attempts it may have forgotten can still count at the service. An operator declares a new
//! store once with `apictl video lockout-init` (or `RedisStore::initialize`, which refuses a store
//! that noticed a loss); an application never does it on its own.
//!
//! `REDIS_URL` takes every form `RedisStore` accepts: `rediss://` (TLS),
//! `redis-sentinel://HOST:PORT,…#MASTER`, `redis-cluster://HOST:PORT,…`.
//!
//! Settings (environment): `REDIS_URL`, `VIDEO_SESSION_URL`, `VIDEO_SECRET_KEY`, `VIDEO_USER`,
//! `VIDEO_PASSWORD`.

use std::sync::Arc;

use anyhow::{Context, bail};
use sa360_video_sdk::video_session::{Credentials, Error, RedisStore, VideoSessionClient};

/// What happened to one login attempt.
enum Attempt {
    LoggedIn,
    /// Sent; the service said wrong user name or password.
    Failed,
    /// Not sent: the shared count refused it.
    Refused(String),
    /// The service reported the account blocked: the promise was broken.
    Blocked(String),
}

async fn attempt(
    client: &VideoSessionClient,
    credentials: &Credentials,
) -> anyhow::Result<Attempt> {
    Ok(match client.login(credentials).send().await {
        Ok(_session) => Attempt::LoggedIn,
        Err(Error::InvalidCredentials { .. }) => Attempt::Failed,
        Err(refused @ Error::LockoutRefused { .. }) => Attempt::Refused(refused.to_string()),
        Err(blocked @ Error::AccountBlocked { .. }) => Attempt::Blocked(blocked.to_string()),
        Err(other) => return Err(other).context("login"),
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let env = |name| std::env::var(name).map_err(|_| anyhow::anyhow!("{name} is not set"));
    let replicas: usize = match std::env::args().skip(1).collect::<Vec<_>>().as_slice() {
        [] => 4,
        [flag, n] if flag == "--replicas" => n.parse().context("--replicas")?,
        _ => bail!("usage: replicas [--replicas N]"),
    };
    anyhow::ensure!((1..=64).contains(&replicas), "--replicas must be 1 to 64");
    let (redis_url, base) = (env("REDIS_URL")?, env("VIDEO_SESSION_URL")?);
    let (secret_key, user, password) = (
        env("VIDEO_SECRET_KEY")?,
        env("VIDEO_USER")?,
        env("VIDEO_PASSWORD")?,
    );

    // Each replica: its own Redis connection and its own client, as on its own host.
    let mut clients = Vec::new();
    for _ in 0..replicas {
        let store = RedisStore::connect(&redis_url).await?;
        clients.push(
            VideoSessionClient::builder(&base)
                .lockout_store(Arc::new(store))
                .build()?,
        );
    }
    // Every replica runs `attempts` logins with `password(replica, attempt)`, all at once.
    let round = |attempts: usize, password: Arc<dyn Fn(usize, usize) -> String + Send + Sync>| {
        let tasks: Vec<_> = clients
            .iter()
            .enumerate()
            .flat_map(|(r, client)| (0..attempts).map(move |a| (r, a, client.clone())))
            .map(|(r, a, client)| {
                let credentials =
                    Credentials::new(secret_key.clone(), user.clone(), password(r, a));
                tokio::spawn(async move { attempt(&client, &credentials?).await })
            })
            .collect();
        async move {
            let mut results = Vec::new();
            for task in tasks {
                results.push(task.await??);
            }
            anyhow::Ok(results)
        }
    };

    println!("1. {replicas} replicas log in with the right password");
    let right = password.clone();
    let results = round(1, Arc::new(move |_, _| right.clone())).await?;
    let logged_in = results
        .iter()
        .filter(|a| matches!(a, Attempt::LoggedIn))
        .count();
    println!("   {logged_in} of {replicas} logged in");
    anyhow::ensure!(
        logged_in == replicas,
        "only {logged_in} of {replicas} replicas logged in"
    );

    println!("2. every replica tries two wrong passwords at once");
    let results = round(2, Arc::new(|r, a| format!("wrong-{r}-{a}"))).await?;
    let sent = results
        .iter()
        .filter(|a| matches!(a, Attempt::Failed))
        .count();
    let refused = results
        .iter()
        .filter(|a| matches!(a, Attempt::Refused(_)))
        .count();
    println!("   {sent} failed logins sent, {refused} refused without sending");
    for result in &results {
        if let Attempt::Blocked(message) = result {
            bail!("the service blocked the account: {message}");
        }
    }
    if sent > 5 {
        bail!("{sent} failed logins reached the service: the count was not shared");
    }

    println!("3. a further login of replica 1, with the right password");
    match attempt(&clients[0], &Credentials::new(secret_key, user, password)?).await? {
        Attempt::Refused(message) => println!("   {message}"),
        Attempt::LoggedIn => println!("   logged in (fewer than 5 failures are counted)"),
        Attempt::Failed => bail!("the right password was refused"),
        Attempt::Blocked(message) => bail!("the service blocked the account: {message}"),
    }
    Ok(())
}
