//! A wallet as the service knows it: where it lives, who holds its key, the policy that governs
//! what it may send, and its balances.

use std::fmt;

use time::OffsetDateTime;

use crate::{AssetBalance, Chain, EvmAddress, PolicyAsset, SpendPolicyId, SpendRules, WalletId};

/// Whether a wallet may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WalletStatus {
    Active,
}

impl WalletStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        (name == "active").then_some(Self::Active)
    }
}

impl fmt::Display for WalletStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who holds a wallet's private key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Custody {
    /// The service holds it, sealed under the operator's master key.
    SelfCustodial,
}

impl Custody {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SelfCustodial => "self_custodial",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        (name == "self_custodial").then_some(Self::SelfCustodial)
    }
}

impl fmt::Display for Custody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The spend policy in force for a wallet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpendPolicyRecord {
    pub id: SpendPolicyId,
    pub asset: PolicyAsset,
    pub rules: SpendRules,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalletRecord {
    pub id: WalletId,
    /// The key vault that made the wallet's key.
    pub provider: String,
    pub chain: Chain,
    pub address: EvmAddress,
    pub custody: Custody,
    pub status: WalletStatus,
    pub delegated: bool,
    pub spend_policy: Option<SpendPolicyRecord>,
    pub created_at: OffsetDateTime,
}

impl WalletRecord {
    /// The policy in force: the stored one, or without one the policy of no limits, in `asset`.
    pub fn policy_in_force(self, asset: &PolicyAsset) -> SpendPolicyRecord {
        self.spend_policy.unwrap_or_else(|| SpendPolicyRecord {
            id: SpendPolicyId(self.id.0),
            asset: asset.clone(),
            rules: SpendRules::default(),
            created_at: self.created_at,
            updated_at: self.created_at,
        })
    }
}

/// A wallet and its balances, read from the chain at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalletBalances {
    pub wallet: WalletRecord,
    pub assets: Vec<AssetBalance>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_custody_read_back_what_they_write() {
        assert_eq!(
            WalletStatus::parse(WalletStatus::Active.as_str()),
            Some(WalletStatus::Active)
        );
        assert_eq!(WalletStatus::parse("frozen"), None);
        assert_eq!(
            Custody::parse(Custody::SelfCustodial.as_str()),
            Some(Custody::SelfCustodial)
        );
        assert_eq!(Custody::parse("delegated"), None);
    }
}
