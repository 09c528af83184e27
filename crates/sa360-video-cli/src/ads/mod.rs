//! `apictl ads ...`: conversions, availability, ID mapping, saved columns,
//! customers. One handler per file; the upload engine's parts (input reading,
//! journal, report) each in their own file. The service's rules live in the
//! SDK, never here.

mod availability;
mod conn;
mod customers;
mod engine;
mod fields;
mod id_mapping;
mod input;
mod journal;
mod list;
mod rejected;
mod repeats;
mod saved_columns;
mod search_report;
mod upload;

// What the tour (feature `fakes`) runs besides the commands.
#[cfg(feature = "fakes")]
pub use availability::{availabilities, describe_availability};
#[cfg(feature = "fakes")]
pub use engine::{JournalMode, UploadPlan, upload_file};
#[cfg(feature = "fakes")]
pub use id_mapping::byte_progress;
#[cfg(feature = "fakes")]
pub use list::write_conversions;
#[cfg(feature = "fakes")]
pub use rejected::{RejectedRow, default_rejected_path};

use conn::Conn;

use crate::cli::{AdsArgs, AdsCommand, ConversionsCommand};
use crate::context::Ctx;
use crate::error::AppResult;

/// Runs an `ads` command.
pub async fn run(ctx: &Ctx, args: &AdsArgs) -> AppResult<u8> {
    let conn = Conn {
        args: &args.conn,
        file: &ctx.config.search_ads,
        login_file: ctx
            .state()
            .ok()
            .map(|s| crate::auth::credentials::login_file(s.path())),
    };
    match &args.command {
        AdsCommand::Conversions(ConversionsCommand::List(list)) => {
            list::run_list(ctx, &conn, list).await
        }
        AdsCommand::Conversions(ConversionsCommand::Upload(upload)) => {
            upload::run_upload(ctx, &conn, upload).await
        }
        AdsCommand::Availability(a) => availability::run_availability(ctx, &conn, a).await,
        AdsCommand::IdMapping(m) => id_mapping::run_id_mapping(ctx, &conn, m).await,
        AdsCommand::SavedColumns => saved_columns::run_saved_columns(ctx, &conn).await,
        AdsCommand::Customers => customers::run_customers(ctx, &conn).await,
        AdsCommand::Report(r) => search_report::run_report(ctx, &conn, r).await,
        AdsCommand::Fields(f) => fields::run_fields(ctx, f),
    }
}
