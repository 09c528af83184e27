//! `apictl tour` from start to end. (How long it takes is not asserted: a test must not depend on
//! the machine's speed.)

use crate::common;

use common::Apictl;

#[test]
fn tour_walks_through_every_step_and_exits_0() {
    let apictl = Apictl::new();
    let run = apictl.run_sync(&["tour"]);
    run.expect(0);
    for step in 1..=9 {
        assert!(
            run.stdout.contains(&format!("[{step}/9] ")),
            "step {step} missing:\n{}",
            run.stdout
        );
    }
    for expected in [
        "logged in as demo.user",
        "attempt 6: NOT sent",
        "the fake saw 5 failed logins and started 0 blocks",
        "query string ?m=1&c=2",
        "#3 e-mail to guest@example.com",
        "5000 conversions",
        "line 8   order-20240601-004     0x0000010E",
        "11 rows: 7 stored, 4 rejected",
        "the size matches the fake's file",
        "conversions through both APIs: the same ids",
        "All 9 steps worked",
    ] {
        assert!(
            run.stdout.contains(expected),
            "{expected:?} missing:\n{}",
            run.stdout
        );
    }
    assert!(!run.stdout.contains('\u{2717}'), "{}", run.stdout);
    // Progress bars are hidden when stderr is not a terminal.
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    // The tour cleans up after itself and never touches the real state directory.
    assert!(!apictl.state_dir().exists());
    let leftovers: Vec<_> = std::fs::read_dir(apictl.dir())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("apictl-tour-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
