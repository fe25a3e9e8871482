//! Reading the chain a wallet lives on.

use async_trait::async_trait;
use domain::{EvmAddress, U256};

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
}
