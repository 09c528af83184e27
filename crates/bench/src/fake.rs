//! The `sa360-video-fakes` binary as a child process: start it, read its
//! `NAME=value` lines, and kill it when dropped (also on errors and panics).

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};

use crate::scenarios::{SearchAdsTarget, VideoTarget};

/// The last line the fake prints (see `FakeServices::env_vars`).
const LAST_VAR: &str = "SEARCH_ADS_REPORTING_URL";

/// How long a fake may take to print its lines.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// Undoes `sa360_video_client_support::sh_quote` (one word, as `sh` reads it).
pub fn sh_unquote(word: &str) -> Result<String> {
    match shlex::split(word).as_deref() {
        Some([one]) => Ok(one.clone()),
        _ => bail!("not one quoted word: {word:?}"),
    }
}

/// Parses one `NAME=value` line; `None` for anything else.
pub fn parse_var(line: &str) -> Option<(String, String)> {
    let (name, value) = line.trim_end().split_once('=')?;
    let valid = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    if !valid {
        return None;
    }
    sh_unquote(value).ok().map(|v| (name.to_owned(), v))
}

/// The connection values a fake printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FakeVars(pub BTreeMap<String, String>);

impl FakeVars {
    /// The value of `name`.
    pub fn get(&self, name: &str) -> Result<&str> {
        self.0
            .get(name)
            .map(String::as_str)
            .with_context(|| format!("the fake did not print {name}"))
    }

    fn id(&self, name: &str) -> Result<i64> {
        let text = self.get(name)?;
        text.parse()
            .with_context(|| format!("{name}={text:?} is not an integer"))
    }

    /// The search ads side.
    pub fn search_ads(&self) -> Result<SearchAdsTarget> {
        Ok(SearchAdsTarget {
            base_url: self.get("SEARCH_ADS_URL")?.to_owned(),
            token: self.get("SEARCH_ADS_TOKEN")?.to_owned(),
            agency_id: self.id("SEARCH_ADS_AGENCY_ID")?,
            advertiser_id: self.id("SEARCH_ADS_ADVERTISER_ID")?,
            engine_account_id: self.id("SEARCH_ADS_ENGINE_ACCOUNT_ID")?,
            reporting_url: self.get("SEARCH_ADS_REPORTING_URL")?.to_owned(),
            customer_id: self.get("SEARCH_ADS_CUSTOMER_ID")?.to_owned(),
        })
    }

    /// The video side.
    pub fn video(&self) -> Result<VideoTarget> {
        Ok(VideoTarget {
            base_url: self.get("VIDEO_SESSION_URL")?.to_owned(),
            secret_key: self.get("VIDEO_SECRET_KEY")?.to_owned(),
            user_name: self.get("VIDEO_USER")?.to_owned(),
            password: self.get("VIDEO_PASSWORD")?.to_owned(),
            redis_url: self.0.get("BENCH_REDIS_URL").cloned(),
        })
    }
}

/// A running `sa360-video-fakes` process. Dropping it kills the process and
/// waits for it.
#[derive(Debug)]
pub struct FakeProcess {
    child: Child,
    vars: FakeVars,
    /// Kept open so the fake never writes into a closed pipe.
    _stdout: Option<ChildStdout>,
}

impl FakeProcess {
    /// Starts `binary` with `args` on free loopback ports, its log (stderr)
    /// appended to `log`, and waits for its connection lines.
    pub fn start(binary: &Path, args: &[String], log: &Path) -> Result<Self> {
        let log_file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .with_context(|| format!("opening {}", log.display()))?;
        let mut child = Command::new(binary)
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log_file))
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let stdout = child.stdout.take();
        // From here on the child is killed by Drop whatever happens.
        let mut process = Self {
            child,
            vars: FakeVars::default(),
            _stdout: None,
        };
        let Some(stdout) = stdout else {
            bail!("the fake's stdout was not captured");
        };
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut vars = BTreeMap::new();
            let mut line = String::new();
            loop {
                line.clear();
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(Err(vars));
                        return;
                    }
                    Ok(_) => {
                        if let Some((name, value)) = parse_var(&line) {
                            let last = name == LAST_VAR;
                            vars.insert(name, value);
                            if last {
                                let _ = tx.send(Ok((vars, reader.into_inner())));
                                return;
                            }
                        }
                    }
                }
            }
        });
        match rx.recv_timeout(STARTUP_TIMEOUT) {
            Ok(Ok((vars, stdout))) => {
                process.vars = FakeVars(vars);
                process._stdout = Some(stdout);
                Ok(process)
            }
            Ok(Err(partial)) => {
                let status = process.child.try_wait().ok().flatten();
                bail!(
                    "the fake ended its output before {LAST_VAR} (exit status {status:?}, got {:?}); see {}",
                    partial.keys().collect::<Vec<_>>(),
                    log.display()
                )
            }
            Err(_) => bail!(
                "the fake printed no {LAST_VAR} line within {STARTUP_TIMEOUT:?}; see {}",
                log.display()
            ),
        }
    }

    /// Its connection values.
    pub fn vars(&self) -> &FakeVars {
        &self.vars
    }

    /// Its process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for FakeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How a fake process is started: its data sizes and faults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeSpec {
    /// Seeded conversions per engine account.
    pub conversions_per_account: u64,
    /// Size of the ID-mapping file in bytes.
    pub id_mapping_bytes: u64,
    /// Latency added to every search ads answer, in milliseconds.
    pub latency_ms: u64,
    /// Day of the first seeded conversion.
    pub start_date: chrono::NaiveDate,
    /// Synthetic campaigns of each account in the Reporting API's campaign reports
    /// (`--report-campaigns`, SR-22); 0 leaves the flag out.
    pub report_campaigns: u64,
    /// The fake's bench mode (`--forget-conversions`): inserts answered, none kept.
    pub forget_conversions: bool,
}

impl FakeSpec {
    /// The command-line arguments of `sa360-video-fakes`.
    pub fn args(&self) -> Vec<String> {
        let mut args = vec![
            "--seed".to_owned(),
            "42".to_owned(),
            "--conversions-per-account".to_owned(),
            self.conversions_per_account.to_string(),
            // 200 000 conversions fill 50 days from the start date: all inside the v2 read
            // range and the Reporting API's 60-day window (crate::reporting).
            "--conversions-per-day".to_owned(),
            crate::reporting::REPORT_ROWS_PER_DAY.to_string(),
            "--start-date".to_owned(),
            self.start_date.to_string(),
            "--id-mapping-bytes".to_owned(),
            self.id_mapping_bytes.to_string(),
        ];
        if self.report_campaigns > 0 {
            args.extend([
                "--report-campaigns".to_owned(),
                self.report_campaigns.to_string(),
            ]);
        }
        if self.forget_conversions {
            args.push("--forget-conversions".to_owned());
        }
        if self.latency_ms > 0 {
            args.extend([
                "--latency-ms".to_owned(),
                self.latency_ms.to_string(),
                // Both services: the search ads scenarios read and upload, the video one logs in.
                "--fault-target".to_owned(),
                "both".to_owned(),
            ]);
        }
        args
    }
}

/// Where a fake's log goes: `<dir>/fake-<name>.log`.
pub fn log_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("fake-{name}.log"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unquotes_what_sh_quote_produces() {
        for value in [
            "plain",
            "http://127.0.0.1:8/x",
            "",
            "it's",
            "a b",
            "''",
            "x'y'z",
        ] {
            let quoted = sa360_video_client_support::sh_quote(value);
            assert_eq!(sh_unquote(&quoted).unwrap(), value, "{quoted}");
        }
        assert!(sh_unquote("'open").is_err());
    }

    #[test]
    fn parses_only_assignments() {
        assert_eq!(
            parse_var("VIDEO_USER='demo user'\n"),
            Some(("VIDEO_USER".into(), "demo user".into()))
        );
        assert_eq!(parse_var("2024-01-01T00:00 INFO x=y"), None);
        assert_eq!(parse_var("no assignment"), None);
    }

    #[test]
    fn latency_adds_fault_flags_for_search_ads_only() {
        let spec = FakeSpec {
            conversions_per_account: 10,
            id_mapping_bytes: 1000,
            latency_ms: 20,
            start_date: chrono::NaiveDate::from_ymd_opt(2026, 9, 1).unwrap(),
            report_campaigns: 0,
            forget_conversions: false,
        };
        let args = spec.args().join(" ");
        assert!(
            args.contains("--latency-ms 20 --fault-target both"),
            "{args}"
        );
        let plain = FakeSpec {
            latency_ms: 0,
            ..spec
        };
        assert!(!plain.args().join(" ").contains("latency"));
        assert!(!plain.args().join(" ").contains("report-campaigns"));
        assert!(!plain.args().join(" ").contains("forget"));
        let bench = FakeSpec {
            forget_conversions: true,
            ..plain.clone()
        };
        assert!(bench.args().join(" ").ends_with("--forget-conversions"));
        let campaigns = FakeSpec {
            report_campaigns: 3_996,
            ..plain
        };
        assert!(
            campaigns
                .args()
                .join(" ")
                .contains("--report-campaigns 3996")
        );
    }
}
