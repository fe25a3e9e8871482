//! Listings (an inbox's messages, an agent's intents, a wallet's policy) and how a reader knows
//! one has not changed.

use domain::{AgentId, EmailInboxId, WalletId};

/// Rows whose changes are counted: a listing whose pages are read newest first, or a wallet's
/// spend policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Listing {
    Inbox(EmailInboxId),
    Intents(AgentId),
    Policy(WalletId),
}

/// A listing at one point of its history: how many times its rows had changed. Two readings are
/// equal only when no change committed between them, so a page read at one is still the page at
/// the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListingVersion {
    pub listing: Listing,
    pub changes: i64,
}

/// Where what an agent's policy read shows stands, but for time: the changes to its intents and
/// to its wallet's policy. Equal readings mean neither changed between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsageVersion {
    pub intents: ListingVersion,
    pub policy: ListingVersion,
}

impl UsageVersion {
    /// `agent`'s intents at `intents` changes and its wallet's policy at `policy`.
    pub fn of(agent: AgentId, wallet: WalletId, intents: i64, policy: i64) -> Self {
        Self {
            intents: ListingVersion {
                listing: Listing::Intents(agent),
                changes: intents,
            },
            policy: ListingVersion {
                listing: Listing::Policy(wallet),
                changes: policy,
            },
        }
    }
}
