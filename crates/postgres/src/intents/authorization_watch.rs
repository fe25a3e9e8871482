//! `AuthorizationWatch`: authorized x402 intents handed to the settlement watch (held on their
//! payment row, never on the intent), searched block by block, and settled.

use std::time::Duration;

use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Interval, Nullable, Timestamptz, Uuid as SqlUuid};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::x402::{BlockHead, WatchedAuthorization};
use domain::{IntentEvent, IntentId, TransferIntentRecord};
use ports::{AuthorizationSettled, AuthorizationWatch, StoreError, TransitionError};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{transition_locked, PgIntentStore};
use crate::clock::interval;
use crate::errors::{corrupt, from_diesel, TxError};
use crate::prepared::Prepared;
use crate::rows::{parse_address, row_limit};
use crate::schema::{chain_heads, transfer_intents, wallets, x402_payments};

/// What the watch reads of one authorized payment.
type WatchedRow = (
    Uuid,
    Option<String>,
    String,
    Option<Vec<u8>>,
    Option<OffsetDateTime>,
    Option<i64>,
);

fn watched(row: WatchedRow) -> Result<WatchedAuthorization, StoreError> {
    let (intent, token, authorizer, nonce, valid_before, from_block) = row;
    let missing = || {
        corrupt(format!(
            "authorized x402 intent {intent} lacks its authorization"
        ))
    };
    let nonce =
        <[u8; 32]>::try_from(nonce.ok_or_else(missing)?.as_slice()).map_err(|_| missing())?;
    Ok(WatchedAuthorization {
        intent: IntentId(intent),
        token: parse_address(&token.ok_or_else(missing)?)?,
        authorizer: parse_address(&authorizer)?,
        nonce,
        valid_before: u64::try_from(valid_before.ok_or_else(missing)?.unix_timestamp())
            .unwrap_or_default(),
        from_block: u64::try_from(from_block.ok_or_else(missing)?).unwrap_or_default(),
    })
}

fn block_column(block: u64) -> i64 {
    i64::try_from(block).unwrap_or(i64::MAX)
}

/// Authorized payments no other watch holds, lowest first unsearched block first, at most `$1`;
/// only the payment rows are locked (an intent's lock is its transitions').
const UNHELD_AUTHORIZED: &str = "\
    SELECT payment.intent_id AS id FROM x402_payments AS payment \
    JOIN transfer_intents AS intent ON intent.id = payment.intent_id \
    WHERE intent.status = 'authorized' \
      AND (payment.watch_held_until IS NULL OR payment.watch_held_until <= now()) \
    ORDER BY payment.watch_from_block, payment.intent_id \
    LIMIT $1 \
    FOR UPDATE OF payment SKIP LOCKED";

#[derive(QueryableByName)]
struct HeldId {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
}

async fn hold_locked(
    connection: &mut AsyncPgConnection,
    limit: usize,
    look_for: Duration,
) -> Result<Vec<WatchedAuthorization>, TxError<StoreError>> {
    let held: Vec<Uuid> =
        Prepared(diesel::sql_query(UNHELD_AUTHORIZED).bind::<BigInt, _>(row_limit(limit)))
            .load::<HeldId>(connection)
            .await?
            .into_iter()
            .map(|held| held.id)
            .collect();
    if held.is_empty() {
        return Ok(Vec::new());
    }
    diesel::update(x402_payments::table.filter(x402_payments::intent_id.eq_any(&held)))
        .set(
            x402_payments::watch_held_until
                .eq(sql::<Nullable<Timestamptz>>("now() + ")
                    .bind::<Interval, _>(interval(look_for))),
        )
        .execute(connection)
        .await?;
    let mut rows: Vec<WatchedRow> = x402_payments::table
        .inner_join(transfer_intents::table.inner_join(wallets::table))
        .filter(x402_payments::intent_id.eq_any(&held))
        .select((
            x402_payments::intent_id,
            transfer_intents::token_address,
            wallets::address,
            x402_payments::nonce,
            x402_payments::valid_before,
            x402_payments::watch_from_block,
        ))
        .load(connection)
        .await?;
    rows.sort_by_key(|row| held.iter().position(|id| *id == row.0));
    rows.into_iter()
        .map(watched)
        .collect::<Result<_, _>>()
        .map_err(TxError::store)
}

async fn settle_locked(
    connection: &mut AsyncPgConnection,
    id: IntentId,
    settled: AuthorizationSettled,
) -> Result<TransferIntentRecord, TxError<TransitionError>> {
    let settled = match settled {
        AuthorizationSettled::Used {
            tx_hash,
            block_number,
        } => {
            let mut executed = transition_locked(
                connection,
                id,
                IntentEvent::Execute,
                None,
                Some(tx_hash),
                None,
            )
            .await?;
            diesel::update(transfer_intents::table.find(id.0))
                .set(transfer_intents::block_number.eq(block_column(block_number)))
                .execute(connection)
                .await?;
            executed.block_number = Some(block_number);
            executed
        }
        AuthorizationSettled::Expired => {
            transition_locked(connection, id, IntentEvent::Expire, None, None, None).await?
        }
    };
    super::x402::with_payment(connection, settled)
        .await
        .map_err(TxError::store)
}

#[async_trait]
impl AuthorizationWatch for PgIntentStore {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn record_head(&self, chain_id: u64, head: BlockHead) -> Result<(), StoreError> {
        let mut connection = self.database.connection().await?;
        let block_time = i64::try_from(head.timestamp)
            .ok()
            .and_then(|secs| OffsetDateTime::from_unix_timestamp(secs).ok())
            .ok_or_else(|| corrupt(format!("a block time of {} seconds", head.timestamp)))?;
        diesel::insert_into(chain_heads::table)
            .values((
                chain_heads::chain_id.eq(block_column(chain_id)),
                chain_heads::block_number.eq(block_column(head.number)),
                chain_heads::block_time.eq(block_time),
            ))
            .on_conflict(chain_heads::chain_id)
            .do_update()
            .set((
                chain_heads::block_number.eq(sql::<BigInt>(
                    "GREATEST(chain_heads.block_number, excluded.block_number)",
                )),
                chain_heads::block_time.eq(sql::<Timestamptz>(
                    "GREATEST(chain_heads.block_time, excluded.block_time)",
                )),
                chain_heads::seen_at.eq(diesel::dsl::now),
            ))
            .execute(&mut connection)
            .await
            .map_err(from_diesel)?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn watched_authorizations(
        &self,
        limit: usize,
        look_for: Duration,
    ) -> Result<Vec<WatchedAuthorization>, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move { hold_locked(connection, limit, look_for).await }.scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self, intents), fields(count = intents.len()))]
    async fn put_back(
        &self,
        intents: &[IntentId],
        searched_through: Option<u64>,
    ) -> Result<(), StoreError> {
        if intents.is_empty() {
            return Ok(());
        }
        let ids: Vec<Uuid> = intents.iter().map(|id| id.0).collect();
        let next_block = searched_through.map_or(0, |through| block_column(through) + 1);
        let mut connection = self.database.connection().await?;
        diesel::update(x402_payments::table.filter(x402_payments::intent_id.eq_any(&ids)))
            .set((
                x402_payments::watch_held_until.eq(None::<OffsetDateTime>),
                x402_payments::watch_from_block.eq(sql::<Nullable<BigInt>>(
                    "GREATEST(x402_payments.watch_from_block, ",
                )
                .bind::<BigInt, _>(next_block)
                .sql(")")),
            ))
            .execute(&mut connection)
            .await
            .map_err(from_diesel)?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn settle_authorization(
        &self,
        intent: IntentId,
        settled: AuthorizationSettled,
    ) -> Result<TransferIntentRecord, TransitionError> {
        self.database
            .in_transaction(|connection| {
                async move { settle_locked(connection, intent, settled).await }.scope_boxed()
            })
            .await
    }
}
