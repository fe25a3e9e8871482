//! The sandbox chain: balances kept in PostgreSQL, so `make run` needs no node. It answers the
//! `ChainClient` port as a node would; tokens have 6 decimals, like USDC.

use async_trait::async_trait;
use bigdecimal::BigDecimal;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncPgConnection;
use diesel_async::RunQueryDsl;
use domain::{AtomicAmount, EvmAddress, FeeQuote, U256};
use ports::{
    BroadcastError, ChainClient, ChainError, ChainWriter, ReceiptStatus, SignedTransfer, StoreError,
};

use crate::database::Database;
use crate::errors::{from_diesel, TxError};
use crate::rows::{address_column, numeric_column, u256_from_numeric, u256_numeric};
use crate::schema::{sandbox_balances, sandbox_transactions};

/// The sandbox answers as Base mainnet does.
pub const SANDBOX_CHAIN_ID: u64 = 8453;
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

    /// How many transactions `sender` has had mined.
    async fn used_nonces(&self, sender: &EvmAddress) -> Result<u64, ChainError> {
        let mut connection = self.database.connection().await.map_err(chain_error)?;
        let used: i64 = sandbox_transactions::table
            .filter(sandbox_transactions::sender.eq(address_column(sender)))
            .count()
            .get_result(&mut connection)
            .await
            .map_err(|error| chain_error(from_diesel(error)))?;
        Ok(u64::try_from(used).unwrap_or_default())
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
    #[tracing::instrument(level = "debug", skip(self))]
    async fn native_balance(&self, owner: &EvmAddress) -> Result<U256, ChainError> {
        self.balance(owner, NATIVE).await.map_err(chain_error)
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn token_balance(
        &self,
        token: &EvmAddress,
        owner: &EvmAddress,
    ) -> Result<U256, ChainError> {
        self.balance(owner, &address_column(token))
            .await
            .map_err(chain_error)
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn token_decimals(&self, _token: &EvmAddress) -> Result<u8, ChainError> {
        Ok(SANDBOX_TOKEN_DECIMALS)
    }
}

fn transfer_store_error(error: StoreError) -> BroadcastError {
    match error {
        StoreError::Unavailable(cause) => BroadcastError::Unavailable(cause),
        other => BroadcastError::Rejected(other.to_string()),
    }
}

/// Mines `transfer` at once: moves the tokens, or records a revert when the sender lacks them
/// (the nonce is used either way, as on a real chain). A known hash is accepted again unchanged.
async fn mine(
    connection: &mut AsyncPgConnection,
    transfer: &SignedTransfer,
) -> Result<Result<(), String>, TxError<StoreError>> {
    let known: i64 = sandbox_transactions::table
        .filter(sandbox_transactions::hash.eq(&transfer.hash))
        .count()
        .get_result(connection)
        .await?;
    if known > 0 {
        return Ok(Ok(()));
    }
    let sender = address_column(&transfer.from);
    let used: i64 = sandbox_transactions::table
        .filter(sandbox_transactions::sender.eq(&sender))
        .count()
        .get_result(connection)
        .await?;
    let nonce = i64::try_from(transfer.nonce).unwrap_or(i64::MAX);
    if nonce != used {
        return Ok(Err(format!(
            "nonce {nonce} does not follow {used} earlier transactions"
        )));
    }
    let token = address_column(&transfer.token);
    let amount = u256_numeric(transfer.amount);
    let balance: Option<BigDecimal> = sandbox_balances::table
        .find((&sender, &token))
        .select(sandbox_balances::amount_atomic)
        .for_update()
        .first(connection)
        .await
        .optional()?;
    let succeeded = balance.is_some_and(|balance| balance >= amount);
    if succeeded {
        diesel::update(sandbox_balances::table.find((&sender, &token)))
            .set((
                sandbox_balances::amount_atomic.eq(sandbox_balances::amount_atomic - &amount),
                sandbox_balances::updated_at.eq(diesel::dsl::now),
            ))
            .execute(connection)
            .await?;
        diesel::insert_into(sandbox_balances::table)
            .values((
                sandbox_balances::holder.eq(address_column(&transfer.to)),
                sandbox_balances::token_address.eq(&token),
                sandbox_balances::amount_atomic.eq(&amount),
            ))
            .on_conflict((sandbox_balances::holder, sandbox_balances::token_address))
            .do_update()
            .set((
                sandbox_balances::amount_atomic.eq(sandbox_balances::amount_atomic + &amount),
                sandbox_balances::updated_at.eq(diesel::dsl::now),
            ))
            .execute(connection)
            .await?;
    }
    diesel::insert_into(sandbox_transactions::table)
        .values((
            sandbox_transactions::hash.eq(&transfer.hash),
            sandbox_transactions::sender.eq(&sender),
            sandbox_transactions::token_address.eq(&token),
            sandbox_transactions::recipient.eq(address_column(&transfer.to)),
            sandbox_transactions::amount_atomic.eq(&amount),
            sandbox_transactions::nonce.eq(nonce),
            sandbox_transactions::succeeded.eq(succeeded),
        ))
        .execute(connection)
        .await?;
    Ok(Ok(()))
}

#[async_trait]
impl ChainWriter for PgSandboxChain {
    async fn chain_id(&self) -> Result<u64, ChainError> {
        Ok(SANDBOX_CHAIN_ID)
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn pending_nonce(&self, sender: &EvmAddress) -> Result<u64, ChainError> {
        self.used_nonces(sender).await
    }

    /// The sandbox mines at once: every accepted transaction is a mined one.
    #[tracing::instrument(level = "debug", skip(self))]
    async fn mined_nonce(&self, sender: &EvmAddress) -> Result<u64, ChainError> {
        self.used_nonces(sender).await
    }

    async fn fee_quote(&self) -> Result<FeeQuote, ChainError> {
        Ok(FeeQuote {
            max_fee_per_gas: 1_000_000_000,
            max_priority_fee_per_gas: 100_000_000,
        })
    }

    #[tracing::instrument(level = "debug", skip_all, fields(tx_hash = %transfer.hash, nonce = transfer.nonce))]
    async fn broadcast(&self, transfer: &SignedTransfer) -> Result<(), BroadcastError> {
        let mined = self
            .database
            .in_transaction::<_, StoreError, _>(|connection| {
                async move { mine(connection, transfer).await }.scope_boxed()
            })
            .await
            .map_err(transfer_store_error)?;
        mined.map_err(BroadcastError::Rejected)
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn receipt(&self, tx_hash: &str) -> Result<ReceiptStatus, ChainError> {
        let mut connection = self.database.connection().await.map_err(chain_error)?;
        let succeeded: Option<bool> = sandbox_transactions::table
            .find(tx_hash)
            .select(sandbox_transactions::succeeded)
            .first(&mut connection)
            .await
            .optional()
            .map_err(|error| chain_error(from_diesel(error)))?;
        Ok(match succeeded {
            None => ReceiptStatus::Pending,
            Some(true) => ReceiptStatus::Succeeded,
            Some(false) => ReceiptStatus::Reverted,
        })
    }
}
