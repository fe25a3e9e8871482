//! What several use cases can answer alike.

/// The agent has no such resource: it was not provisioned when the agent was created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotProvisioned {
    #[error("the agent has no wallet")]
    Wallet,
    #[error("the agent has no email inbox")]
    EmailInbox,
    #[error("the agent has no phone number")]
    PhoneNumber,
}
