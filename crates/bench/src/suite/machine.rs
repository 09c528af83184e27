//! The machine the numbers come from: CPU, cores, memory, kernel, compiler, load.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use serde::{Deserialize, Serialize};

/// The machine the numbers come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// `model name` of `/proc/cpuinfo`.
    pub cpu: String,
    /// Cores available to this process.
    pub cores: usize,
    /// Total memory in MiB.
    pub memory_mib: Option<u64>,
    /// Kernel release.
    pub kernel: String,
    /// `rustc -V`.
    pub rustc: String,
    /// `/proc/loadavg` before the first scenario.
    pub load_before: String,
    /// `/proc/loadavg` after the last scenario.
    pub load_after: String,
}

impl Machine {
    /// The machine this process runs on; `load_after` is filled in at the end of the run.
    pub(super) fn detect() -> Self {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|l| {
                let (key, value) = l.split_once(':')?;
                (key.trim() == "model name").then(|| value.trim().to_owned())
            })
            .unwrap_or_else(|| "unknown CPU".to_owned());
        let memory_mib = fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
            m.lines().find_map(|l| {
                let kib: u64 = l
                    .strip_prefix("MemTotal:")?
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse()
                    .ok()?;
                Some(kib / 1024)
            })
        });
        let kernel = fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|k| format!("Linux {}", k.trim()))
            .unwrap_or_else(|_| std::env::consts::OS.to_owned());
        let rustc = std::env::var_os("RUSTC")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("rustc"));
        let rustc = Command::new(rustc)
            .arg("-V")
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "rustc (unknown version)".to_owned());
        Self {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            memory_mib,
            kernel,
            rustc,
            load_before: loadavg(),
            load_after: String::new(),
        }
    }

    /// One line for the README.
    pub fn line(&self) -> String {
        let memory = self
            .memory_mib
            .map(|m| format!(", {:.0} GiB RAM", m as f64 / 1024.0))
            .unwrap_or_default();
        format!(
            "{}, {} cores{memory}, {}, {}; load average before {} / after {}",
            self.cpu, self.cores, self.kernel, self.rustc, self.load_before, self.load_after
        )
    }
}

/// `/proc/loadavg`'s three load averages.
pub(super) fn loadavg() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".to_owned())
}

/// The commit of `workspace` (`git describe --always --dirty --abbrev=12`), or `unknown`.
pub(super) fn commit(workspace: &std::path::Path) -> String {
    Command::new("git")
        .arg("-C")
        .arg(workspace)
        .args(["describe", "--always", "--dirty", "--abbrev=12"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}
