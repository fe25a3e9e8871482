//! The agent and its provisioned resources.

use domain::keys::AgentKeyRecord;
use domain::{AgentProfile, EmailInboxRecord, PhoneNumberRecord, SpendPolicyRecord, WindowUsage};
use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::{KeyInUseOut, SpendPolicyOut, WalletOut};

#[derive(Debug, Serialize, ToSchema)]
pub struct AgentResponse {
    pub id: Uuid,
    pub is_active: bool,
    pub label: Option<String>,
    /// First 16 hex characters of the SHA-256 of the key in use (of the first key, where an
    /// operator reads the agent); the key itself is never returned.
    pub agent_key_hash: Option<String>,
    /// The key in use (the first key, where an operator reads the agent).
    pub key: Option<KeyInUseOut>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub created_at: Option<OffsetDateTime>,
    pub phone_number: Option<PhoneNumberOut>,
    pub email_inbox: Option<EmailInboxOut>,
    pub wallet: Option<WalletOut>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PhoneNumberOut {
    pub id: Uuid,
    /// E.164, e.g. `+15550100001`.
    pub number: String,
    pub country_iso2: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EmailInboxOut {
    pub id: Uuid,
    pub address: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl AgentResponse {
    /// The agent seen with `key`, without its policy's usage.
    pub fn new(profile: &AgentProfile, key: Option<&AgentKeyRecord>) -> Self {
        Self::with_wallet(profile, key, profile.wallet.as_ref().map(Into::into))
    }

    /// The agent as it reads itself (`/v1/agents/me`, MCP's `get_me`, `agentctl agents show`)
    /// with `key`: its wallet's policy `shown` with what each window it caps holds.
    pub fn with_usage(
        profile: &AgentProfile,
        key: Option<&AgentKeyRecord>,
        shown: Option<(&SpendPolicyRecord, &[WindowUsage])>,
    ) -> Self {
        let wallet = profile.wallet.as_ref().map(|wallet| match shown {
            Some((policy, windows)) => {
                WalletOut::with_policy(wallet, Some(SpendPolicyOut::with_usage(policy, windows)))
            }
            None => wallet.into(),
        });
        Self::with_wallet(profile, key, wallet)
    }

    fn with_wallet(
        profile: &AgentProfile,
        key: Option<&AgentKeyRecord>,
        wallet: Option<WalletOut>,
    ) -> Self {
        let agent = &profile.agent;
        Self {
            id: agent.id.0,
            is_active: agent.is_active,
            label: agent.label.as_ref().map(|label| label.as_str().to_owned()),
            agent_key_hash: key.map(|key| key.hash.display_prefix()),
            key: key.map(KeyInUseOut::from),
            created_at: Some(agent.created_at),
            phone_number: profile.phone_number.as_ref().map(Into::into),
            email_inbox: profile.email_inbox.as_ref().map(Into::into),
            wallet,
        }
    }
}

impl From<&PhoneNumberRecord> for PhoneNumberOut {
    fn from(phone: &PhoneNumberRecord) -> Self {
        Self {
            id: phone.id.0,
            number: phone.number.to_string(),
            country_iso2: phone.country_iso2.clone(),
            created_at: phone.created_at,
        }
    }
}

impl From<&EmailInboxRecord> for EmailInboxOut {
    fn from(inbox: &EmailInboxRecord) -> Self {
        Self {
            id: inbox.id.0,
            address: inbox.address.to_string(),
            created_at: inbox.created_at,
        }
    }
}
