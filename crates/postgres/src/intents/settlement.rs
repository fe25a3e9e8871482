//! `SettlementQueue`: submitted intents looked at when due (a bounded front of each wallet's), put
//! off to their next look, and settled.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Double, Interval, Nullable, Timestamptz, Uuid as SqlUuid};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{IntentEvent, IntentId, IntentStatus, Operator, TransferIntentRecord};
use ports::{Settlement, SettlementQueue, StoreError, SubmittedIntent, TransitionError};
use uuid::Uuid;

use super::submission::{nonce_value, AttemptRow};
use super::{intent_record, transition_locked, PgIntentStore};
use crate::clock::{duration_from_secs, interval, seconds_since};
use crate::errors::{corrupt, from_diesel, TxError};
use crate::prepared::Prepared;
use crate::rows::{parse_address, row_limit, TransferIntentRow};
use crate::schema::{transfer_attempts, transfer_intents, wallets};

/// Settles the intent; one that fails before anything was sent for it gives its nonce back when
/// it is the wallet's last, so a failure never leaves a gap at the end of the wallet's nonces.
async fn settle_locked(
    connection: &mut AsyncPgConnection,
    id: IntentId,
    settlement: Settlement,
    decided_by: Option<Operator>,
) -> Result<TransferIntentRecord, TxError<TransitionError>> {
    let (event, reason, mined, block_number) = match settlement {
        Settlement::Executed {
            tx_hash,
            block_number,
        } => (IntentEvent::Execute, None, Some(tx_hash), block_number),
        Settlement::Failed(reason) => (IntentEvent::Fail, Some(reason), None, None),
    };
    let mut settled = transition_locked(connection, id, event, reason, mined, decided_by).await?;
    if let Some(block_number) = block_number {
        diesel::update(transfer_intents::table.find(id.0))
            .set(transfer_intents::block_number.eq(i64::try_from(block_number).unwrap_or(i64::MAX)))
            .execute(connection)
            .await?;
        settled.block_number = Some(block_number);
    }
    if settled.status == IntentStatus::Failed && settled.tx_hash.is_none() {
        let nonce: Option<i64> = transfer_intents::table
            .find(id.0)
            .select(transfer_intents::nonce)
            .first(connection)
            .await?;
        if let Some(nonce) = nonce {
            diesel::update(
                wallets::table
                    .find(settled.wallet_id.0)
                    .filter(wallets::next_nonce.eq(nonce + 1)),
            )
            .set(wallets::next_nonce.eq(nonce))
            .execute(connection)
            .await?;
            diesel::update(transfer_intents::table.find(id.0))
                .set(transfer_intents::nonce.eq(None::<i64>))
                .execute(connection)
                .await?;
        }
    }
    Ok(settled)
}

/// What `due_submitted` reads of each intent besides its row.
type DueRow = (
    TransferIntentRow,
    Option<i64>,
    i32,
    Option<f64>,
    String,
    Vec<u8>,
);

/// One due intent's id, as the window query names it.
#[derive(QueryableByName)]
struct DueId {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
}

/// Due intents among each wallet's `$1` lowest nonces still submitted, wallet by wallet (the one
/// with the most overdue first), each in nonce order, at most `$2`. A row another look holds is
/// skipped; one rescheduled or settled meanwhile drops out when it is locked.
const DUE_PER_WALLET: &str = "\
    WITH front AS ( \
        SELECT id, wallet_id, nonce, next_check_at, \
               row_number() OVER (PARTITION BY wallet_id ORDER BY nonce) AS place \
        FROM transfer_intents WHERE status = 'submitted' \
    ), due AS ( \
        SELECT id, wallet_id, nonce, \
               min(next_check_at) OVER (PARTITION BY wallet_id) AS wallet_due \
        FROM front WHERE place <= $1 AND next_check_at <= now() \
    ) \
    SELECT transfer_intents.id FROM transfer_intents JOIN due ON due.id = transfer_intents.id \
    WHERE transfer_intents.status = 'submitted' AND transfer_intents.next_check_at <= now() \
    ORDER BY due.wallet_due, due.wallet_id, due.nonce \
    LIMIT $2 \
    FOR UPDATE OF transfer_intents SKIP LOCKED";

async fn due_locked(
    connection: &mut AsyncPgConnection,
    limit: usize,
    per_wallet: usize,
    look_lease: Duration,
) -> Result<Vec<SubmittedIntent>, TxError<StoreError>> {
    let due: Vec<Uuid> = Prepared(
        diesel::sql_query(DUE_PER_WALLET)
            .bind::<BigInt, _>(row_limit(per_wallet))
            .bind::<BigInt, _>(row_limit(limit)),
    )
    .load::<DueId>(connection)
    .await?
    .into_iter()
    .map(|due| due.id)
    .collect();
    if due.is_empty() {
        return Ok(Vec::new());
    }
    // Held back while this executor looks; the look ends by rescheduling or settling them.
    diesel::update(transfer_intents::table.filter(transfer_intents::id.eq_any(&due)))
        .set(
            transfer_intents::next_check_at
                .eq(sql::<Nullable<Timestamptz>>("now() + ")
                    .bind::<Interval, _>(interval(look_lease))),
        )
        .execute(connection)
        .await?;
    let rows: Vec<DueRow> = transfer_intents::table
        .inner_join(wallets::table)
        .filter(transfer_intents::id.eq_any(&due))
        .select((
            TransferIntentRow::as_select(),
            transfer_intents::nonce,
            transfer_intents::checks,
            seconds_since::<Nullable<Double>>("transfer_intents.nonce_used_seen_at"),
            wallets::address,
            wallets::sealed_key,
        ))
        .load(connection)
        .await?;
    let attempts: Vec<(AttemptRow, f64)> = transfer_attempts::table
        .filter(transfer_attempts::intent_id.eq_any(&due))
        .select((
            AttemptRow::as_select(),
            seconds_since::<Double>("transfer_attempts.created_at"),
        ))
        .order(transfer_attempts::created_at.desc())
        .load(connection)
        .await?;
    let mut by_intent: HashMap<Uuid, Vec<(AttemptRow, f64)>> = HashMap::new();
    for (attempt, age) in attempts {
        by_intent
            .entry(attempt.intent_id)
            .or_default()
            .push((attempt, age));
    }
    let mut submitted = Vec::with_capacity(rows.len());
    for (row, nonce, checks, nonce_used_for, address, sealed_key) in rows {
        let intent = intent_record::<StoreError>(row)?;
        let recorded = by_intent.remove(&intent.id.0).unwrap_or_default();
        let newest_attempt_age = <[_]>::first(&recorded).map(|(_, age)| duration_from_secs(*age));
        let (Some(nonce), Some(newest_attempt_age)) = (nonce, newest_attempt_age) else {
            return Err(TxError::store(corrupt(format!(
                "submitted intent {} lacks its nonce or transactions",
                intent.id
            ))));
        };
        let attempts = recorded
            .into_iter()
            .map(|(attempt, _)| {
                attempt
                    .into_record(&intent, &address)
                    .map(|recorded| recorded.transfer)
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(TxError::store)?;
        submitted.push(SubmittedIntent {
            nonce: nonce_value(nonce).map_err(TxError::store)?,
            wallet_address: parse_address(&address).map_err(TxError::store)?,
            sealed_key,
            attempts,
            newest_attempt_age,
            checks: u32::try_from(checks).unwrap_or_default(),
            nonce_used_for: nonce_used_for.map(duration_from_secs),
            intent,
        });
    }
    submitted.sort_by_key(|intent| due.iter().position(|id| *id == intent.intent.id.0));
    Ok(submitted)
}

#[async_trait]
impl SettlementQueue for PgIntentStore {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn due_submitted(
        &self,
        limit: usize,
        per_wallet: usize,
        look_for: Duration,
    ) -> Result<Vec<SubmittedIntent>, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move { due_locked(connection, limit, per_wallet, look_for).await }
                    .scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn reschedule(
        &self,
        intent: IntentId,
        after: Duration,
        nonce_used: bool,
    ) -> Result<(), StoreError> {
        let mut connection = self.database.connection().await?;
        let seen = match nonce_used {
            true => "COALESCE(transfer_intents.nonce_used_seen_at, now())",
            false => "NULL",
        };
        diesel::update(
            transfer_intents::table
                .find(intent.0)
                .filter(transfer_intents::status.eq(IntentStatus::Submitted.as_str())),
        )
        .set((
            transfer_intents::next_check_at
                .eq(sql::<Nullable<Timestamptz>>("now() + ").bind::<Interval, _>(interval(after))),
            transfer_intents::checks.eq(transfer_intents::checks + 1),
            transfer_intents::nonce_used_seen_at.eq(sql::<Nullable<Timestamptz>>(seen)),
        ))
        .execute(&mut connection)
        .await
        .map_err(from_diesel)?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn settle(
        &self,
        intent: IntentId,
        settlement: Settlement,
        decided_by: Option<Operator>,
    ) -> Result<TransferIntentRecord, TransitionError> {
        self.database
            .in_transaction(|connection| {
                async move { settle_locked(connection, intent, settlement, decided_by).await }
                    .scope_boxed()
            })
            .await
    }
}
