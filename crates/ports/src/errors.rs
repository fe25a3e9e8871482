//! How a store fails.

/// What a uniqueness rule found already taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Conflict {
    #[error("phone number already assigned")]
    PhoneNumber,
    #[error("email address already assigned")]
    EmailAddress,
    #[error("wallet address already assigned")]
    WalletAddress,
    #[error("agent key hash already stored")]
    AgentKey,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// A uniqueness rule the core knows about was broken.
    #[error("conflict: {0}")]
    Conflict(Conflict),
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// A lock the operation needs was not granted in time: others hold it; retry shortly.
    #[error("store busy: {0}")]
    Busy(String),
    #[error("store failure: {0}")]
    Internal(String),
}
