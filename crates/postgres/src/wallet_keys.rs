//! `WalletKeyStore` on PostgreSQL: wallets' sealed keys, read in id order and replaced only if
//! unchanged.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use domain::WalletId;
use ports::{SealedKeyRecord, StoreError, WalletKeyStore};
use uuid::Uuid;

use crate::database::Database;
use crate::errors::from_diesel;
use crate::rows::{parse_address, row_limit};
use crate::schema::wallets;

pub struct PgWalletKeyStore {
    database: Database,
}

impl PgWalletKeyStore {
    pub fn new(database: Database) -> Self {
        Self { database }
    }
}

#[async_trait]
impl WalletKeyStore for PgWalletKeyStore {
    async fn sealed_keys_after(
        &self,
        after: Option<WalletId>,
        limit: usize,
    ) -> Result<Vec<SealedKeyRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        let rows: Vec<(Uuid, String, Vec<u8>)> = wallets::table
            .filter(wallets::id.gt(after.map_or(Uuid::nil(), |wallet| wallet.0)))
            .order(wallets::id)
            .limit(row_limit(limit))
            .select((wallets::id, wallets::address, wallets::sealed_key))
            .load(&mut connection)
            .await
            .map_err(from_diesel)?;
        rows.into_iter()
            .map(|(wallet_id, address, sealed_key)| {
                Ok(SealedKeyRecord {
                    wallet_id: WalletId(wallet_id),
                    address: parse_address(&address)?,
                    sealed_key,
                })
            })
            .collect()
    }

    async fn replace_sealed_key(
        &self,
        wallet_id: WalletId,
        expected: &[u8],
        sealed_key: &[u8],
    ) -> Result<bool, StoreError> {
        let mut connection = self.database.connection().await?;
        let replaced = diesel::update(
            wallets::table
                .filter(wallets::id.eq(wallet_id.0))
                .filter(wallets::sealed_key.eq(expected)),
        )
        .set(wallets::sealed_key.eq(sealed_key))
        .execute(&mut connection)
        .await
        .map_err(from_diesel)?;
        Ok(replaced == 1)
    }
}
