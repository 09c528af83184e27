//! `apictl`: the command-line tool for the search ads and video session
//! services, built on the `sa360-video-sdk` crate.
//!
//! `apictl tour` shows every feature against fakes started in-process;
//! `apictl sandbox` serves the same fakes for trying the other commands.

mod ads;
mod auth;
mod cli;
mod config;
mod context;
mod error;
mod limits;
mod private_file;
mod progress;
mod records;
mod sandbox;
mod state;
mod tour;
mod video;

use std::io::IsTerminal as _;
use std::process::ExitCode;

use clap::Parser as _;

use crate::cli::{AuthCommand, Cli, Command, VideoCommand};
use crate::context::Ctx;
use crate::error::{AppError, AppResult, EXIT_ERROR};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print to stdout and succeed; usage errors
            // exit 1 like every other error (2 means "rows rejected").
            let code = if e.use_stderr() { EXIT_ERROR } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
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
    match runtime.block_on(run(cli)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            e.print();
            e.exit_code()
        }
    }
}

async fn run(cli: Cli) -> AppResult<u8> {
    match &cli.command {
        Command::Tour => tour::run().await,
        Command::Sandbox(args) => sandbox::run(&cli.global, args).await,
        Command::Video(command) => {
            let ctx = Ctx::load(&cli.global)?;
            match command.as_ref() {
                VideoCommand::Login(args) => video::run_login(&ctx, args).await,
                VideoCommand::Invite(args) => video::run_invite(&ctx, args).await,
                VideoCommand::LockoutStatus(args) => video::run_lockout_status(&ctx, args).await,
                VideoCommand::LockoutInit(args) => video::run_lockout_init(&ctx, args).await,
            }
        }
        Command::Ads(args) => {
            let ctx = Ctx::load(&cli.global)?;
            ads::run(&ctx, args).await
        }
        Command::Auth(command) => {
            let ctx = Ctx::load(&cli.global)?;
            match command.as_ref() {
                AuthCommand::Login(args) => auth::run_login(&ctx, args).await,
                AuthCommand::Status(args) => auth::run_status(&ctx, args).await,
                AuthCommand::Revoke(args) => auth::run_revoke(&ctx, args).await,
            }
        }
    }
}

/// Logs to stderr: warnings only by default; `-v` info, `-vv` debug and
/// `-vvv` trace for this tool, the facade and the per-request spans. Other
/// crates (HTTP internals) stay at warnings so no header can be logged.
///
/// The facade's own warnings (a batch sent again after a transient failure)
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
    let facade = if verbose == 0 { "error" } else { level };
    let fakes = if verbose >= 3 { "info" } else { "off" };
    let filter = format!(
        "warn,apictl={level},sa360_video_sdk={facade},api_request={level},sa360_video_client_support={level},sa360_video_fakes={fakes}"
    );
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(filter)
        .try_init();
}
