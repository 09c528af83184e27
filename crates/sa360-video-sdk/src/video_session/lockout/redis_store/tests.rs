use super::*;
use crate::video_session::credentials::Credentials;

#[tokio::test]
async fn settings_are_checked_before_connecting() {
    // Port 1 on loopback: nothing listens, but the settings fail first.
    let cases = [
        (
            RedisStore::builder("redis://127.0.0.1:1").timeout(Duration::ZERO),
            "timeout",
        ),
        (
            RedisStore::builder("redis://127.0.0.1:1").replica_ack_timeout(Duration::from_secs(61)),
            "replica_ack_timeout",
        ),
        (
            RedisStore::builder("redis://127.0.0.1:1").key_prefix("a{b}"),
            "key_prefix",
        ),
        (
            RedisStore::builder("redis://127.0.0.1:1").ca_file("/nonexistent"),
            "ca_file",
        ),
        (
            RedisStore::builder("rediss://127.0.0.1:1").ca_file("/nonexistent"),
            "ca_file",
        ),
    ];
    for (builder, setting) in cases {
        let e = builder.connect().await.unwrap_err();
        assert!(
            e.message.contains(&format!("RedisStoreBuilder::{setting}")),
            "{e}"
        );
    }
    let builder = RedisStore::builder("redis://:pw-in-url@127.0.0.1:1").password("pw-aside");
    assert!(!format!("{builder:?}").contains("pw-"), "{builder:?}");
    let e = builder.connect().await.unwrap_err();
    assert!(e.message.contains("RedisStoreBuilder::password"), "{e}");
    assert!(!e.to_string().contains("pw-"), "{e}");
    let e = RedisStore::connect("redis://:pw-secret@a,b")
        .await
        .unwrap_err();
    assert!(e.to_string().contains("several hosts"), "{e}");
    assert!(!e.to_string().contains("pw-secret"), "{e}");
}

#[test]
fn the_record_of_a_bucket_and_its_accounts_are_one_key() {
    // One key per bucket (a hash): the record and the counts live and die together.
    let key = Credentials::new("sk", "alice", "pw").unwrap().account_key();
    let hex = key.to_string();
    assert_eq!(hex.len(), 64, "the account's field is its 64 hex digits");
    assert_eq!(loss_cause("restart"), StoreLoss::Restarted);
    assert_eq!(loss_cause(""), StoreLoss::NoRecord);
}

#[test]
fn an_init_refusal_says_which_buckets_and_for_how_long() {
    assert_eq!(init_refusal(&[]), None);
    let m = init_refusal(&[
        (b'3', "flush".into(), Some(4_200_000)),
        (b'a', "flush".into(), Some(1)),
    ])
    .unwrap();
    assert!(m.contains("2 of 16 buckets (3a)"), "{m}");
    assert!(m.contains("FLUSHALL") && m.contains("for 5 s more"), "{m}");
    let m = init_refusal(&[(b'0', String::new(), None)]).unwrap();
    assert!(m.contains("hold lockout counts"), "{m}");
}
