//! `apictl completions SHELL` and `apictl man [COMMAND...]` / `apictl man --all DIR`:
//! generated from the clap definitions in `crate::cli`, so they never drift from `--help`.
//!
//! Each manual page has clap_mangen's sections (NAME, SYNOPSIS, DESCRIPTION, OPTIONS,
//! SUBCOMMANDS, VERSION) and apictl's own: ENVIRONMENT (the variables of the command's flags,
//! and those no flag stands for), EXIT STATUS (the table of `crate::exit`), and on the top page
//! FILES (where settings and state live).

use std::path::Path;

use clap::CommandFactory as _;
use roff::{Roff, bold, roman};

use crate::cli::{AFTER_HELP, Cli, CompletionsArgs, ManArgs};
use crate::error::{AppError, AppResult, io_error};
use crate::exit::{EXIT_TABLE, EXIT_USAGE};
use crate::output;

/// Variables apictl reads that no flag stands for: the name, the commands they concern (the
/// first words after `apictl`; empty: every command) and what they do.
const OTHER_VARIABLES: &[(&str, &[&str], &str)] = &[
    (
        "XDG_CONFIG_HOME",
        &[],
        "Where the default config file is: $XDG_CONFIG_HOME/apictl/config.toml, else ~/.config/apictl/config.toml.",
    ),
    (
        "XDG_STATE_HOME",
        &[],
        "Where the state directory ($XDG_STATE_HOME/apictl) and the per-user lockout file ($XDG_STATE_HOME/sa360-video-sdk/video-session-lockout.json) are, else under ~/.local/state.",
    ),
    (
        crate::video::PASSWORD_ENV,
        &["video login"],
        "The video session password (never a flag or the config file); without it apictl asks on the terminal.",
    ),
    (
        crate::video::STORE_PASSWORD_ENV,
        &["video"],
        "The password of the Redis lockout store, instead of one in its URL.",
    ),
    (
        sa360_video_sdk::search_ads::auth::CREDENTIALS_ENV,
        &["ads", "auth", "config"],
        "Application Default Credentials: a credentials file (authorized_user, service_account, impersonated_service_account or external_account).",
    ),
    (
        "CLOUDSDK_CONFIG",
        &["ads", "auth", "config"],
        "gcloud's configuration directory, where Application Default Credentials look for application_default_credentials.json (else ~/.config/gcloud).",
    ),
    (
        sa360_video_sdk::search_ads::auth::METADATA_HOST_ENV,
        &["ads", "auth"],
        "The host of Google Cloud's metadata server, the last step of Application Default Credentials.",
    ),
    (
        sa360_video_sdk::search_ads::auth::METADATA_IP_ENV,
        &["ads", "auth"],
        "The address probed to tell whether the metadata server is there (default 169.254.169.254).",
    ),
    (
        sa360_video_sdk::search_ads::auth::NO_GCE_CHECK_ENV,
        &["ads", "auth"],
        "true: never ask the metadata server.",
    ),
    (
        sa360_video_sdk::search_ads::auth::QUOTA_PROJECT_ENV,
        &["ads", "auth"],
        "The quota project sent as x-goog-user-project (else the credentials file's quota_project_id).",
    ),
    (
        crate::auth::credentials::ANY_TOKEN_HOST_ENV,
        &["ads", "auth"],
        "1: let an Application Default Credentials file send its secrets to token URLs on any host, not only Google's (only for files you wrote).",
    ),
    (
        "BROWSER",
        &["auth login"],
        "The program that opens the sign-in page.",
    ),
];

/// Prints the completion script of `args.shell` on stdout.
pub fn completions(args: &CompletionsArgs) -> AppResult<u8> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "apictl", &mut script);
    write_stdout(&script)?;
    Ok(0)
}

/// Prints the manual page (roff) of apictl, or of the command `args.command`
/// names (`ads conversions upload` → the page `apictl-ads-conversions-upload`);
/// with `--all DIR`, writes every page into `DIR/man1`.
pub fn man(args: &ManArgs) -> AppResult<u8> {
    let mut command = without_help_subcommands(Cli::command());
    command.build();
    if let Some(dir) = &args.all {
        return write_all(&command, dir);
    }
    let mut page = command;
    let mut path = vec!["apictl".to_owned()];
    for name in &args.command {
        let Some(sub) = page.find_subcommand(name).cloned() else {
            let known: Vec<&str> = page
                .get_subcommands()
                .map(clap::Command::get_name)
                .collect();
            return Err(
                AppError::new(format!("`{} {name}` is not a command", path.join(" ")))
                    .hint(if known.is_empty() {
                        format!("`{}` has no subcommands", path.join(" "))
                    } else {
                        format!("commands of `{}`: {}", path.join(" "), known.join(", "))
                    })
                    .exit(EXIT_USAGE),
            );
        };
        path.push(name.clone());
        page = sub;
    }
    write_stdout(render(page, &path).as_bytes())?;
    Ok(0)
}

/// The `help` subcommands clap adds are not pages of their own (nor listed in one).
fn without_help_subcommands(command: clap::Command) -> clap::Command {
    let names: Vec<String> = command
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    names
        .iter()
        .fold(command.disable_help_subcommand(true), |command, name| {
            command.mut_subcommand(name, without_help_subcommands)
        })
}

/// Writes the page of `command` and of every command under it into `dir/man1`.
fn write_all(command: &clap::Command, dir: &Path) -> AppResult<u8> {
    let man1 = dir.join("man1");
    std::fs::create_dir_all(&man1)
        .map_err(|e| io_error("cannot create the manual directory", &man1, &e))?;
    let mut pages = Vec::new();
    collect(command, vec!["apictl".to_owned()], &mut pages);
    for (path, page) in &pages {
        let file = man1.join(format!("{}.1", path.join("-")));
        std::fs::write(&file, render(page.clone(), path))
            .map_err(|e| io_error("cannot write the manual page", &file, &e))?;
    }
    output::note!(
        "wrote {} manual pages to {}; read them with: man -M {} apictl",
        pages.len(),
        man1.display(),
        dir.display()
    );
    Ok(0)
}

/// `command` and every visible command under it, each with its path of names.
fn collect(
    command: &clap::Command,
    path: Vec<String>,
    pages: &mut Vec<(Vec<String>, clap::Command)>,
) {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let mut sub_path = path.clone();
        sub_path.push(sub.get_name().to_owned());
        collect(sub, sub_path, pages);
    }
    pages.push((path, command.clone()));
}

/// The page of `page` (the command at `path`, from `apictl` down), in roff.
fn render(page: clap::Command, path: &[String]) -> String {
    let title = path.join("-");
    let page = page
        .name(title.clone())
        .bin_name(path.join(" "))
        .after_help(None::<&str>)
        .after_long_help(None::<&str>);
    let man = clap_mangen::Man::new(page.clone())
        .title(title.to_uppercase())
        .section("1");
    let mut generated = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = man.render(&mut generated);
    let generated = String::from_utf8_lossy(&generated).into_owned();

    let mut own = Roff::new();
    if path.len() == 1 {
        own.control("SH", ["FILES"]);
        for paragraph in AFTER_HELP.split("\n\n") {
            own.control("PP", []);
            own.text([roman(paragraph.replace('\n', " "))]);
        }
    }
    environment(&mut own, &page, &path[1..].join(" "));
    exit_status(&mut own);
    // Without the apostrophe preamble `render` starts with: the generated page has it.
    let own = own.render();
    let own: String = own
        .lines()
        .skip_while(|l| l.starts_with(".ie \\n(.g") || l.starts_with(".el .ds Aq"))
        .flat_map(|l| [l, "\n"])
        .collect();
    match generated.find(".SH VERSION") {
        Some(at) => format!("{}{own}{}", &generated[..at], &generated[at..]),
        None => format!("{generated}{own}"),
    }
}

/// ENVIRONMENT: the variable of each flag of `page`, then the variables no flag stands for
/// that concern the command `words` (`ads conversions upload`; empty: the top page, all).
fn environment(roff: &mut Roff, page: &clap::Command, words: &str) {
    roff.control("SH", ["ENVIRONMENT"]);
    let mut seen = Vec::new();
    for arg in page.get_arguments().filter(|a| !a.is_hide_set()) {
        let Some(name) = arg.get_env().and_then(|n| n.to_str()) else {
            continue;
        };
        if seen.contains(&name) {
            continue;
        }
        seen.push(name);
        let flag = arg
            .get_long()
            .map(|l| format!("--{l}: "))
            .unwrap_or_default();
        let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
        roff.control("TP", []);
        roff.text([bold(name)]);
        roff.text([roman(format!("{flag}{help}"))]);
    }
    for (name, scopes, what) in OTHER_VARIABLES {
        let concerns = words.is_empty()
            || scopes.is_empty()
            || scopes.iter().any(|s| {
                words == *s || words.starts_with(&format!("{s} ")) || s.starts_with(words)
            });
        if concerns {
            roff.control("TP", []);
            roff.text([bold(*name)]);
            roff.text([roman(*what)]);
        }
    }
}

/// EXIT STATUS: the rows of [`EXIT_TABLE`] (`  CODE  meaning`, continued on lines indented
/// further), then its closing lines.
fn exit_status(roff: &mut Roff) {
    roff.control("SH", ["EXIT STATUS"]);
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut closing = Vec::new();
    for line in EXIT_TABLE.lines().skip(1) {
        let text = line.trim_start();
        let indent = line.len() - text.len();
        match text.split_once(' ') {
            Some((code, meaning)) if indent == 2 && code.parse::<u8>().is_ok() => {
                rows.push((code.to_owned(), meaning.trim().to_owned()));
            }
            _ => match rows.last_mut() {
                Some((_, meaning)) if indent > 2 => {
                    meaning.push(' ');
                    meaning.push_str(text);
                }
                _ => closing.push(text.to_owned()),
            },
        }
    }
    for (code, meaning) in rows {
        roff.control("TP", []);
        roff.text([bold(code)]);
        roff.text([roman(meaning)]);
    }
    for line in closing {
        roff.control("PP", []);
        roff.text([roman(line)]);
    }
}

/// Writes generated text to stdout; a closed pipe ends quietly.
fn write_stdout(bytes: &[u8]) -> AppResult<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| output::stdout_error(&e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::*;

    fn page(words: &[&str]) -> String {
        let mut command = without_help_subcommands(Cli::command());
        command.build();
        let mut path = vec!["apictl".to_owned()];
        for w in words {
            command = command.find_subcommand(w).unwrap().clone();
            path.push((*w).to_owned());
        }
        render(command, &path)
    }

    /// Every code of `crate::exit` is a row of every page's EXIT STATUS, from the one table.
    #[test]
    fn every_page_has_the_exit_table_and_its_environment() {
        for words in [
            &[][..],
            &["ads", "conversions", "upload"],
            &["video", "login"],
        ] {
            let text = page(words);
            assert!(!text.contains(".SH EXTRA"), "{words:?}");
            let exit = text
                .split(".SH \"EXIT STATUS\"")
                .nth(1)
                .expect("EXIT STATUS");
            for code in [
                EXIT_OK,
                EXIT_ERROR,
                EXIT_USAGE,
                EXIT_REJECTED,
                EXIT_REFUSED,
                EXIT_AUTH,
                EXIT_INTERRUPTED,
            ] {
                assert!(
                    exit.contains(&format!(".TP\n\\fB{code}\\fR\n")),
                    "{code} in {words:?}"
                );
            }
            assert!(text.contains(".SH ENVIRONMENT"), "{words:?}");
            assert!(
                text.contains("\\fBAPICTL_CONFIG\\fR"),
                "{words:?}: a global flag's variable"
            );
        }
        let upload = page(&["ads", "conversions", "upload"]);
        assert!(upload.contains("\\fBSEARCH_ADS_TOKEN\\fR"));
        assert!(upload.contains("\\fBGOOGLE_APPLICATION_CREDENTIALS\\fR"));
        assert!(
            !upload.contains("\\fBVIDEO_PASSWORD\\fR"),
            "another command's variable"
        );
        let login = page(&["video", "login"]);
        assert!(login.contains("\\fBVIDEO_PASSWORD\\fR"));
        assert!(login.contains("\\fBAPICTL_LOCKOUT_STORE\\fR"));
        let top = page(&[]);
        assert!(top.contains(".SH FILES"));
        assert!(top.find(".SH FILES") < top.find(".SH VERSION"));
    }
}
