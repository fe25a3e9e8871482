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
    /// The object store that keeps attachments' bytes could not be reached, or failed for a
    /// while: what it holds is unavailable, the database need not be.
    #[error("object store unavailable: {0}")]
    ObjectStoreUnavailable(String),
    /// A statement ran past the time it was given (`statement_timeout`): the database is slow,
    /// or what was asked of it too much.
    #[error("store timed out: {0}")]
    TimedOut(String),
    #[error("store failure: {0}")]
    Internal(String),
}

/// The idempotency key of a write that has no row of its own to hold it (decision 0094): the
/// key, the agent key the request came with (keys are remembered per agent key), and the
/// fingerprint of the request, which a retry must repeat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestKey {
    pub key: domain::IdempotencyKey,
    pub made_by: domain::keys::KeyId,
    pub fingerprint: [u8; 32],
}

/// A write's answer, and whether it is the first answer of its idempotency key given again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered<T> {
    pub answer: T,
    pub replayed: bool,
}

impl<T> Answered<T> {
    /// An answer made now.
    pub fn new(answer: T) -> Self {
        Self {
            answer,
            replayed: false,
        }
    }
}

/// Why a write under an idempotency key and a rate was turned away before its own checks; every
/// such write decides it in one order (decision 0054).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyedRefusal<Id: std::fmt::Display> {
    /// Another request with the same idempotency key is being written right now.
    #[error("a request with this idempotency key is in progress")]
    KeyInFlight,
    /// The idempotency key was used before, by `original`, for a different request.
    #[error("idempotency key already used by {original} for a different request")]
    IdempotencyMismatch { original: Id },
    /// A bucket the write takes from is empty for now.
    #[error("the send rate is exhausted; retry after {retry_after:?}")]
    RateLimited { retry_after: std::time::Duration },
}
