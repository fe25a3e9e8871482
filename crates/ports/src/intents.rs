//! Transfer intents and the per-wallet critical section that admits them.

use async_trait::async_trait;
use domain::{
    AgentId, AtomicAmount, CursorPosition, EvmAddress, IntentEvent, IntentStatus, PolicyViolation,
    TransitionRefused,
};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::{SignedTransfer, SpendPolicyRecord, StoreError};

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

/// A confirmed intent leased to one executor, with what signing it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmissionClaim {
    pub intent: TransferIntentRecord,
    /// Proof of the lease, presented when recording the submission.
    pub lease: Uuid,
    pub wallet_address: EvmAddress,
    pub sealed_key: Vec<u8>,
    /// The nonce after the wallet's last recorded transaction, if it has one.
    pub next_nonce: Option<u64>,
    /// How many of the wallet's transactions are submitted and not yet final.
    pub in_flight: u64,
}

/// A submitted intent and the transaction recorded for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmittedIntent {
    pub intent: TransferIntentRecord,
    pub transfer: SignedTransfer,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubmissionError {
    /// The lease expired and another executor may hold the intent now.
    #[error("lease on intent {0} lost")]
    LeaseLost(Uuid),
    /// Another transaction of the wallet took this nonce first; sign again with a fresh one.
    #[error("nonce {0} already taken")]
    NonceTaken(u64),
    #[error(transparent)]
    Transition(#[from] TransitionError),
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

    /// Leases the oldest confirmed intent not leased to anyone else, for `lease_for`.
    async fn claim_confirmed(
        &self,
        lease_for: std::time::Duration,
    ) -> Result<Option<SubmissionClaim>, StoreError>;

    /// Records `transfer` for the intent and moves it to submitted, in one step, if `lease` still
    /// holds and the wallet has not used the nonce.
    async fn record_submission(
        &self,
        intent: Uuid,
        lease: Uuid,
        transfer: &SignedTransfer,
    ) -> Result<TransferIntentRecord, SubmissionError>;

    /// Submitted intents, oldest first, with their recorded transactions.
    async fn submitted(&self, limit: usize) -> Result<Vec<SubmittedIntent>, StoreError>;

    /// Moves the intent by `event` under its row lock, through the domain state machine;
    /// `reason` is kept as the failure reason of a reject or fail.
    async fn transition(
        &self,
        id: Uuid,
        event: IntentEvent,
        reason: Option<String>,
    ) -> Result<TransferIntentRecord, TransitionError>;
}
