//! Transfer intents on PostgreSQL: one `PgIntentStore` behind the four narrow ports, one module
//! per port. Every rule that orders work (windows, leases, expiry, checks, confirmation and
//! execution times) reads the database clock, so instances with drifting clocks agree.

mod admission;
mod execution;
mod expiry;
mod ledger;

use std::time::Duration;

use bigdecimal::BigDecimal;
use diesel::prelude::*;
use diesel::sql_types::{Interval, Nullable, Numeric, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{IntentEvent, IntentId, IntentStatus, TransferIntentRecord, WalletId, U256};
use ports::{StoreError, TransitionError};
use time::OffsetDateTime;

use crate::clock::interval;
use crate::database::Database;
use crate::errors::TxError;
use crate::rows::{u256_saturating_from_numeric, TransferIntentRow};
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

/// Statuses of intents whose money may still move: every one no event has ended.
fn open_statuses() -> Vec<&'static str> {
    IntentStatus::ALL
        .into_iter()
        .filter(|status| !status.is_terminal())
        .map(IntentStatus::as_str)
        .collect()
}

#[derive(QueryableByName)]
struct Held {
    #[diesel(sql_type = Nullable<Numeric>)]
    held: Option<BigDecimal>,
}

/// What the wallet's intents hold in a spend window of `window` ending now: every intent whose
/// money may still move, and every executed one whose money moved within the window. So no
/// window of that length ever sees more leave the wallet than the sums admitted allow.
async fn held_in_window(
    connection: &mut AsyncPgConnection,
    wallet: WalletId,
    window: Duration,
) -> Result<U256, diesel::result::Error> {
    let held: Held = diesel::sql_query(
        "SELECT sum(amount_atomic) AS held FROM transfer_intents \
         WHERE wallet_id = $1 AND (status = ANY($2) \
         OR (status = 'executed' AND executed_at > now() - $3))",
    )
    .bind::<SqlUuid, _>(wallet.0)
    .bind::<diesel::sql_types::Array<diesel::sql_types::Text>, _>(open_statuses())
    .bind::<Interval, _>(interval(window))
    .get_result(connection)
    .await?;
    Ok(held
        .held
        .as_ref()
        .map_or(U256::ZERO, u256_saturating_from_numeric))
}

/// What a transition changes beside the status; `None` leaves a column as it is.
#[derive(AsChangeset)]
#[diesel(table_name = transfer_intents)]
struct Changes {
    status: &'static str,
    updated_at: OffsetDateTime,
    failure_reason: Option<String>,
    confirmed_at: Option<OffsetDateTime>,
    executed_at: Option<OffsetDateTime>,
    tx_hash: Option<String>,
    next_check_at: Option<Option<OffsetDateTime>>,
}

/// Moves the intent by `event` under its row lock, through the domain state machine. A reject or
/// fail keeps `reason`; an execution keeps the hash of the transaction that was mined. Times are
/// the database's.
async fn transition_locked(
    connection: &mut AsyncPgConnection,
    id: IntentId,
    event: IntentEvent,
    reason: Option<String>,
    mined: Option<String>,
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
    let now: OffsetDateTime = diesel::select(diesel::dsl::sql::<Timestamptz>("now()"))
        .get_result(connection)
        .await?;
    let changes = Changes {
        status: next.as_str(),
        updated_at: now,
        failure_reason: match event {
            IntentEvent::Reject | IntentEvent::Fail => reason,
            _ => None,
        },
        confirmed_at: (event == IntentEvent::Confirm).then_some(now),
        executed_at: (event == IntentEvent::Execute).then_some(now),
        tx_hash: mined,
        next_check_at: next.is_terminal().then_some(None),
    };
    let row = diesel::update(transfer_intents::table.find(id.0))
        .set(changes)
        .returning(TransferIntentRow::as_returning())
        .get_result(connection)
        .await?;
    intent_record(row)
}
