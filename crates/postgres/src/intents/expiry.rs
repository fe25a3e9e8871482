//! `IntentSweeper`: expiry of intents left pending, skipping rows another instance holds.

use std::time::Duration;

use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Interval};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{IntentEvent, IntentStatus, TransferIntentRecord};
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
    let stale: Vec<TransferIntentRow> = transfer_intents::table
        .filter(transfer_intents::status.eq(IntentStatus::PendingConfirmation.as_str()))
        .filter(
            sql::<Bool>("transfer_intents.created_at < now() - ")
                .bind::<Interval, _>(interval(pending_for)),
        )
        .select(TransferIntentRow::as_select())
        .order(transfer_intents::created_at.asc())
        .limit(row_limit(limit))
        .for_update()
        .skip_locked()
        .load(connection)
        .await?;
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
            .apply(IntentEvent::Expire)
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
