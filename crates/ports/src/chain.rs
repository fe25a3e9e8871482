//! Reading the chain a wallet lives on.

use std::ops::RangeInclusive;

use async_trait::async_trait;
use domain::x402::{BlockHead, UsedAuthorization};
use domain::{EvmAddress, FeeQuote, U256};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    /// The node (or the sandbox chain's store) could not be reached or did not answer in time.
    #[error("chain unavailable: {0}")]
    Unavailable(String),
    /// The node answered something that cannot be right (e.g. a token without `decimals`).
    #[error("unexpected chain answer: {0}")]
    Unexpected(String),
}

/// Fresh balances, read from the chain at the time of the call.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait ChainClient: Send + Sync {
    /// Balance of the chain's native asset, in wei.
    async fn native_balance(&self, owner: &EvmAddress) -> Result<U256, ChainError>;

    /// ERC-20 `balanceOf(owner)` of `token`, in the token's atomic units.
    async fn token_balance(
        &self,
        token: &EvmAddress,
        owner: &EvmAddress,
    ) -> Result<U256, ChainError>;

    /// ERC-20 `decimals()` of `token`.
    async fn token_decimals(&self, token: &EvmAddress) -> Result<u8, ChainError>;

    /// The EIP-712 `DOMAIN_SEPARATOR()` of `token`: what every authorization it takes is signed
    /// under.
    async fn token_domain_separator(&self, token: &EvmAddress) -> Result<[u8; 32], ChainError>;

    /// The block `number`, or the latest one.
    async fn block_head(&self, number: Option<u64>) -> Result<BlockHead, ChainError>;

    /// The EIP-3009 `AuthorizationUsed` logs of `token` signed by any of `authorizers`, in
    /// `blocks`: one query, whatever the number of authorizations watched.
    async fn authorizations_used(
        &self,
        token: &EvmAddress,
        authorizers: &[EvmAddress],
        blocks: RangeInclusive<u64>,
    ) -> Result<Vec<UsedAuthorization>, ChainError>;
}

/// An ERC-20 `transfer` to sign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferCall {
    pub chain_id: u64,
    pub nonce: u64,
    pub token: EvmAddress,
    pub to: EvmAddress,
    pub amount: U256,
    pub gas_limit: u64,
    pub fees: FeeQuote,
}

/// A signed transfer, recorded before it is broadcast so that a retry sends these very bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedTransfer {
    pub from: EvmAddress,
    pub token: EvmAddress,
    pub to: EvmAddress,
    pub amount: U256,
    pub nonce: u64,
    /// What the transaction offers to pay, so a replacement can offer more.
    pub fees: FeeQuote,
    /// EIP-2718 encoding of the signed transaction.
    pub raw: Vec<u8>,
    /// `0x` + 64 hex digits.
    pub hash: String,
}

/// A broadcast that did not go through. Neither kind proves that the transaction will not be
/// mined: the bytes may have reached the network before the error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BroadcastError {
    /// The node could not be reached or did not answer in time.
    #[error("chain unavailable: {0}")]
    Unavailable(String),
    /// The node answered with an error.
    #[error("transaction refused: {0}")]
    Rejected(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiptStatus {
    /// Not mined (yet).
    Pending,
    /// Mined in block `block_number`, and it succeeded.
    Succeeded {
        block_number: u64,
    },
    Reverted,
}

/// Sending transactions and following them.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait ChainWriter: Send + Sync {
    async fn chain_id(&self) -> Result<u64, ChainError>;

    /// The nonce of `sender`'s next transaction, counting those waiting in the mempool.
    async fn pending_nonce(&self, sender: &EvmAddress) -> Result<u64, ChainError>;

    /// How many of `sender`'s transactions are mined: every nonce below it is used for good.
    async fn mined_nonce(&self, sender: &EvmAddress) -> Result<u64, ChainError>;

    async fn fee_quote(&self) -> Result<FeeQuote, ChainError>;

    /// Sends `transfer`; sending the same bytes again is harmless.
    async fn broadcast(&self, transfer: &SignedTransfer) -> Result<(), BroadcastError>;

    async fn receipt(&self, tx_hash: &str) -> Result<ReceiptStatus, ChainError>;
}
