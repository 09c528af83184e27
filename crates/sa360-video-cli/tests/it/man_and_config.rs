//! Issue 50: every manual page at once (`apictl man --all DIR`) with EXIT STATUS and ENVIRONMENT
//! sections, `apictl config list`, and the lockout store in the config file.

use std::collections::BTreeSet;

use crate::common::Apictl;

/// The `apictl-…(1)` pages a page names.
fn references(page: &str) -> BTreeSet<String> {
    page.replace("\\-", "-")
        .split("apictl-")
        .skip(1)
        .filter_map(|rest| rest.split_once("(1)").map(|(name, _)| name))
        .filter(|name| name.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        .map(|name| format!("apictl-{name}"))
        .collect()
}

#[test]
fn man_all_writes_one_page_per_command_that_man_finds() {
    let apictl = Apictl::new();
    let dir = apictl.dir().join("man");
    let run = apictl.run_sync(&["man", "--all", &dir.display().to_string()]);
    run.expect(0);
    let man1 = dir.join("man1");
    let files: BTreeSet<String> = std::fs::read_dir(&man1)
        .expect("DIR/man1")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        run.stderr
            .contains(&format!("wrote {} manual pages", files.len())),
        "{}",
        run.stderr
    );
    // Walk the SUBCOMMANDS references from the top page: every page named exists, and every
    // file written is reached (one page per command, no more, no fewer).
    let mut reached = BTreeSet::from(["apictl".to_owned()]);
    let mut todo = vec!["apictl".to_owned()];
    while let Some(name) = todo.pop() {
        let file = format!("{name}.1");
        assert!(
            files.contains(&file),
            "{name}(1) is named but {file} was not written"
        );
        let page = std::fs::read_to_string(man1.join(&file)).unwrap();
        assert!(
            page.contains(&format!(".TH {} 1", name.to_uppercase())),
            "{file}"
        );
        assert!(page.contains(".SH ENVIRONMENT"), "{file}");
        assert!(page.contains(".SH \"EXIT STATUS\""), "{file}");
        assert!(!page.contains("EXTRA"), "{file}");
        for sub in references(&page) {
            if sub.starts_with(&format!("{name}-")) && reached.insert(sub.clone()) {
                todo.push(sub);
            }
        }
    }
    let expected: BTreeSet<String> = reached.iter().map(|n| format!("{n}.1")).collect();
    assert_eq!(files, expected);
    for page in [
        "apictl-ads-conversions-upload.1",
        "apictl-video-invite.1",
        "apictl-config-list.1",
        "apictl-auth-login.1",
    ] {
        assert!(files.contains(page), "{page}: {files:?}");
    }
    // `man -M DIR apictl-ads` finds the page (where man is installed).
    if let Ok(found) = std::process::Command::new("man")
        .args(["-M", &dir.display().to_string(), "-w", "apictl-ads"])
        .output()
    {
        let path = String::from_utf8_lossy(&found.stdout);
        assert!(
            path.trim().ends_with("man1/apictl-ads.1"),
            "man -w said {path:?}"
        );
    }
    // A page and --all are one or the other.
    apictl
        .run_sync(&["man", "ads", "--all", &dir.display().to_string()])
        .expect(2);
}

#[test]
fn config_list_shows_each_value_and_its_source_never_a_secret() {
    let apictl = Apictl::new()
        .env("SEARCH_ADS_ADVERTISER_ID", "34")
        .env("VIDEO_SECRET_KEY", "sk-ENV-SECRET")
        .env("VIDEO_PASSWORD", "PASSWORD-SECRET");
    let config = apictl.dir().join("config.toml");
    std::fs::write(
        &config,
        "[search_ads]\nagency_id = 12\ntoken = \"ya29.FILE-SECRET\"\n\
         [video]\nuser = \"demo.user\"\nlockout_store = \"redis://:REDIS-SECRET@10.0.0.5:6379/0\"\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let run = apictl.run_sync(&["--config", &config.display().to_string(), "config", "list"]);
    run.expect(0);
    let line = |setting: &str| {
        run.stdout
            .lines()
            .skip(2)
            .find(|l| l.split_whitespace().next() == Some(setting))
            .unwrap_or_else(|| panic!("no {setting} in\n{}", run.stdout))
            .to_owned()
    };
    assert!(line("config").ends_with("flag"), "{}", run.stdout);
    assert!(line("search_ads.agency_id").contains("12"));
    assert!(line("search_ads.agency_id").ends_with("config file"));
    assert!(line("search_ads.advertiser_id").ends_with("environment (SEARCH_ADS_ADVERTISER_ID)"));
    assert!(line("search_ads.url").ends_with("default"));
    assert!(line("search_ads.customer_id").ends_with("unset"));
    assert!(line("search_ads.token").contains("(set, not shown)"));
    assert!(line("video.secret_key").ends_with("environment (VIDEO_SECRET_KEY)"));
    assert!(line("video.password").contains("(set, not shown)"));
    assert!(line("video.lockout_store").contains("redis://***@10.0.0.5:6379/0"));
    assert!(line("video.lockout_store").ends_with("config file"));
    for secret in [
        "sk-ENV-SECRET",
        "PASSWORD-SECRET",
        "ya29.FILE-SECRET",
        "REDIS-SECRET",
    ] {
        assert!(
            !run.stdout.contains(secret),
            "{secret} printed:\n{}",
            run.stdout
        );
        assert!(
            !run.stderr.contains(secret),
            "{secret} printed:\n{}",
            run.stderr
        );
    }
    let json = apictl.run_sync(&[
        "--json",
        "--config",
        &config.display().to_string(),
        "config",
        "list",
    ]);
    json.expect(0);
    let value: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let token = value["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["setting"] == "search_ads.token")
        .unwrap();
    assert_eq!(token["secret"], true);
    assert_eq!(token["source"], "config file");
    assert!(!json.stdout.contains("FILE-SECRET"));
}

/// The config file's `lockout_store` is the store `video login` uses (here one that cannot be
/// reached: refused before anything is sent).
#[test]
fn the_lockout_store_can_be_set_in_the_config_file() {
    let apictl = Apictl::new()
        .env("VIDEO_SESSION_URL", "http://127.0.0.1:9")
        .env("VIDEO_SECRET_KEY", "sk-test")
        .env("VIDEO_USER", "demo.user")
        .env("VIDEO_PASSWORD", "pw");
    let config = apictl.dir().join("config.toml");
    std::fs::write(
        &config,
        "[video]\nlockout_store = \"redis://127.0.0.1:1/0\"\n",
    )
    .unwrap();
    let run = apictl.run_sync(&["--config", &config.display().to_string(), "video", "login"]);
    run.expect(4);
    assert!(run.stderr.contains("nothing was sent"), "{}", run.stderr);
    assert!(run.stderr.contains("127.0.0.1:1"), "{}", run.stderr);
    // `config list` names the store the file set.
    let listed = apictl.run_sync(&["--config", &config.display().to_string(), "config", "list"]);
    assert!(
        listed.stdout.contains("redis://127.0.0.1:1/0"),
        "{}",
        listed.stdout
    );
}
