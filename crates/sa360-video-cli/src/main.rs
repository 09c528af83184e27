//! `apictl`: the command-line tool for the search ads and video session
//! services, built on the `sa360-video-sdk` crate.
//!
//! `apictl tour` shows every feature against fakes started in-process;
//! `apictl sandbox` serves the same fakes for trying the other commands. Both are behind the
//! cargo feature `fakes` (on by default): without it, `apictl` builds no web server.

#![deny(clippy::print_stdout, clippy::print_stderr)]

mod ads;
mod auth;
mod cli;
mod config;
mod config_list;
mod context;
mod docs;
mod error;
mod exit;
mod limits;
mod output;
mod progress;
mod records;
#[cfg(feature = "fakes")]
mod sandbox;
mod state;
#[cfg(feature = "fakes")]
mod tour;
mod video;
mod wording;

use std::io::IsTerminal as _;
use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _};

use crate::cli::{
    AdsCommand, AuthCommand, Cli, Command, ConfigCommand, ConversionsCommand, VideoCommand,
};
use crate::context::Ctx;
use crate::error::{AppError, AppResult};
use crate::exit::{EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE};

fn main() -> ExitCode {
    let parsed = Cli::command()
        .try_get_matches()
        .and_then(|matches| Ok((Cli::from_arg_matches(&matches)?, matches)));
    let (cli, matches) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            // --help and --version print to stdout and succeed; usage errors
            // exit 2 (`crate::exit`). A closed stdout or stderr is ignored.
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    output::set_quiet(cli.global.quiet);
    init_tracing(cli.global.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let e = AppError::new(format!("cannot start the async runtime: {e}"))
                .hint("the system may be out of threads or memory");
            e.print();
            return e.exit_code();
        }
    };
    match runtime.block_on(run_interruptible(cli, matches)) {
        Ok(code) => ExitCode::from(code),
        // The reader of stdout is gone (`apictl tour | head -1`): a quiet end.
        Err(e) if e.is_closed_stdout() => ExitCode::SUCCESS,
        Err(e) => {
            e.print();
            e.exit_code()
        }
    }
}

/// `apictl sandbox` stops its fakes on Ctrl-C itself.
fn is_sandbox(command: &Command) -> bool {
    #[cfg(feature = "fakes")]
    return matches!(command, Command::Sandbox(_));
    #[cfg(not(feature = "fakes"))]
    return {
        let _ = command;
        false
    };
}

/// Runs the command; Ctrl-C ends it with status 130 and a message, except for
/// the commands that handle Ctrl-C themselves (an upload finishes its batches
/// in flight and keeps its journal; the sandbox stops its fakes).
async fn run_interruptible(cli: Cli, matches: clap::ArgMatches) -> AppResult<u8> {
    let own_handler = is_sandbox(&cli.command)
        || matches!(&cli.command, Command::Ads(a)
            if matches!(a.command, AdsCommand::Conversions(ConversionsCommand::Upload(_))));
    if own_handler {
        return run(cli, &matches).await;
    }
    tokio::select! {
        result = run(cli, &matches) => result,
        signal = tokio::signal::ctrl_c() => match signal {
            Ok(()) => Err(AppError::new("interrupted (Ctrl-C)")
                .hint("the command stopped where it was; run it again")
                .exit(EXIT_INTERRUPTED)),
            Err(e) => Err(AppError::new(format!("cannot listen for Ctrl-C: {e}"))),
        },
    }
}

async fn run(cli: Cli, matches: &clap::ArgMatches) -> AppResult<u8> {
    match &cli.command {
        #[cfg(feature = "fakes")]
        Command::Tour => tour::run(cli.global.json).await,
        #[cfg(feature = "fakes")]
        Command::Sandbox(args) => sandbox::run(&cli.global, args).await,
        Command::Completions(args) => docs::completions(args),
        Command::Man(args) => docs::man(args),
        Command::Config(ConfigCommand::List) => {
            let ctx = Ctx::load(&cli.global, matches)?;
            config_list::run(
                &ctx,
                cli.global.config.as_deref(),
                cli.global.state_dir.as_deref(),
            )
        }
        Command::Video(command) => {
            let ctx = Ctx::load(&cli.global, matches)?;
            match command.as_ref() {
                VideoCommand::Login(args) => video::run_login(&ctx, args).await,
                VideoCommand::Invite(args) => video::run_invite(&ctx, args).await,
                VideoCommand::LockoutStatus(args) => video::run_lockout_status(&ctx, args).await,
                VideoCommand::LockoutInit(args) => video::run_lockout_init(&ctx, args).await,
            }
        }
        Command::Ads(args) => {
            let ctx = Ctx::load(&cli.global, matches)?;
            ads::run(&ctx, args).await
        }
        Command::Auth(command) => {
            let ctx = Ctx::load(&cli.global, matches)?;
            match command.as_ref() {
                AuthCommand::Login(args) => auth::run_login(&ctx, args).await,
                AuthCommand::Status(args) => auth::run_status(&ctx, args).await,
                AuthCommand::Revoke(args) => auth::run_revoke(&ctx, args).await,
            }
        }
    }
}

/// Logs to stderr: warnings only by default; `-v` info, `-vv` debug and
/// `-vvv` trace for this tool and the SDK. Each request's line (target
/// `api_request`, logged at DEBUG by `sa360_video_client_support::trace_exec`:
/// service, method, origin, path, status, never a header or the query) shows
/// from `-v` on. Other crates (HTTP internals) stay at warnings so no header
/// can be logged.
///
/// The SDK's own warnings (a batch sent again after a transient failure)
/// are shown from `-v` on: they are worded for library users (they name
/// `HttpOptions` settings), and the tool reports every outcome in its own
/// words, with hints that name its flags.
fn init_tracing(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let sdk = if verbose == 0 { "error" } else { level };
    let fakes = if verbose >= 3 { "info" } else { "off" };
    let requests = match verbose {
        0 => "warn",
        1 | 2 => "debug",
        _ => "trace",
    };
    let filter = format!(
        "warn,apictl={level},sa360_video_sdk={sdk},api_request={requests},sa360_video_client_support={level},sa360_video_fakes={fakes}"
    );
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(filter)
        .try_init();
}
