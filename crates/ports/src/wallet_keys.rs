//! Sealed wallet keys as stored, for re-sealing them under a new master key.

use async_trait::async_trait;
use domain::{EvmAddress, WalletId};

use crate::StoreError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedKeyRecord {
    pub wallet_id: WalletId,
    pub address: EvmAddress,
    pub sealed_key: Vec<u8>,
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait WalletKeyStore: Send + Sync {
    /// Up to `limit` wallets' sealed keys in wallet id order, starting after `after`.
    async fn sealed_keys_after(
        &self,
        after: Option<WalletId>,
        limit: usize,
    ) -> Result<Vec<SealedKeyRecord>, StoreError>;

    /// Stores `sealed_key` for the wallet if its sealed key is still `expected`; `false` when it
    /// changed in the meantime.
    async fn replace_sealed_key(
        &self,
        wallet_id: WalletId,
        expected: &[u8],
        sealed_key: &[u8],
    ) -> Result<bool, StoreError>;
}
