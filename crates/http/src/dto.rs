//! Response bodies of the runtime API, field for field as the spec names them.

use ports::{AgentProfile, EmailInboxRecord, PhoneNumberRecord, SpendPolicyRecord, WalletRecord};
use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

#[derive(Debug, Serialize, ToSchema)]
pub struct AgentResponse {
    pub id: Uuid,
    pub is_active: bool,
    pub label: Option<String>,
    /// First 16 hex characters of the SHA-256 of the key; the key itself is never returned.
    pub agent_key_hash: Option<String>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub created_at: Option<OffsetDateTime>,
    pub phone_number: Option<PhoneNumberOut>,
    pub email_inbox: Option<EmailInboxOut>,
    pub wallet: Option<WalletOut>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PhoneNumberOut {
    pub id: Uuid,
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

#[derive(Debug, Serialize, ToSchema)]
pub struct WalletOut {
    pub id: Uuid,
    pub provider: String,
    pub chain: String,
    /// EIP-55 checksummed.
    pub address: String,
    pub custody: String,
    pub status: String,
    pub delegated: bool,
    pub spend_policy: Option<SpendPolicyOut>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SpendPolicyOut {
    pub id: Uuid,
    pub asset: String,
    pub chain: String,
    pub decimals: u8,
    /// `null` for the chain's native asset.
    pub token_address: Option<String>,
    /// Integer in atomic units; `null` when no limit is configured.
    pub max_per_tx_atomic: Option<String>,
    /// Integer in atomic units; `null` when no limit is configured.
    pub max_daily_atomic: Option<String>,
    /// `null` when no allowlist is configured.
    pub allowlisted_addresses: Option<Vec<String>>,
}

impl From<&AgentProfile> for AgentResponse {
    fn from(profile: &AgentProfile) -> Self {
        let agent = &profile.agent;
        Self {
            id: agent.id.0,
            is_active: agent.is_active,
            label: agent.label.clone(),
            agent_key_hash: Some(agent.key_hash.display_prefix()),
            created_at: Some(agent.created_at),
            phone_number: profile.phone_number.as_ref().map(Into::into),
            email_inbox: profile.email_inbox.as_ref().map(Into::into),
            wallet: profile.wallet.as_ref().map(Into::into),
        }
    }
}

impl From<&PhoneNumberRecord> for PhoneNumberOut {
    fn from(phone: &PhoneNumberRecord) -> Self {
        Self {
            id: phone.id,
            number: phone.number.clone(),
            country_iso2: phone.country_iso2.clone(),
            created_at: phone.created_at,
        }
    }
}

impl From<&EmailInboxRecord> for EmailInboxOut {
    fn from(inbox: &EmailInboxRecord) -> Self {
        Self {
            id: inbox.id,
            address: inbox.address.clone(),
            created_at: inbox.created_at,
        }
    }
}

impl From<&WalletRecord> for WalletOut {
    fn from(wallet: &WalletRecord) -> Self {
        Self {
            id: wallet.id,
            provider: wallet.provider.clone(),
            chain: wallet.chain.clone(),
            address: wallet.address.to_string(),
            custody: wallet.custody.clone(),
            status: wallet.status.clone(),
            delegated: wallet.delegated,
            spend_policy: wallet.spend_policy.as_ref().map(Into::into),
            created_at: wallet.created_at,
        }
    }
}

impl From<&SpendPolicyRecord> for SpendPolicyOut {
    fn from(policy: &SpendPolicyRecord) -> Self {
        Self {
            id: policy.id,
            asset: policy.asset.asset.clone(),
            chain: policy.asset.chain.clone(),
            decimals: policy.asset.decimals,
            token_address: policy.asset.token_address.map(|a| a.to_string()),
            max_per_tx_atomic: policy.limits.max_per_tx.map(|a| a.to_string()),
            max_daily_atomic: policy.limits.max_daily.map(|a| a.to_string()),
            allowlisted_addresses: policy
                .allowlist
                .addresses()
                .map(|addresses| addresses.iter().map(ToString::to_string).collect()),
        }
    }
}
