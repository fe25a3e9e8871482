//! The sandbox chain: balances kept in PostgreSQL, so `make run` needs no node. It answers the
//! `ChainClient` port as a node would; tokens have 6 decimals, like USDC.

use async_trait::async_trait;
use bigdecimal::BigDecimal;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use domain::{AtomicAmount, EvmAddress, U256};
use ports::{ChainClient, ChainError, StoreError};

use crate::database::Database;
use crate::errors::from_diesel;
use crate::rows::{address_column, numeric_column, u256_from_numeric};
use crate::schema::sandbox_balances;

/// Decimals of every sandbox token.
pub const SANDBOX_TOKEN_DECIMALS: u8 = 6;
/// Key of the native asset in `sandbox_balances.token_address`.
const NATIVE: &str = "";

pub struct PgSandboxChain {
    database: Database,
}

fn chain_error(error: StoreError) -> ChainError {
    match error {
        StoreError::Unavailable(cause) => ChainError::Unavailable(cause),
        other => ChainError::Unexpected(other.to_string()),
    }
}

impl PgSandboxChain {
    pub fn new(database: Database) -> Self {
        Self { database }
    }

    /// Credits `amount` of `token` (`None`: the native asset) to `holder`; returns the new balance.
    pub async fn fund(
        &self,
        holder: &EvmAddress,
        token: Option<&EvmAddress>,
        amount: AtomicAmount,
    ) -> Result<U256, StoreError> {
        let mut connection = self.database.connection().await?;
        let token = token.map_or_else(|| NATIVE.to_owned(), address_column);
        let credited = numeric_column(&amount);
        let balance: BigDecimal = diesel::insert_into(sandbox_balances::table)
            .values((
                sandbox_balances::holder.eq(address_column(holder)),
                sandbox_balances::token_address.eq(&token),
                sandbox_balances::amount_atomic.eq(&credited),
            ))
            .on_conflict((sandbox_balances::holder, sandbox_balances::token_address))
            .do_update()
            .set((
                sandbox_balances::amount_atomic.eq(sandbox_balances::amount_atomic + &credited),
                sandbox_balances::updated_at.eq(diesel::dsl::now),
            ))
            .returning(sandbox_balances::amount_atomic)
            .get_result(&mut connection)
            .await
            .map_err(from_diesel)?;
        u256_from_numeric(&balance)
    }

    async fn balance(&self, holder: &EvmAddress, token: &str) -> Result<U256, StoreError> {
        let mut connection = self.database.connection().await?;
        let balance: Option<BigDecimal> = sandbox_balances::table
            .find((address_column(holder), token))
            .select(sandbox_balances::amount_atomic)
            .first(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        balance.as_ref().map_or(Ok(U256::ZERO), u256_from_numeric)
    }
}

#[async_trait]
impl ChainClient for PgSandboxChain {
    async fn native_balance(&self, owner: &EvmAddress) -> Result<U256, ChainError> {
        self.balance(owner, NATIVE).await.map_err(chain_error)
    }

    async fn token_balance(
        &self,
        token: &EvmAddress,
        owner: &EvmAddress,
    ) -> Result<U256, ChainError> {
        self.balance(owner, &address_column(token))
            .await
            .map_err(chain_error)
    }

    async fn token_decimals(&self, _token: &EvmAddress) -> Result<u8, ChainError> {
        Ok(SANDBOX_TOKEN_DECIMALS)
    }
}
