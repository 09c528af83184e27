//! `apictl completions SHELL` and `apictl man [COMMAND...]`: generated from
//! the clap definitions in `crate::cli`, so they never drift from `--help`.

use clap::CommandFactory as _;

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use crate::error::{AppError, AppResult};
use crate::exit::EXIT_USAGE;
use crate::output;

/// Prints the completion script of `args.shell` on stdout.
pub fn completions(args: &CompletionsArgs) -> AppResult<u8> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "apictl", &mut script);
    write_stdout(&script)?;
    Ok(0)
}

/// Prints the manual page (roff) of apictl, or of the command `args.command`
/// names (`ads conversions upload` → the page `apictl-ads-conversions-upload`).
pub fn man(args: &ManArgs) -> AppResult<u8> {
    let mut command = Cli::command();
    command.build();
    let mut page = command;
    let mut path = vec!["apictl".to_owned()];
    for name in &args.command {
        let Some(sub) = page.find_subcommand(name).cloned() else {
            let known: Vec<&str> = page
                .get_subcommands()
                .map(clap::Command::get_name)
                .filter(|n| *n != "help")
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
    let title = path.join("-");
    let page = page.name(title.clone()).bin_name(path.join(" "));
    let mut roff = Vec::new();
    clap_mangen::Man::new(page)
        .title(title.to_uppercase())
        .section("1")
        .render(&mut roff)
        .map_err(|e| AppError::new(format!("cannot render the manual page: {e}")))?;
    write_stdout(&roff)?;
    Ok(0)
}

/// Writes generated text to stdout; a closed pipe ends quietly.
fn write_stdout(bytes: &[u8]) -> AppResult<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| output::stdout_error(&e))
}
