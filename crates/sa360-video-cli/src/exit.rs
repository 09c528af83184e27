//! apictl's exit statuses: one table, used by every command, printed by
//! `apictl --help` and kept in the CLI README.

/// Success.
pub const EXIT_OK: u8 = 0;
/// An error that none of the codes below describes: the service answered
/// with an error or could not be reached, a file could not be read or written.
pub const EXIT_ERROR: u8 = 1;
/// The command line is wrong (clap's own code for usage errors).
pub const EXIT_USAGE: u8 = 2;
/// A partial result: `ads conversions upload` stored some rows and rejected
/// others (a dry run: found some rows valid and rejected others).
pub const EXIT_REJECTED: u8 = 3;
/// Refused before anything was sent: an input or setting failed its check, a
/// required setting is missing, another upload holds the input (or its
/// journal), or the lockout guard refused a login.
pub const EXIT_REFUSED: u8 = 4;
/// Authentication needed: no credentials or session, or the service refused them.
pub const EXIT_AUTH: u8 = 5;
/// Nothing stored: `ads conversions upload` rejected every row of the file
/// (a dry run: found no row valid).
pub const EXIT_NONE_STORED: u8 = 6;
/// Stopped by Ctrl-C (SIGINT): 128 + 2, as shells report it.
pub const EXIT_INTERRUPTED: u8 = 130;

/// The table as `apictl --help` prints it (the README holds the same rows).
pub const EXIT_TABLE: &str = "Exit status:
  0    success
  1    error: the service answered with an error or could not be reached, or a file could
       not be read or written
  2    usage: the command line is wrong (`--help` after the command shows the right one)
  3    partial: `ads conversions upload` stored some rows and rejected others (a dry run:
       found some valid)
  4    refused before sending: an input or setting failed its check or is missing, another
       upload holds the input, or the lockout guard refused a login (nothing was sent)
  5    authentication needed: no credentials or session, or the service refused them
  6    nothing stored: `ads conversions upload` rejected every row (a dry run: none is valid)
  130  interrupted (Ctrl-C)
Errors are one `error:` line and one `hint:` line on stderr.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lists_every_code_once() {
        for code in [
            EXIT_OK,
            EXIT_ERROR,
            EXIT_USAGE,
            EXIT_REJECTED,
            EXIT_REFUSED,
            EXIT_AUTH,
            EXIT_NONE_STORED,
            EXIT_INTERRUPTED,
        ] {
            let row = format!("\n  {code} ");
            assert_eq!(EXIT_TABLE.matches(&row).count(), 1, "{code}");
        }
    }
}
