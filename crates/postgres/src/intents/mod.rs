//! Transfer intents on PostgreSQL: one `PgIntentStore` behind the four narrow ports, one module
//! per port. Every rule that orders work (windows, leases, expiry, confirmation times) reads the
//! database clock, so instances with drifting clocks agree.

mod admission;
mod execution;
mod expiry;
mod ledger;

use std::time::Duration;

use diesel::data_types::PgInterval;
use diesel::prelude::*;
use diesel::sql_types::{Nullable, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{IntentEvent, IntentId, TransferIntentRecord};
use ports::{StoreError, TransitionError};

use crate::database::Database;
use crate::errors::TxError;
use crate::rows::TransferIntentRow;
use crate::schema::transfer_intents;

pub struct PgIntentStore {
    database: Database,
}

impl PgIntentStore {
    pub fn new(database: Database) -> Self {
        Self { database }
    }
}

fn intent_record<E: From<StoreError>>(
    row: TransferIntentRow,
) -> Result<TransferIntentRecord, TxError<E>> {
    row.into_record().map_err(TxError::store)
}

/// A span as a PostgreSQL interval, for comparisons with `now()`.
fn interval(span: Duration) -> PgInterval {
    PgInterval::from_microseconds(i64::try_from(span.as_micros()).unwrap_or(i64::MAX))
}

fn row_limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// Moves the intent by `event` under its row lock, through the domain state machine. A reject or
/// fail keeps `reason`; a confirmation is stamped with the database's clock.
async fn transition_locked(
    connection: &mut AsyncPgConnection,
    id: IntentId,
    event: IntentEvent,
    reason: Option<String>,
) -> Result<TransferIntentRecord, TxError<TransitionError>> {
    let current = transfer_intents::table
        .find(id.0)
        .select(TransferIntentRow::as_select())
        .for_update()
        .first(connection)
        .await
        .optional()?
        .ok_or(TxError::Abort(TransitionError::NotFound(id)))?;
    let current = intent_record(current)?;
    let next = current
        .status
        .apply(event)
        .map_err(|refused| TxError::Abort(TransitionError::Refused(refused)))?;
    let failure_reason = match event {
        IntentEvent::Reject | IntentEvent::Fail => reason,
        _ => current.failure_reason,
    };
    let target = transfer_intents::table.find(id.0);
    let changes = (
        transfer_intents::status.eq(next.as_str()),
        transfer_intents::updated_at.eq(diesel::dsl::now),
        transfer_intents::failure_reason.eq(failure_reason),
    );
    let row = match event {
        IntentEvent::Confirm => {
            diesel::update(target)
                .set((
                    changes,
                    transfer_intents::confirmed_at
                        .eq(diesel::dsl::sql::<Nullable<Timestamptz>>("now()")),
                ))
                .returning(TransferIntentRow::as_returning())
                .get_result(connection)
                .await?
        }
        _ => {
            diesel::update(target)
                .set(changes)
                .returning(TransferIntentRow::as_returning())
                .get_result(connection)
                .await?
        }
    };
    intent_record(row)
}
