//! Listings (an inbox's messages, an agent's intents) and how a reader knows one has not changed.

use domain::{AgentId, EmailInboxId};

/// A listing whose pages are read newest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Listing {
    Inbox(EmailInboxId),
    Intents(AgentId),
}

/// A listing at one point of its history: how many times its rows had changed. Two readings are
/// equal only when no change committed between them, so a page read at one is still the page at
/// the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListingVersion {
    pub listing: Listing,
    pub changes: i64,
}
