//! Providers that hand out the resources of a new agent.

use async_trait::async_trait;
use domain::x402::{TokenDomain, TransferAuthorization};
use domain::{AgentId, Custody, EmailAddress, EvmAddress, PhoneNumber};

use crate::{SignedTransfer, TransferCall};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    #[error("provider unavailable: {0}")]
    Unavailable(String),
    #[error("provider refused: {0}")]
    Refused(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProvisionedInbox {
    pub address: EmailAddress,
    pub provider: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProvisionedNumber {
    pub number: PhoneNumber,
    pub country_iso2: Option<String>,
    pub provider: String,
}

/// A new wallet key: its public address and the private key sealed for storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedWalletKey {
    pub address: EvmAddress,
    pub sealed_key: Vec<u8>,
    pub provider: String,
    pub custody: Custody,
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait InboxProvisioner: Send + Sync {
    async fn provision_inbox(&self, agent: AgentId) -> Result<ProvisionedInbox, ProviderError>;
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait NumberProvisioner: Send + Sync {
    async fn provision_number(&self) -> Result<ProvisionedNumber, ProviderError>;
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait KeyVault: Send + Sync {
    /// Generates a fresh wallet key and returns it sealed; the clear key never leaves the vault.
    async fn create_wallet_key(&self) -> Result<SealedWalletKey, ProviderError>;

    /// Signs `call` with the key sealed in `sealed_key` for `from`, opened only for this signature.
    async fn sign_transfer(
        &self,
        sealed_key: &[u8],
        from: &EvmAddress,
        call: TransferCall,
    ) -> Result<SignedTransfer, ProviderError>;

    /// Signs the EIP-712 hash of `authorization` under `domain` with the key sealed in
    /// `sealed_key` for `authorization.from`: 65 bytes, r, s and v (27 or 28), as EIP-3009 tokens
    /// and x402 take them.
    async fn sign_transfer_authorization(
        &self,
        sealed_key: &[u8],
        authorization: &TransferAuthorization,
        domain: &TokenDomain,
    ) -> Result<[u8; 65], ProviderError>;

    /// `sealed_key` of `address` sealed anew under the vault's current master key, or `None` when
    /// it already is; refused when no key the vault holds opens it.
    async fn reseal_wallet_key(
        &self,
        sealed_key: &[u8],
        address: &EvmAddress,
    ) -> Result<Option<Vec<u8>>, ProviderError>;
}
