//! `IntentSweeper`: expiry of intents left pending, skipping rows another instance holds.

use std::time::Duration;

use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Interval};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{IntentEvent, IntentKind, IntentStatus, TransferIntentRecord};
use ports::{IntentSweeper, StoreError};

use super::{intent_record, PgIntentStore};
use crate::clock::interval;
use crate::errors::{corrupt, TxError};
use crate::rows::{row_limit, TransferIntentRow};
use crate::schema::transfer_intents;

async fn expire_locked(
    connection: &mut AsyncPgConnection,
    pending_for: Duration,
    limit: usize,
) -> Result<Vec<TransferIntentRecord>, TxError<StoreError>> {
    let older_than = |column: &str| {
        sql::<Bool>(&format!("transfer_intents.{column} < now() - "))
            .bind::<Interval, _>(interval(pending_for))
    };
    let mut stale: Vec<TransferIntentRow> = transfer_intents::table
        .filter(transfer_intents::status.eq(IntentStatus::PendingConfirmation.as_str()))
        .filter(older_than("created_at"))
        .select(TransferIntentRow::as_select())
        .order(transfer_intents::created_at.asc())
        .limit(row_limit(limit))
        .for_update()
        .skip_locked()
        .load(connection)
        .await?;
    // An x402 payment confirmed for its agent, which never came back to have it signed, holds
    // its amount as long again, then lets it go: nothing was signed, so no money can move.
    let unsigned: Vec<TransferIntentRow> = transfer_intents::table
        .filter(transfer_intents::status.eq(IntentStatus::Confirmed.as_str()))
        .filter(transfer_intents::kind.eq(IntentKind::X402.as_str()))
        .filter(older_than("confirmed_at"))
        .select(TransferIntentRow::as_select())
        .order(transfer_intents::confirmed_at.asc())
        .limit(row_limit(limit.saturating_sub(stale.len())))
        .for_update()
        .skip_locked()
        .load(connection)
        .await?;
    stale.extend(unsigned);
    let mut stale = stale
        .into_iter()
        .map(intent_record::<StoreError>)
        .collect::<Result<Vec<_>, _>>()?;
    // Each change locks its wallet's spend totals at commit, in the order made: wallet by wallet,
    // as every sweeper does, so two sweepers never wait for each other's totals.
    stale.sort_by_key(|intent| intent.wallet_id.0);
    let mut expired = Vec::with_capacity(stale.len());
    for intent in stale {
        let next = intent
            .status
            .apply_as(intent.kind, IntentEvent::Expire)
            .map_err(|refused| TxError::store(corrupt(refused)))?;
        let row = diesel::update(transfer_intents::table.find(intent.id.0))
            .set((
                transfer_intents::status.eq(next.as_str()),
                transfer_intents::updated_at.eq(diesel::dsl::now),
            ))
            .returning(TransferIntentRow::as_returning())
            .get_result(connection)
            .await?;
        expired.push(intent_record(row)?);
    }
    Ok(expired)
}

#[async_trait]
impl IntentSweeper for PgIntentStore {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn expire_pending(
        &self,
        pending_for: Duration,
        limit: usize,
    ) -> Result<Vec<TransferIntentRecord>, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move { expire_locked(connection, pending_for, limit).await }.scope_boxed()
            })
            .await
    }
}
