//! `--help` of every command, as insta snapshots (clap's help does not wrap,
//! and the environment is empty, so the text is stable).

use crate::common;

use common::Apictl;

fn help(args: &[&str]) -> String {
    let mut all: Vec<&str> = args.to_vec();
    all.push("--help");
    let run = Apictl::new().run_sync(&all);
    run.expect(0);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    run.stdout
}

macro_rules! help_snapshot {
    ($name:ident, [$($arg:literal),*]) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), help(&[$($arg),*]));
        }
    };
}

help_snapshot!(apictl, []);
help_snapshot!(tour, ["tour"]);
help_snapshot!(sandbox, ["sandbox"]);
help_snapshot!(video, ["video"]);
help_snapshot!(video_login, ["video", "login"]);
help_snapshot!(video_invite, ["video", "invite"]);
help_snapshot!(video_lockout_status, ["video", "lockout-status"]);
help_snapshot!(video_lockout_init, ["video", "lockout-init"]);
help_snapshot!(ads, ["ads"]);
help_snapshot!(ads_conversions, ["ads", "conversions"]);
help_snapshot!(ads_conversions_list, ["ads", "conversions", "list"]);
help_snapshot!(ads_conversions_upload, ["ads", "conversions", "upload"]);
help_snapshot!(ads_availability, ["ads", "availability"]);
help_snapshot!(ads_id_mapping, ["ads", "id-mapping"]);
help_snapshot!(ads_saved_columns, ["ads", "saved-columns"]);
help_snapshot!(ads_report, ["ads", "report"]);
help_snapshot!(ads_fields, ["ads", "fields"]);

#[test]
fn short_help_is_shorter_and_usage_errors_exit_2() {
    let short = Apictl::new().run_sync(&["-h"]);
    short.expect(0);
    assert!(short.stdout.len() < help(&[]).len());
    let bad = Apictl::new().run_sync(&["video", "invite", "--sms", "+12015550123"]);
    bad.expect(2);
    assert!(bad.stderr.contains("--country"), "{}", bad.stderr);
    let two = Apictl::new().run_sync(&[
        "video",
        "invite",
        "--email",
        "a@b.cd",
        "--sms",
        "+12015550123",
    ]);
    two.expect(2);
}

#[test]
fn password_is_not_a_flag() {
    let run = Apictl::new().run_sync(&["video", "login", "--password", "x"]);
    run.expect(2);
    assert!(
        run.stderr.contains("unexpected argument '--password'"),
        "{}",
        run.stderr
    );
}
