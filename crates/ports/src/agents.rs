//! Agents and the resources provisioned for them.

use async_trait::async_trait;
use domain::{
    AgentId, AgentKeyHash, Allowlist, EmailAddress, EvmAddress, Label, PhoneNumber, PolicyChange,
    SpendLimits,
};
use time::OffsetDateTime;
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRecord {
    pub id: AgentId,
    pub sponsor_id: Uuid,
    pub label: Option<String>,
    pub key_hash: AgentKeyHash,
    pub is_active: bool,
    pub created_at: OffsetDateTime,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhoneNumberRecord {
    pub id: Uuid,
    pub number: String,
    pub country_iso2: Option<String>,
    pub provider: String,
    pub created_at: OffsetDateTime,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailInboxRecord {
    pub id: Uuid,
    pub address: String,
    pub provider: String,
    pub created_at: OffsetDateTime,
}

/// What a spend policy governs: one asset on one chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyAsset {
    pub asset: String,
    pub chain: String,
    pub decimals: u8,
    /// `None` for the chain's native asset.
    pub token_address: Option<EvmAddress>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpendPolicyRecord {
    pub id: Uuid,
    pub asset: PolicyAsset,
    pub limits: SpendLimits,
    pub allowlist: Allowlist,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalletRecord {
    pub id: Uuid,
    pub provider: String,
    pub chain: String,
    pub address: EvmAddress,
    pub custody: String,
    pub status: String,
    pub delegated: bool,
    pub spend_policy: Option<SpendPolicyRecord>,
    pub created_at: OffsetDateTime,
}

/// An agent with every resource provisioned for it (`None` where provisioning was skipped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentProfile {
    pub agent: AgentRecord,
    pub phone_number: Option<PhoneNumberRecord>,
    pub email_inbox: Option<EmailInboxRecord>,
    pub wallet: Option<WalletRecord>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPhoneNumber {
    pub number: PhoneNumber,
    pub country_iso2: Option<String>,
    pub provider: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEmailInbox {
    pub address: EmailAddress,
    pub provider: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewWallet {
    pub provider: String,
    pub chain: String,
    pub address: EvmAddress,
    pub custody: String,
    /// The private key, sealed by the key vault; the store never sees it in clear.
    pub sealed_key: Vec<u8>,
    pub policy_asset: PolicyAsset,
}

/// Everything needed to create an agent and its resources in one atomic step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAgent {
    pub id: AgentId,
    pub sponsor: String,
    pub label: Option<Label>,
    pub key_hash: AgentKeyHash,
    pub phone_number: Option<NewPhoneNumber>,
    pub email_inbox: Option<NewEmailInbox>,
    pub wallet: Option<NewWallet>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// A uniqueness rule was broken; the string names what collided.
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("store unavailable: {0}")]
    Unavailable(String),
    #[error("store failure: {0}")]
    Internal(String),
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait AgentStore: Send + Sync {
    /// Creates the agent, its sponsor if new, and its resources, all or nothing.
    async fn create(&self, agent: NewAgent) -> Result<AgentProfile, StoreError>;

    /// The active agent whose key has this hash.
    async fn find_active_by_key_hash(
        &self,
        hash: &AgentKeyHash,
    ) -> Result<Option<AgentRecord>, StoreError>;

    async fn profile(&self, id: AgentId) -> Result<Option<AgentProfile>, StoreError>;

    /// The agent's wallet with its spend policy; `None` when it has none.
    async fn wallet(&self, id: AgentId) -> Result<Option<WalletRecord>, StoreError>;

    /// All agents, oldest first.
    async fn list(&self) -> Result<Vec<AgentProfile>, StoreError>;

    /// Marks the agent inactive; `false` when no such agent exists.
    async fn deactivate(&self, id: AgentId) -> Result<bool, StoreError>;

    /// Replaces the key hash, so the old key stops working at once; `false` when no such agent.
    async fn replace_key_hash(&self, id: AgentId, hash: AgentKeyHash) -> Result<bool, StoreError>;

    /// Applies `change` to the spend policy of the agent's wallet, creating the policy for `asset`
    /// when the wallet has none. `None` when the agent has no wallet.
    async fn update_policy(
        &self,
        id: AgentId,
        asset: PolicyAsset,
        change: PolicyChange,
    ) -> Result<Option<SpendPolicyRecord>, StoreError>;
}
