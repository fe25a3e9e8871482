//! `WalletUsage`: the agent's wallet with what its windows hold (`window`), the version of its
//! usage, and the recipients its wallets paid.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Array, Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use domain::{AgentId, EvmAddress, Held, WalletId, WalletRecord};
use ports::{StoreError, UsageReading, UsageVersion, WalletUsage};
use time::OffsetDateTime;
use uuid::Uuid;

use super::window::{read_usage_version, wallet_and_held, wallet_usage};
use super::PgIntentStore;
use crate::errors::from_diesel;
use crate::prepared::Prepared;
use crate::rows::{address_column, parse_address};

/// A recipient its wallet paid, as `paid_recipients` reads it.
#[derive(QueryableByName)]
struct PaidRecipient {
    #[diesel(sql_type = SqlUuid)]
    wallet_id: Uuid,
    #[diesel(sql_type = Text)]
    recipient_address: String,
}

#[async_trait]
impl WalletUsage for PgIntentStore {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn wallet_and_held(
        &self,
        agent: AgentId,
        recipient: Option<EvmAddress>,
    ) -> Result<Option<(WalletRecord, Held)>, StoreError> {
        let mut connection = self.database.connection().await?;
        wallet_and_held(&mut connection, agent, recipient.as_ref()).await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn usage(&self, agent: AgentId) -> Result<Option<UsageReading>, StoreError> {
        let mut connection = self.database.read_connection().await?;
        wallet_usage(&mut connection, agent).await
    }

    async fn usage_version(
        &self,
        agent: AgentId,
        wallet: WalletId,
    ) -> Result<(UsageVersion, OffsetDateTime), StoreError> {
        let mut connection = self.database.connection().await?;
        read_usage_version(&mut connection, agent, wallet).await
    }

    async fn paid_recipients(
        &self,
        pairs: Vec<(WalletId, EvmAddress)>,
    ) -> Result<Vec<(WalletId, EvmAddress)>, StoreError> {
        if pairs.is_empty() {
            return Ok(Vec::new());
        }
        let (wallets, recipients): (Vec<Uuid>, Vec<String>) = pairs
            .iter()
            .map(|(wallet, recipient)| (wallet.0, address_column(recipient)))
            .unzip();
        let mut connection = self.database.connection().await?;
        let paid: Vec<PaidRecipient> = Prepared(
            diesel::sql_query(
                "SELECT asked.wallet_id, asked.recipient_address \
                 FROM unnest($1::uuid[], $2::text[]) AS asked (wallet_id, recipient_address) \
                 WHERE EXISTS (SELECT 1 FROM transfer_intents AS paid \
                     WHERE paid.wallet_id = asked.wallet_id \
                       AND paid.recipient_address = asked.recipient_address \
                       AND paid.status = 'executed')",
            )
            .bind::<Array<SqlUuid>, _>(wallets)
            .bind::<Array<Text>, _>(recipients),
        )
        .load(&mut connection)
        .await
        .map_err(from_diesel)?;
        paid.into_iter()
            .map(|paid| {
                Ok((
                    WalletId(paid.wallet_id),
                    parse_address(&paid.recipient_address)?,
                ))
            })
            .collect()
    }
}
