//! Agents and the resources provisioned for them.

use async_trait::async_trait;
use domain::keys::{AgentKeyRecord, KeyId};
use domain::{
    Actor, AgentId, AgentKeyHash, AgentProfile, Chain, Custody, EmailAddress, EvmAddress, Label,
    PhoneNumber, PolicyAsset, PolicyChange, PolicyChangeRefused, SpendPolicyRecord,
    WebhookEndpointRecord,
};

use crate::StoreError;

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
    pub chain: Chain,
    pub address: EvmAddress,
    pub custody: Custody,
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
    /// The first key: every scope, no expiry.
    pub key_id: KeyId,
    pub key_hash: AgentKeyHash,
    pub phone_number: Option<NewPhoneNumber>,
    pub email_inbox: Option<NewEmailInbox>,
    pub wallet: Option<NewWallet>,
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait AgentStore: Send + Sync {
    /// Creates the agent, its sponsor if new, and its resources, all or nothing, audited as
    /// `actor`'s.
    async fn create(&self, agent: NewAgent, actor: &Actor) -> Result<AgentProfile, StoreError>;

    /// The profile of the active agent holding the unrevoked key with this hash, and that key
    /// (which may have expired), in one round trip.
    async fn active_profile_by_key_hash(
        &self,
        hash: &AgentKeyHash,
    ) -> Result<Option<(AgentProfile, AgentKeyRecord)>, StoreError>;

    async fn profile(&self, id: AgentId) -> Result<Option<AgentProfile>, StoreError>;

    /// All agents, oldest first.
    async fn list(&self) -> Result<Vec<AgentProfile>, StoreError>;

    /// Marks the agent inactive, audited as `actor`'s when it was active, and disables its
    /// enabled webhook endpoints; `false` when no such agent exists.
    async fn deactivate(&self, id: AgentId, actor: &Actor) -> Result<bool, StoreError>;

    /// Replaces the first key with `key_id` and `hash`: the old one and every key made from it
    /// stop working at once, audited as `actor`'s, and the endpoints they made are disabled;
    /// those endpoints, `None` when no such agent.
    async fn replace_first_key(
        &self,
        id: AgentId,
        key_id: KeyId,
        hash: AgentKeyHash,
        actor: &Actor,
    ) -> Result<Option<Vec<WebhookEndpointRecord>>, StoreError>;

    /// Applies `change` to the spend policy of the agent's wallet, creating the policy for `asset`
    /// when the wallet has none, and sets the approvals the wallet's pending intents need by the
    /// changed policy; a change that changed something is audited as `actor`'s. `None` when the
    /// agent has no wallet.
    async fn update_policy(
        &self,
        id: AgentId,
        asset: PolicyAsset,
        change: PolicyChange,
        actor: &Actor,
    ) -> Result<Option<SpendPolicyRecord>, PolicyUpdateError>;
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyUpdateError {
    /// The change would make a policy the domain's rules refuse; nothing was changed.
    #[error(transparent)]
    Refused(#[from] PolicyChangeRefused),
    #[error(transparent)]
    Store(#[from] StoreError),
}
