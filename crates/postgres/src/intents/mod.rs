//! Transfer intents on PostgreSQL: one `PgIntentStore` behind the seven narrow ports, one module
//! per port, and the spend window that admission and the wallets' usage share (`window`). Every
//! rule that orders work (windows, leases, expiry, checks, confirmation and execution times)
//! reads the database clock, so instances with drifting clocks agree.

mod admission;
mod authorization_watch;
mod expiry;
mod records;
mod settlement;
mod submission;
mod transitions;
mod usage;
mod window;
mod x402;

use diesel::prelude::*;
use diesel::sql_types::Timestamptz;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{Approvals, ConfirmedBy, IntentEvent, IntentId, Operator, TransferIntentRecord};
use ports::{StoreError, TransitionError};
use time::OffsetDateTime;

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

/// What a transition changes beside the status; `None` leaves a column as it is.
#[derive(AsChangeset)]
#[diesel(table_name = transfer_intents)]
struct Changes {
    status: &'static str,
    updated_at: OffsetDateTime,
    failure_reason: Option<String>,
    confirmed_at: Option<OffsetDateTime>,
    confirmed_by: Option<&'static str>,
    approvals_required: Option<i16>,
    approvals_received: Option<i16>,
    executed_at: Option<OffsetDateTime>,
    tx_hash: Option<String>,
    next_check_at: Option<Option<OffsetDateTime>>,
    decided_by: Option<String>,
}

/// The intent `id`, locked until the transaction ends.
async fn lock_intent<E: From<StoreError> + From<TransitionError>>(
    connection: &mut AsyncPgConnection,
    id: IntentId,
) -> Result<TransferIntentRecord, TxError<E>> {
    let current = transfer_intents::table
        .find(id.0)
        .select(TransferIntentRow::as_select())
        .for_update()
        .first(connection)
        .await
        .optional()?
        .ok_or(TxError::Abort(TransitionError::NotFound(id).into()))?;
    intent_record(current)
}

async fn database_now(
    connection: &mut AsyncPgConnection,
) -> Result<OffsetDateTime, diesel::result::Error> {
    diesel::select(diesel::dsl::sql::<Timestamptz>("now()"))
        .get_result(connection)
        .await
}

/// Moves the intent by `event` under its row lock, through the domain state machine. A reject or
/// fail keeps `reason`; an execution keeps the hash of the transaction that was mined; an
/// operator's decision keeps who took it (the executor's leaves the last operator's). Times are
/// the database's.
async fn transition_locked(
    connection: &mut AsyncPgConnection,
    id: IntentId,
    event: IntentEvent,
    reason: Option<String>,
    mined: Option<String>,
    decided_by: Option<Operator>,
) -> Result<TransferIntentRecord, TxError<TransitionError>> {
    let current = lock_intent(connection, id).await?;
    move_locked(connection, &current, event, reason, mined, decided_by, None).await
}

/// `transition_locked` on an intent already locked; a confirmation records `approvals`.
async fn move_locked(
    connection: &mut AsyncPgConnection,
    current: &TransferIntentRecord,
    event: IntentEvent,
    reason: Option<String>,
    mined: Option<String>,
    decided_by: Option<Operator>,
    approvals: Option<Approvals>,
) -> Result<TransferIntentRecord, TxError<TransitionError>> {
    let next = current
        .status
        .apply_as(current.kind, event)
        .map_err(|refused| TxError::Abort(TransitionError::Refused(refused)))?;
    let now = database_now(connection).await?;
    let confirmed = event == IntentEvent::Confirm;
    let changes = Changes {
        status: next.as_str(),
        updated_at: now,
        failure_reason: match event {
            IntentEvent::Reject | IntentEvent::Fail => reason,
            _ => None,
        },
        confirmed_at: confirmed.then_some(now),
        confirmed_by: confirmed.then_some(ConfirmedBy::Operator.as_str()),
        approvals_required: approvals.map(|approvals| i16::from(approvals.required)),
        approvals_received: approvals.map(|approvals| i16::from(approvals.received)),
        executed_at: (event == IntentEvent::Execute).then_some(now),
        tx_hash: mined,
        next_check_at: next.is_terminal().then_some(None),
        decided_by: decided_by.map(|operator| operator.to_string()),
    };
    let row = diesel::update(transfer_intents::table.find(current.id.0))
        .set(changes)
        .returning(TransferIntentRow::as_returning())
        .get_result(connection)
        .await?;
    intent_record(row)
}
