//! Transfer intents and the per-wallet critical section that admits them.

use async_trait::async_trait;
use domain::{
    AgentId, AtomicAmount, CursorPosition, EvmAddress, IntentEvent, IntentStatus, PolicyViolation,
    TransitionRefused,
};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::{SpendPolicyRecord, StoreError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferIntentRecord {
    pub id: Uuid,
    pub agent_id: AgentId,
    pub wallet_id: Uuid,
    pub status: IntentStatus,
    pub asset: String,
    pub chain: String,
    pub token_address: Option<EvmAddress>,
    pub recipient: EvmAddress,
    pub amount: AtomicAmount,
    pub idempotency_key: Option<String>,
    pub tx_hash: Option<String>,
    pub failure_reason: Option<String>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    pub confirmed_at: Option<OffsetDateTime>,
}

impl TransferIntentRecord {
    /// Whether a retry carrying `request` asks for this very transfer.
    pub fn matches(&self, request: &NewTransferIntent) -> bool {
        self.asset == request.asset
            && self.chain == request.chain
            && self.recipient == request.recipient
            && self.amount == request.amount
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTransferIntent {
    pub id: Uuid,
    pub agent_id: AgentId,
    pub asset: String,
    pub chain: String,
    pub token_address: Option<EvmAddress>,
    pub recipient: EvmAddress,
    pub amount: AtomicAmount,
    pub idempotency_key: Option<String>,
}

/// The spend-policy decision, taken inside the wallet's critical section with the wallet's
/// policy and the amount its intents hold in the rolling window.
pub type AdmissionCheck =
    dyn Fn(&SpendPolicyRecord, domain::U256) -> Result<(), PolicyViolation> + Send + Sync;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    Created(TransferIntentRecord),
    /// The idempotency key was used before for the same transfer: the original intent.
    Replayed(TransferIntentRecord),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdmissionError {
    #[error("the agent has no wallet")]
    NoWallet,
    #[error(transparent)]
    Refused(PolicyViolation),
    /// The idempotency key was used before, by intent `original`, for a different transfer.
    #[error("idempotency key already used by intent {original} for a different transfer")]
    IdempotencyMismatch { original: Uuid },
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransitionError {
    #[error("intent {0} not found")]
    NotFound(Uuid),
    #[error(transparent)]
    Refused(TransitionRefused),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Filters of the operator's intent listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IntentFilter {
    pub agent: Option<AgentId>,
    pub status: Option<IntentStatus>,
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait IntentStore: Send + Sync {
    /// In one critical section per wallet (across all server instances): replays an earlier
    /// intent with the same idempotency key, or sums what the wallet's intents created within the
    /// last `window` still hold, runs `check`, and stores the intent if it passes.
    async fn admit(
        &self,
        intent: NewTransferIntent,
        window: std::time::Duration,
        check: &AdmissionCheck,
    ) -> Result<Admission, AdmissionError>;

    /// One agent's intents, newest first, strictly after `after`.
    async fn page(
        &self,
        agent: AgentId,
        after: Option<CursorPosition>,
        limit: usize,
    ) -> Result<Vec<TransferIntentRecord>, StoreError>;

    async fn find(&self, id: Uuid) -> Result<Option<TransferIntentRecord>, StoreError>;

    /// Every intent matching `filter`, newest first.
    async fn list(&self, filter: IntentFilter) -> Result<Vec<TransferIntentRecord>, StoreError>;

    /// Expires up to `limit` intents still pending after `pending_for`, through the domain state
    /// machine; rows another caller holds are skipped, not waited for. Returns those expired.
    async fn expire_pending(
        &self,
        pending_for: std::time::Duration,
        limit: usize,
    ) -> Result<Vec<TransferIntentRecord>, StoreError>;

    /// Moves the intent by `event` under its row lock, through the domain state machine;
    /// `reason` is kept as the failure reason of a reject or fail.
    async fn transition(
        &self,
        id: Uuid,
        event: IntentEvent,
        reason: Option<String>,
    ) -> Result<TransferIntentRecord, TransitionError>;
}
