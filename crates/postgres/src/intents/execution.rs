//! `ExecutionQueue`: leased claims on confirmed intents, one nonce per intent assigned under the
//! wallet's lock, every transaction recorded before it is broadcast, submitted intents looked at
//! when due (a bounded front of each wallet's), and settlement.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use bigdecimal::BigDecimal;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Double, Interval, Nullable, Timestamptz, Uuid as SqlUuid};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{
    FeeQuote, IntentEvent, IntentId, IntentStatus, LeaseId, Operator, TransferIntentRecord,
};
use ports::{
    AttemptRecord, ExecutionQueue, Settlement, SignedTransfer, StoreError, SubmissionClaim,
    SubmissionError, SubmittedIntent, TransitionError,
};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{intent_record, transition_locked, PgIntentStore};
use crate::clock::{duration_from_secs, interval, seconds_since};
use crate::errors::{corrupt, from_diesel, TxError};
use crate::prepared::Prepared;
use crate::rows::{integer_digits, parse_address, row_limit, TransferIntentRow};
use crate::schema::{agents, transfer_attempts, transfer_intents, wallets};

fn nonce_column(nonce: u64) -> Result<i64, StoreError> {
    i64::try_from(nonce).map_err(|_| corrupt(format!("nonce {nonce} out of range")))
}

fn nonce_value(stored: i64) -> Result<u64, StoreError> {
    u64::try_from(stored).map_err(|_| corrupt(format!("negative nonce {stored}")))
}

fn fee_column(fee: u128) -> BigDecimal {
    BigDecimal::from(fee)
}

fn fee_value(stored: &BigDecimal) -> Result<u128, StoreError> {
    integer_digits(stored)
        .parse()
        .map_err(|_| corrupt(format!("fee {stored} out of range")))
}

/// One recorded transaction, as stored.
#[derive(Queryable, Selectable)]
#[diesel(table_name = transfer_attempts, check_for_backend(diesel::pg::Pg))]
pub(super) struct AttemptRow {
    tx_hash: String,
    intent_id: Uuid,
    nonce: i64,
    raw_transaction: Vec<u8>,
    max_fee_per_gas: BigDecimal,
    max_priority_fee_per_gas: BigDecimal,
    broadcasts: i32,
    last_error: Option<String>,
}

impl AttemptRow {
    pub(super) fn into_record(
        self,
        intent: &TransferIntentRecord,
        from: &str,
    ) -> Result<AttemptRecord, StoreError> {
        let token = intent.token_address.ok_or_else(|| {
            corrupt(format!(
                "intent {} has a transaction but no token",
                intent.id
            ))
        })?;
        let transfer = SignedTransfer {
            from: parse_address(from)?,
            token,
            to: intent.recipient,
            amount: intent.amount.value(),
            nonce: nonce_value(self.nonce)?,
            fees: FeeQuote {
                max_fee_per_gas: fee_value(&self.max_fee_per_gas)?,
                max_priority_fee_per_gas: fee_value(&self.max_priority_fee_per_gas)?,
            },
            raw: self.raw_transaction,
            hash: self.tx_hash,
        };
        Ok(AttemptRecord {
            transfer,
            broadcasts: u32::try_from(self.broadcasts).unwrap_or_default(),
            last_error: self.last_error,
        })
    }
}

async fn claim_locked(
    connection: &mut AsyncPgConnection,
    lease: LeaseId,
    lease_for: Duration,
) -> Result<Option<SubmissionClaim>, TxError<StoreError>> {
    let lease_free = sql::<Bool>(
        "(transfer_intents.lease_until IS NULL OR transfer_intents.lease_until < now())",
    );
    let Some((row, nonce)) = transfer_intents::table
        .filter(transfer_intents::status.eq(IntentStatus::Confirmed.as_str()))
        .filter(lease_free)
        .select((TransferIntentRow::as_select(), transfer_intents::nonce))
        .order(transfer_intents::confirmed_at.asc())
        .for_update()
        .skip_locked()
        .first::<(TransferIntentRow, Option<i64>)>(connection)
        .await
        .optional()?
    else {
        return Ok(None);
    };
    let intent = intent_record::<StoreError>(row)?;
    diesel::update(transfer_intents::table.find(intent.id.0))
        .set((
            transfer_intents::lease_id.eq(lease.0),
            transfer_intents::lease_until
                .eq(sql::<Nullable<Timestamptz>>("now() + ")
                    .bind::<Interval, _>(interval(lease_for))),
        ))
        .execute(connection)
        .await?;
    let (address, sealed_key, agent_active): (String, Vec<u8>, bool) = wallets::table
        .inner_join(agents::table)
        .filter(wallets::id.eq(intent.wallet_id.0))
        .select((wallets::address, wallets::sealed_key, agents::is_active))
        .first(connection)
        .await?;
    Ok(Some(SubmissionClaim {
        wallet_address: parse_address(&address).map_err(TxError::store)?,
        sealed_key,
        agent_active,
        nonce: nonce.map(nonce_value).transpose().map_err(TxError::store)?,
        lease,
        intent,
    }))
}

/// The intent and its nonce under the intent's row lock; given a `lease`, only while that lease
/// still holds the intent.
async fn locked_intent(
    connection: &mut AsyncPgConnection,
    id: IntentId,
    lease: Option<LeaseId>,
) -> Result<(TransferIntentRecord, Option<i64>), TxError<SubmissionError>> {
    let row: Option<(TransferIntentRow, Option<i64>, Option<Uuid>, bool)> = transfer_intents::table
        .find(id.0)
        .select((
            TransferIntentRow::as_select(),
            transfer_intents::nonce,
            transfer_intents::lease_id,
            sql::<Bool>("COALESCE(transfer_intents.lease_until > now(), false)"),
        ))
        .for_update()
        .first(connection)
        .await
        .optional()?;
    let Some((row, nonce, held_by, lease_live)) = row else {
        return Err(TxError::Abort(TransitionError::NotFound(id).into()));
    };
    if lease.is_some_and(|lease| held_by != Some(lease.0) || !lease_live) {
        return Err(TxError::Abort(SubmissionError::LeaseLost(id)));
    }
    Ok((intent_record(row)?, nonce))
}

async fn assign_locked(
    connection: &mut AsyncPgConnection,
    id: IntentId,
    lease: LeaseId,
    chain_next: u64,
) -> Result<u64, TxError<SubmissionError>> {
    let (intent, assigned) = locked_intent(connection, id, Some(lease)).await?;
    if let Some(nonce) = assigned {
        return nonce_value(nonce).map_err(TxError::store);
    }
    let next_nonce: Option<i64> = wallets::table
        .find(intent.wallet_id.0)
        .select(wallets::next_nonce)
        .for_update()
        .first(connection)
        .await?;
    let chain_next = nonce_column(chain_next).map_err(TxError::store)?;
    let nonce = next_nonce.unwrap_or_default().max(chain_next);
    diesel::update(wallets::table.find(intent.wallet_id.0))
        .set(wallets::next_nonce.eq(nonce + 1))
        .execute(connection)
        .await?;
    diesel::update(transfer_intents::table.find(id.0))
        .set(transfer_intents::nonce.eq(nonce))
        .execute(connection)
        .await?;
    nonce_value(nonce).map_err(TxError::store)
}

async fn record_locked(
    connection: &mut AsyncPgConnection,
    id: IntentId,
    lease: Option<LeaseId>,
    attempt: &SignedTransfer,
    first_look: Duration,
) -> Result<TransferIntentRecord, TxError<SubmissionError>> {
    let (intent, nonce) = locked_intent(connection, id, lease).await?;
    let owned = nonce
        .map(nonce_value)
        .transpose()
        .map_err(TxError::store)?
        .ok_or_else(|| TxError::store(corrupt(format!("intent {id} has no nonce assigned"))))?;
    if owned != attempt.nonce {
        return Err(TxError::Abort(SubmissionError::WrongNonce {
            intent: id,
            owned,
            offered: attempt.nonce,
        }));
    }
    let status = match lease {
        // The first transaction: the intent moves to submitted.
        Some(_) => intent
            .status
            .apply(IntentEvent::Submit)
            .map_err(|refused| TxError::Abort(TransitionError::Refused(refused).into()))?,
        // A replacement: only a submitted intent is replaced.
        None if intent.status == IntentStatus::Submitted => intent.status,
        None => {
            let refused = domain::TransitionRefused {
                from: intent.status,
                event: IntentEvent::Submit,
            };
            return Err(TxError::Abort(TransitionError::Refused(refused).into()));
        }
    };
    diesel::insert_into(transfer_attempts::table)
        .values((
            transfer_attempts::tx_hash.eq(&attempt.hash),
            transfer_attempts::intent_id.eq(id.0),
            transfer_attempts::nonce.eq(nonce_column(attempt.nonce).map_err(TxError::store)?),
            transfer_attempts::raw_transaction.eq(&attempt.raw),
            transfer_attempts::max_fee_per_gas.eq(fee_column(attempt.fees.max_fee_per_gas)),
            transfer_attempts::max_priority_fee_per_gas
                .eq(fee_column(attempt.fees.max_priority_fee_per_gas)),
        ))
        .execute(connection)
        .await?;
    let row = diesel::update(transfer_intents::table.find(id.0))
        .set((
            transfer_intents::status.eq(status.as_str()),
            transfer_intents::tx_hash.eq(&attempt.hash),
            transfer_intents::submitted_at.eq(diesel::dsl::now),
            transfer_intents::updated_at.eq(diesel::dsl::now),
            transfer_intents::lease_id.eq(None::<Uuid>),
            transfer_intents::lease_until.eq(None::<OffsetDateTime>),
            transfer_intents::next_check_at
                .eq(sql::<Nullable<Timestamptz>>("now() + ")
                    .bind::<Interval, _>(interval(first_look))),
        ))
        .returning(TransferIntentRow::as_returning())
        .get_result(connection)
        .await?;
    intent_record(row)
}

/// Settles the intent; one that fails before anything was sent for it gives its nonce back when
/// it is the wallet's last, so a failure never leaves a gap at the end of the wallet's nonces.
async fn settle_locked(
    connection: &mut AsyncPgConnection,
    id: IntentId,
    settlement: Settlement,
    decided_by: Option<Operator>,
) -> Result<TransferIntentRecord, TxError<TransitionError>> {
    let (event, reason, mined) = match settlement {
        Settlement::Executed { tx_hash } => (IntentEvent::Execute, None, Some(tx_hash)),
        Settlement::Failed(reason) => (IntentEvent::Fail, Some(reason), None),
    };
    let settled = transition_locked(connection, id, event, reason, mined, decided_by).await?;
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
impl ExecutionQueue for PgIntentStore {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn claim_confirmed(
        &self,
        lease: LeaseId,
        lease_for: Duration,
    ) -> Result<Option<SubmissionClaim>, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move { claim_locked(connection, lease, lease_for).await }.scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn assign_nonce(
        &self,
        intent: IntentId,
        lease: LeaseId,
        chain_next: u64,
    ) -> Result<u64, SubmissionError> {
        self.database
            .in_transaction(|connection| {
                async move { assign_locked(connection, intent, lease, chain_next).await }
                    .scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn release(&self, lease: LeaseId) -> Result<(), StoreError> {
        let mut connection = self.database.connection().await?;
        diesel::update(transfer_intents::table.filter(transfer_intents::lease_id.eq(lease.0)))
            .set((
                transfer_intents::lease_id.eq(None::<Uuid>),
                transfer_intents::lease_until.eq(None::<OffsetDateTime>),
            ))
            .execute(&mut connection)
            .await
            .map_err(from_diesel)?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip(self, attempt), fields(tx_hash = %attempt.hash, nonce = attempt.nonce))]
    async fn record_attempt(
        &self,
        intent: IntentId,
        lease: Option<LeaseId>,
        attempt: &SignedTransfer,
        first_look: Duration,
    ) -> Result<TransferIntentRecord, SubmissionError> {
        self.database
            .in_transaction(|connection| {
                async move { record_locked(connection, intent, lease, attempt, first_look).await }
                    .scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn record_broadcast(
        &self,
        tx_hash: &str,
        error: Option<String>,
    ) -> Result<(), StoreError> {
        let mut connection = self.database.connection().await?;
        diesel::update(transfer_attempts::table.find(tx_hash))
            .set((
                transfer_attempts::broadcasts.eq(transfer_attempts::broadcasts + 1),
                transfer_attempts::last_broadcast_at.eq(diesel::dsl::now),
                transfer_attempts::last_error.eq(error),
            ))
            .execute(&mut connection)
            .await
            .map_err(from_diesel)?;
        Ok(())
    }

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

    #[tracing::instrument(level = "debug", skip(self))]
    async fn oldest_confirmed_wait(&self) -> Result<Option<Duration>, StoreError> {
        let mut connection = self.database.connection().await?;
        let waited: Option<f64> = transfer_intents::table
            .filter(transfer_intents::status.eq(IntentStatus::Confirmed.as_str()))
            .select(seconds_since::<Nullable<Double>>(
                "min(transfer_intents.confirmed_at)",
            ))
            .first(&mut connection)
            .await
            .map_err(from_diesel)?;
        Ok(waited.map(duration_from_secs))
    }
}
