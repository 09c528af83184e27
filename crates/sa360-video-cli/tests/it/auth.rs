//! `apictl auth` and the credentials of `apictl ads` (issue 25): the sandbox's printed sign-in
//! settings, `auth login --no-browser` with the test playing the browser, `auth status`,
//! `auth revoke`, and the `auth login` hint (without a secret) when the refresh token is revoked
//! or tampered with. A headless Chromium runs the same sign-in where it is installed.

use crate::common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{Apictl, Run};
use sa360_video_fakes::FakeServices;

/// Kills a child when the test ends, pass or fail.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Lines of a child's stream, read on a thread.
fn lines(stream: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The secrets of the fake's sign-in that must never be printed.
fn secrets(services: &FakeServices) -> Vec<String> {
    let user = services.search_ads.authorized_user();
    vec![user.client_secret.clone(), user.refresh_token.clone()]
}

#[track_caller]
fn assert_no_secret(run: &Run, secrets: &[String]) {
    for s in secrets
        .iter()
        .map(String::as_str)
        .chain(["ya29.", "1//fake-", "4/fake-"])
    {
        assert!(
            !run.stdout.contains(s) && !run.stderr.contains(s),
            "{s:?} printed:\n{}\n{}",
            run.stdout,
            run.stderr
        );
    }
}

/// Plays the browser: GET the authorization URL, follow its redirect to the loopback listener.
async fn play_browser(url: &str) {
    sa360_video_client_support::install_crypto_provider();
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("builds");
    let consent = browser.get(url).send().await.expect("the consent page");
    assert_eq!(consent.status(), 302);
    let location = consent.headers()["location"]
        .to_str()
        .expect("text")
        .to_owned();
    assert!(location.starts_with("http://127.0.0.1:"), "{location}");
    let done = browser
        .get(&location)
        .send()
        .await
        .expect("the listener answers");
    assert_eq!(done.status(), 200);
}

/// Runs `apictl auth login` with `args`; `browse` gets the URL it prints and plays the browser.
async fn login<F, Fut>(apictl: &Apictl, args: &[&str], browse: F) -> Run
where
    F: FnOnce(String) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut all = vec!["auth", "login"];
    all.extend_from_slice(args);
    let mut child = apictl
        .command(&all)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn apictl auth login");
    let out = lines(child.stdout.take().expect("stdout"));
    let err = lines(child.stderr.take().expect("stderr"));
    let mut child = Killed(child);
    let mut stderr = Vec::new();
    let url = loop {
        let line = tokio::task::block_in_place(|| err.recv_timeout(Duration::from_secs(60)))
            .expect("apictl printed the sign-in URL");
        stderr.push(line.clone());
        if let Some(start) = line.find("http://")
            && line.contains("/o/oauth2/v2/auth?")
        {
            break line[start..].trim().to_owned();
        }
    };
    browse(url).await;
    let status = tokio::task::block_in_place(|| child.0.wait()).expect("apictl ends");
    // The reader threads may still be forwarding the last lines: read each stream to its end
    // (apictl has exited, so its pipes close), within a bound in case a process it started
    // still holds one open.
    let rest = |rx: &mpsc::Receiver<String>| {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let mut lines = Vec::new();
        tokio::task::block_in_place(|| {
            while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
                match rx.recv_timeout(left) {
                    Ok(line) => lines.push(line),
                    Err(_) => break,
                }
            }
        });
        lines
    };
    let stdout = rest(&out);
    stderr.extend(rest(&err));
    Run {
        code: status.code().unwrap_or(-1),
        stdout: stdout.join("\n"),
        stderr: stderr.join("\n"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_status_revoke_and_a_revoked_token_gives_the_login_hint() {
    let services = FakeServices::start_default().await.expect("fakes");
    let secrets = secrets(&services);
    let apictl = Apictl::with_fakes(&services)
        .without("SEARCH_ADS_TOKEN")
        .env(
            "SEARCH_ADS_CLIENT_ID",
            services.search_ads.authorized_user().client_id.clone(),
        )
        .env("SEARCH_ADS_CLIENT_SECRET", secrets[0].clone())
        .env("SEARCH_ADS_AUTH_URL", services.search_ads.authorize_url())
        .env("SEARCH_ADS_REVOKE_URL", services.search_ads.revoke_url())
        // No ADC here: the metadata server is a closed port.
        .env("GCE_METADATA_HOST", "127.0.0.1:9");
    let run = login(
        &apictl,
        &["--no-browser", "--wait", "60"],
        |url| async move { play_browser(&url).await },
    )
    .await;
    run.expect(0);
    assert!(run.stdout.contains("signed in"), "{}", run.stdout);
    assert_no_secret(&run, &secrets);
    let file = apictl.state_dir().join("search-ads-authorized-user.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file)
            .expect("written")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).expect("readable")).expect("JSON");
    assert_eq!(saved["type"], "authorized_user");
    assert_eq!(saved["token_uri"], services.search_ads.token_url());

    let status = apictl.run(&["auth", "status"]).await;
    status.expect(0);
    assert!(
        status.stdout.contains("credential: authorized_user"),
        "{}",
        status.stdout
    );
    assert!(
        status.stdout.contains("`apictl auth login`"),
        "{}",
        status.stdout
    );
    assert!(status.stdout.contains("valid until"), "{}", status.stdout);
    assert_no_secret(&status, &secrets);
    let columns = apictl.run(&["ads", "saved-columns"]).await;
    columns.expect(0);

    // Issue 36: the file `auth login` writes is the one Application Default Credentials read
    // when GOOGLE_APPLICATION_CREDENTIALS names it, and `login` and `status` say so.
    let export = format!("export GOOGLE_APPLICATION_CREDENTIALS={}", file.display());
    assert!(run.stdout.contains(&export), "{}", run.stdout);
    assert!(status.stdout.contains(&export), "{}", status.stdout);
    let adc = sa360_video_sdk::search_ads::DefaultCredentials::builder()
        .env_var(
            "GOOGLE_APPLICATION_CREDENTIALS",
            Some(file.display().to_string()),
        )
        .build()
        .expect("the login file is an ADC file");
    assert_eq!(
        adc.kind(),
        sa360_video_sdk::search_ads::CredentialKind::AuthorizedUser
    );
    let account = &services.search_ads.accounts()[0];
    sa360_video_sdk::search_ads::SearchAdsClient::builder(adc)
        .base_url(services.search_ads.base_url())
        .build()
        .expect("builds")
        .saved_columns(
            sa360_video_sdk::search_ads::AgencyId::new(account.agency_id),
            sa360_video_sdk::search_ads::AdvertiserId::new(account.advertiser_id),
        )
        .send()
        .await
        .expect("the login file's credentials work through ADC");

    let kept = std::fs::read(&file).expect("readable");
    let revoke = apictl.run(&["auth", "revoke"]).await;
    revoke.expect(0);
    assert!(
        revoke.stdout.contains("revoked the refresh token"),
        "{}",
        revoke.stdout
    );
    assert!(!file.exists(), "the file is deleted");
    assert_no_secret(&revoke, &secrets);

    // The revoked credentials again (a copy left behind): invalid_grant, the login hint.
    std::fs::write(&file, &kept).expect("restored");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    }
    let refused = apictl.run(&["ads", "saved-columns"]).await;
    refused.expect(5);
    assert!(
        refused.stderr.contains("invalid_grant"),
        "{}",
        refused.stderr
    );
    assert!(
        refused
            .stderr
            .contains("hint: sign in again with `apictl auth login`"),
        "{}",
        refused.stderr
    );
    assert_no_secret(&refused, &secrets);
    let kept_text = String::from_utf8_lossy(&kept).into_owned();
    let refresh = serde_json::from_str::<serde_json::Value>(&kept_text).unwrap()["refresh_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!refused.stderr.contains(&refresh));

    // Without any credentials, the metadata server is the last step; its error names the others.
    std::fs::remove_file(&file).expect("removed");
    let none = apictl.run(&["ads", "saved-columns"]).await;
    none.expect(5);
    assert!(none.stderr.contains("apictl auth login"), "{}", none.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tampered_refresh_token_in_google_application_credentials_gives_the_login_hint() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services).without("SEARCH_ADS_TOKEN");
    let mut file: serde_json::Value =
        serde_json::from_str(&services.search_ads.authorized_user_json()).expect("JSON");
    file["refresh_token"] = "1//tampered-refresh-token".into();
    let path = apictl.dir().join("adc.json");
    std::fs::write(&path, file.to_string()).expect("written");
    let run = apictl
        .run_with(
            &["ads", "saved-columns"],
            &[("GOOGLE_APPLICATION_CREDENTIALS", path.to_str().unwrap())],
        )
        .await;
    run.expect(5);
    assert!(run.stderr.contains("apictl auth login"), "{}", run.stderr);
    assert!(run.stderr.contains("7 days"), "{}", run.stderr);
    assert!(
        !run.stderr.contains("tampered-refresh-token"),
        "{}",
        run.stderr
    );
    assert_no_secret(&run, &secrets(&services));
}

#[test]
fn the_sandbox_prints_sign_in_settings_that_every_ads_command_uses() {
    let base = Apictl::new();
    let mut child = base
        .command(&["sandbox"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the sandbox");
    let out = lines(child.stdout.take().expect("stdout"));
    let _err = lines(child.stderr.take().expect("stderr"));
    let _sandbox = Killed(child);
    let mut vars = HashMap::new();
    while !vars.contains_key("SEARCH_ADS_REVOKE_URL") {
        let line = out
            .recv_timeout(Duration::from_secs(60))
            .expect("the sandbox printed its settings");
        let (name, value) = line.split_once('=').expect("NAME=value");
        vars.insert(name.to_owned(), value.trim_matches('\'').to_owned());
    }
    for name in [
        "GOOGLE_APPLICATION_CREDENTIALS",
        "SEARCH_ADS_CLIENT_ID",
        "SEARCH_ADS_CLIENT_SECRET",
        "SEARCH_ADS_AUTH_URL",
    ] {
        assert!(vars.contains_key(name), "{name} missing: {vars:?}");
    }
    let credentials = std::path::PathBuf::from(&vars["GOOGLE_APPLICATION_CREDENTIALS"]);
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&credentials).expect("the file exists"))
            .expect("JSON");
    assert_eq!(file["type"], "authorized_user");
    let refresh = file["refresh_token"]
        .as_str()
        .expect("a refresh token")
        .to_owned();
    let client_secret = vars["SEARCH_ADS_CLIENT_SECRET"].clone();

    let mut apictl = Apictl::new();
    for (name, value) in &vars {
        if name != "SEARCH_ADS_TOKEN" {
            apictl = apictl.env(name, value.clone());
        }
    }
    let dir = apictl.dir().to_owned();
    let csv = dir.join("sample.csv");
    std::fs::copy(common::sample_csv(), &csv).expect("copied");
    let path = |p: &std::path::Path| p.display().to_string();
    let secrets = [refresh, client_secret];
    let mut runs = vec![];
    let status = apictl.run_sync(&["auth", "status"]);
    status.expect(0);
    assert!(
        status.stdout.contains("GOOGLE_APPLICATION_CREDENTIALS"),
        "{}",
        status.stdout
    );
    assert!(
        status.stdout.contains("credential: authorized_user"),
        "{}",
        status.stdout
    );
    runs.push(status);
    let list = apictl.run_sync(&[
        "ads",
        "conversions",
        "list",
        "--api",
        "v2",
        "--from",
        "2024-01-01",
        "--to",
        "2024-01-31",
        "--format",
        "csv",
        "-o",
        &path(&dir.join("jan.csv")),
    ]);
    list.expect(0);
    runs.push(list);
    let upload = apictl.run_sync(&["ads", "conversions", "upload", &path(&csv)]);
    upload.expect(3); // the sample has rows the service rejects on purpose
    runs.push(upload);
    let ids = apictl.run_sync(&["ads", "id-mapping", "-o", &path(&dir.join("ids.csv"))]);
    ids.expect(0);
    runs.push(ids);
    let columns = apictl.run_sync(&["ads", "saved-columns", "-vvv"]);
    columns.expect(0);
    runs.push(columns);
    for run in &runs {
        for s in &secrets {
            assert!(
                !run.stdout.contains(s.as_str()) && !run.stderr.contains(s.as_str()),
                "{run:?}"
            );
        }
        assert!(
            !run.stderr.contains("ya29."),
            "an access token in -vvv: {}",
            run.stderr
        );
    }
}

/// The same sign-in in a real browser: headless Chromium opened by `apictl auth login` as the
/// system browser (`$BROWSER`). Skipped (printing SKIPPED) where Chromium is not installed,
/// unless REQUIRE_CHROMIUM=1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_in_headless_chromium() {
    let chromium = ["chromium", "chromium-browser"].into_iter().find(|c| {
        std::process::Command::new(c)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    let Some(chromium) = chromium else {
        assert!(
            std::env::var("REQUIRE_CHROMIUM").as_deref() != Ok("1"),
            "REQUIRE_CHROMIUM=1 but no chromium is installed"
        );
        eprintln!("SKIPPED login_in_headless_chromium: no chromium (apt-get install chromium)");
        return;
    };
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services).without("SEARCH_ADS_TOKEN");
    let profile = apictl.dir().join("chromium-profile");
    // $BROWSER takes one program: a script that records its process id (Chromium's, after
    // `exec`) and starts Chromium headless on the URL.
    let script = apictl.dir().join("browser.sh");
    let pid_file = apictl.dir().join("chromium.pid");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho $$ > {}\nexec {chromium} --headless=new --no-sandbox --disable-gpu \
             --no-first-run --disable-background-networking --disable-component-update \
             --disable-sync --user-data-dir={} \"$1\" >/dev/null 2>&1\n",
            pid_file.display(),
            profile.display()
        ),
    )
    .expect("written");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let apictl = apictl
        .env("BROWSER", script.display().to_string())
        .env(
            "SEARCH_ADS_CLIENT_ID",
            services.search_ads.authorized_user().client_id.clone(),
        )
        .env(
            "SEARCH_ADS_CLIENT_SECRET",
            services.search_ads.authorized_user().client_secret.clone(),
        )
        .env("SEARCH_ADS_AUTH_URL", services.search_ads.authorize_url());
    let run = login(&apictl, &["--wait", "240"], |_url| async {}).await;
    // Chromium outlives apictl: end the one this test started, by its process id.
    if let Ok(pid) = std::fs::read_to_string(&pid_file) {
        let _ = std::process::Command::new("kill").arg(pid.trim()).status();
    }
    run.expect(0);
    assert!(run.stdout.contains("signed in"), "{}", run.stdout);
    let columns = apictl.run(&["ads", "saved-columns"]).await;
    columns.expect(0);
}

/// Issue 36: an ADC file's `quota_project_id` reaches the API as `x-goog-user-project` (not the
/// token endpoint); `GOOGLE_CLOUD_QUOTA_PROJECT` wins; `auth status` shows which.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quota_project_of_an_adc_file_is_sent_and_shown() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services).without("SEARCH_ADS_TOKEN");
    let mut file: serde_json::Value =
        serde_json::from_str(&services.search_ads.authorized_user_json()).expect("JSON");
    file["quota_project_id"] = "billed-project-1".into();
    let path = apictl.dir().join("adc.json");
    std::fs::write(&path, file.to_string()).expect("written");
    let adc = [("GOOGLE_APPLICATION_CREDENTIALS", path.to_str().unwrap())];
    let run = apictl.run_with(&["ads", "saved-columns"], &adc).await;
    run.expect(0);
    assert_eq!(
        services.search_ads.user_projects(),
        vec![Some("billed-project-1".to_owned())]
    );
    assert_eq!(
        services
            .search_ads
            .oauth_counts()
            .user_project_on_token_requests,
        0
    );
    let status = apictl.run_with(&["auth", "status"], &adc).await;
    status.expect(0);
    assert!(
        status.stdout.contains("quota:      billed-project-1"),
        "{}",
        status.stdout
    );
    let env = [adc[0], ("GOOGLE_CLOUD_QUOTA_PROJECT", "env-project-2")];
    let status = apictl.run_with(&["--json", "auth", "status"], &env).await;
    status.expect(0);
    let shown: serde_json::Value = serde_json::from_str(&status.stdout).expect("JSON");
    assert_eq!(shown["quota_project"], "env-project-2");
}

/// Issue 36: off Google Cloud, a metadata address that accepts and never answers made
/// `auth status` wait 30 s and `ads saved-columns` 121 s. Now each process probes it once, within
/// a few seconds, and says there is no credentials source.
#[test]
fn a_silent_metadata_address_costs_a_few_seconds_per_command() {
    // Bound and never accepted: connections complete, nothing ever answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bound");
    let address = silent.local_addr().expect("address").to_string();
    let apictl = Apictl::new()
        .env("SEARCH_ADS_URL", "http://127.0.0.1:9/doubleclicksearch/v2")
        .env("SEARCH_ADS_AGENCY_ID", "1")
        .env("SEARCH_ADS_ADVERTISER_ID", "2")
        .env("GCE_METADATA_HOST", address.clone());
    for args in [&["auth", "status"][..], &["ads", "saved-columns"][..]] {
        let run = test_support::run_measured(apictl.command(args), Duration::from_secs(60));
        assert!(
            run.elapsed < Duration::from_secs(8),
            "{args:?} took {:?}\n{}",
            run.elapsed,
            run.stderr
        );
        assert_eq!(run.code, Some(5), "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("no credentials") && run.stderr.contains(&address),
            "{args:?}: {}",
            run.stderr
        );
        // One sentence and one hint, each piece of advice once (issue 50: ~500 characters
        // that said the same twice).
        assert_eq!(
            run.stderr.matches("apictl auth login").count(),
            1,
            "{}",
            run.stderr
        );
        assert_eq!(run.stderr.lines().count(), 2, "{}", run.stderr);
        assert!(
            run.stderr.len() < 320,
            "{} characters: {}",
            run.stderr.len(),
            run.stderr
        );
    }
    drop(silent);
}

/// A token endpoint that answers every request with `status` and `body` (plain threads).
fn token_endpoint_answering(status: &'static str, body: &'static str) -> std::net::SocketAddr {
    use std::io::{Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bound");
    let addr = listener.local_addr().expect("address");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                // The request head and its (small) form body.
                while let Ok(n) = stream.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    head.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&head);
                    if let Some((h, rest)) = text.split_once("\r\n\r\n") {
                        let length = h
                            .lines()
                            .find_map(|l| {
                                let (name, value) = l.split_once(':')?;
                                name.eq_ignore_ascii_case("content-length")
                                    .then(|| value.trim().parse::<usize>().ok())?
                            })
                            .unwrap_or(0);
                        if rest.len() >= length {
                            break;
                        }
                    }
                }
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    addr
}

/// Issue 36: a token endpoint's error text reached the terminal raw, so escape sequences in it
/// could recolour the terminal or set its title. Now they are printed escaped; the 401 names the
/// credentials file and its `token_uri`.
#[test]
fn escape_sequences_in_a_token_error_are_printed_escaped() {
    let addr = token_endpoint_answering(
        "401 Unauthorized",
        r#"{"error":"invalid_client","error_description":"\u001b]0;pwned\u0007\u001b[31mThe OAuth client was not found.\u009b2J"}"#,
    );
    let apictl = Apictl::new();
    let path = apictl.dir().join("adc.json");
    let token_uri = format!("http://{addr}/token");
    std::fs::write(
        &path,
        serde_json::json!({
            "type": "authorized_user",
            "client_id": "c",
            "client_secret": "s",
            "refresh_token": "r",
            "token_uri": token_uri,
        })
        .to_string(),
    )
    .expect("written");
    // apictl pointed at loopback (as at the fakes) lets the file's token_uri be there.
    let apictl = apictl
        .env("GOOGLE_APPLICATION_CREDENTIALS", path.display().to_string())
        .env("SEARCH_ADS_URL", format!("http://{addr}"));
    let run = apictl.run_sync(&["auth", "status"]);
    run.expect(5);
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(
        !all.contains('\u{1b}') && !all.contains('\u{7}') && !all.contains('\u{9b}'),
        "raw control characters printed: {all:?}"
    );
    assert!(
        run.stderr.contains("\\u{1b}]0;pwned\\u{7}"),
        "{:?}",
        run.stderr
    );
    assert!(run.stderr.contains("invalid_client"), "{}", run.stderr);
    assert!(run.stderr.contains(&token_uri), "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("credentials file {}", path.display())),
        "the 401 names the file: {}",
        run.stderr
    );
}

/// Issue 36: with no browser on this machine (SSH), `auth login --no-browser` prints the URL to open
/// anywhere and takes the address the browser was finally sent to, pasted back on stdin (the
/// loopback redirect completed by hand), with the same state and PKCE checks. A pasted address
/// with another state is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_without_a_browser_takes_the_pasted_redirect() {
    use std::io::Write as _;
    let services = FakeServices::start_default().await.expect("fakes");
    let secrets = secrets(&services);
    let apictl = Apictl::with_fakes(&services)
        .without("SEARCH_ADS_TOKEN")
        .env(
            "SEARCH_ADS_CLIENT_ID",
            services.search_ads.authorized_user().client_id.clone(),
        )
        .env("SEARCH_ADS_CLIENT_SECRET", secrets[0].clone())
        .env("SEARCH_ADS_AUTH_URL", services.search_ads.authorize_url())
        .env("SEARCH_ADS_REVOKE_URL", services.search_ads.revoke_url());
    // The browser on "another machine": it follows the consent page but not the redirect.
    let redirect_of = |url: String| async move {
        sa360_video_client_support::install_crypto_provider();
        let browser = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("builds");
        let consent = browser.get(&url).send().await.expect("the consent page");
        assert_eq!(consent.status(), 302);
        consent.headers()["location"]
            .to_str()
            .expect("text")
            .to_owned()
    };
    for forged in [true, false] {
        let mut child = apictl
            .command(&["auth", "login", "--no-browser", "--wait", "30"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn apictl auth login");
        let mut stdin = child.stdin.take().expect("stdin");
        let out = lines(child.stdout.take().expect("stdout"));
        let err = lines(child.stderr.take().expect("stderr"));
        let mut child = Killed(child);
        let mut stderr = Vec::new();
        let url = loop {
            let line = tokio::task::block_in_place(|| err.recv_timeout(Duration::from_secs(60)))
                .expect("apictl printed the sign-in URL");
            stderr.push(line.clone());
            if let Some(start) = line.find("http://")
                && line.contains("/o/oauth2/v2/auth?")
            {
                break line[start..].trim().to_owned();
            }
        };
        let mut location = redirect_of(url).await;
        if forged {
            let (_, after) = location.split_once("state=").expect("a state");
            let state = after.split('&').next().expect("a value").to_owned();
            location = location.replace(&state, "forged-state");
        }
        writeln!(stdin, "{location}").expect("pasted");
        let started = std::time::Instant::now();
        let status = tokio::task::block_in_place(|| child.0.wait()).expect("apictl ends");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "it took the paste"
        );
        let stdout: Vec<String> = out.try_iter().collect();
        stderr.extend(err.try_iter());
        let run = Run {
            code: status.code().unwrap_or(-1),
            stdout: stdout.join("\n"),
            stderr: stderr.join("\n"),
        };
        assert_no_secret(&run, &secrets);
        if forged {
            assert_eq!(run.code, 1, "{}", run.stderr);
            assert!(run.stderr.contains("state"), "{}", run.stderr);
        } else {
            assert_eq!(run.code, 0, "{}", run.stderr);
            assert!(run.stderr.contains("paste"), "{}", run.stderr);
        }
    }
    let status = apictl.run(&["auth", "status"]).await;
    status.expect(0);
    assert!(
        status.stdout.contains("`apictl auth login`"),
        "{}",
        status.stdout
    );
}

/// Issue 36: the files `gcloud auth application-default login --impersonate-service-account`
/// and workload identity federation write drive `apictl ads` commands against the fakes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impersonated_and_external_account_files_drive_ads_commands() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services).without("SEARCH_ADS_TOKEN");
    let fake = &services.search_ads;
    let source: serde_json::Value =
        serde_json::from_str(&fake.authorized_user_json()).expect("JSON");
    let target = "apictl@project.iam.gserviceaccount.com";
    let subject = apictl.dir().join("oidc-token");
    std::fs::write(&subject, "eyJhbGciOiJSUzI1NiJ9.k8s.sig").expect("written");
    let files = [
        (
            "impersonated_service_account",
            serde_json::json!({
                "type": "impersonated_service_account",
                "service_account_impersonation_url": fake.impersonation_url(target),
                "delegates": [],
                "source_credentials": source,
            }),
        ),
        (
            "external_account",
            serde_json::json!({
                "type": "external_account",
                "audience": "//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/pool/providers/k8s",
                "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
                "token_url": fake.sts_token_url(),
                "service_account_impersonation_url": fake.impersonation_url(target),
                "credential_source": {"file": subject, "format": {"type": "text"}},
            }),
        ),
    ];
    for (kind, json) in files {
        let path = apictl.dir().join(format!("{kind}.json"));
        std::fs::write(&path, json.to_string()).expect("written");
        let adc = [("GOOGLE_APPLICATION_CREDENTIALS", path.to_str().unwrap())];
        apictl
            .run_with(&["ads", "saved-columns"], &adc)
            .await
            .expect(0);
        let status = apictl.run_with(&["auth", "status"], &adc).await;
        status.expect(0);
        assert!(
            status.stdout.contains(&format!("credential: {kind}")),
            "{}",
            status.stdout
        );
    }
}

/// Issue 48: the loopback listener served 32 connections and closed any more, so 32 idle
/// connections from any local process made the real redirect fail. Now `apictl auth login`
/// completes while 64 idle connections hold its listener (a new connection closes the oldest).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_completes_while_sixty_four_idle_connections_hold_the_listener() {
    let services = FakeServices::start_default().await.expect("fakes");
    let secrets = secrets(&services);
    let apictl = Apictl::with_fakes(&services)
        .without("SEARCH_ADS_TOKEN")
        .env(
            "SEARCH_ADS_CLIENT_ID",
            services.search_ads.authorized_user().client_id.clone(),
        )
        .env("SEARCH_ADS_CLIENT_SECRET", secrets[0].clone())
        .env("SEARCH_ADS_AUTH_URL", services.search_ads.authorize_url())
        .env("SEARCH_ADS_REVOKE_URL", services.search_ads.revoke_url());
    let run = login(
        &apictl,
        &["--no-browser", "--wait", "60"],
        |url| async move {
            // The listener's port, from the URL's redirect_uri=http%3A%2F%2F127.0.0.1%3APORT%2F.
            let (_, after) = url
                .split_once("127.0.0.1%3A")
                .expect("a loopback redirect_uri");
            let port: u16 = after
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|p| p.parse().ok())
                .expect("a port");
            let idle: Vec<_> = (0..64)
                .map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).expect("connects"))
                .collect();
            play_browser(&url).await;
            drop(idle);
        },
    )
    .await;
    run.expect(0);
    assert!(run.stdout.contains("signed in"), "{}", run.stdout);
    assert_no_secret(&run, &secrets);
}
