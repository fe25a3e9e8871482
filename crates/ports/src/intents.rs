//! Transfer intents, through one narrow port per client: admission (the wallet's send), the
//! ledger (reads and operator decisions), the execution queue (the executor) and the sweeper
//! (expiry of intents nobody confirmed).

use std::time::Duration;

use async_trait::async_trait;
use domain::{
    AgentId, CursorPosition, EvmAddress, IntentEvent, IntentId, IntentStatus, LeaseId,
    PolicyViolation, SpendPolicyRecord, TransferIntentRecord, TransferTerms, TransitionRefused,
};

use crate::{SignedTransfer, StoreError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTransferIntent {
    pub id: IntentId,
    pub agent_id: AgentId,
    pub terms: TransferTerms,
    pub token_address: Option<EvmAddress>,
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
    IdempotencyMismatch { original: IntentId },
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransitionError {
    #[error("intent {0} not found")]
    NotFound(IntentId),
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

/// The wallet's critical section for new intents.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait IntentAdmission: Send + Sync {
    /// In one critical section per wallet (across all server instances): replays an earlier
    /// intent with the same idempotency key, or sums what the wallet's intents created within the
    /// last `window` still hold, runs `check`, and stores the intent if it passes.
    async fn admit(
        &self,
        intent: NewTransferIntent,
        window: Duration,
        check: &AdmissionCheck,
    ) -> Result<Admission, AdmissionError>;
}

/// Reading intents, and the decisions people take on them.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait IntentLedger: Send + Sync {
    /// One agent's intents, newest first, strictly after `after`.
    async fn page(
        &self,
        agent: AgentId,
        after: Option<CursorPosition>,
        limit: usize,
    ) -> Result<Vec<TransferIntentRecord>, StoreError>;

    async fn find(&self, id: IntentId) -> Result<Option<TransferIntentRecord>, StoreError>;

    /// Every intent matching `filter`, newest first.
    async fn list(&self, filter: IntentFilter) -> Result<Vec<TransferIntentRecord>, StoreError>;

    /// Moves the intent by `event` under its row lock, through the domain state machine;
    /// `reason` is kept as the failure reason of a reject or fail.
    async fn transition(
        &self,
        id: IntentId,
        event: IntentEvent,
        reason: Option<String>,
    ) -> Result<TransferIntentRecord, TransitionError>;
}

/// A confirmed intent leased to one executor, with what signing it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmissionClaim {
    pub intent: TransferIntentRecord,
    /// Proof of the lease, presented when recording the submission.
    pub lease: LeaseId,
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
    LeaseLost(IntentId),
    /// Another transaction of the wallet took this nonce first; sign again with a fresh one.
    #[error("nonce {0} already taken")]
    NonceTaken(u64),
    #[error(transparent)]
    Transition(#[from] TransitionError),
}

impl From<StoreError> for SubmissionError {
    fn from(error: StoreError) -> Self {
        Self::Transition(TransitionError::Store(error))
    }
}

/// How an executed or abandoned transfer ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settlement {
    /// Its transaction was mined and succeeded.
    Executed,
    /// It did not and will not move money; the reason is kept on the intent.
    Failed(String),
}

/// The executor's queue: confirmed intents to sign, submitted ones to follow.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait ExecutionQueue: Send + Sync {
    /// Leases the oldest confirmed intent not leased to anyone else, for `lease_for`.
    async fn claim_confirmed(
        &self,
        lease_for: Duration,
    ) -> Result<Option<SubmissionClaim>, StoreError>;

    /// Records `transfer` for the intent and moves it to submitted, in one step, if `lease` still
    /// holds and the wallet has not used the nonce.
    async fn record_submission(
        &self,
        intent: IntentId,
        lease: LeaseId,
        transfer: &SignedTransfer,
    ) -> Result<TransferIntentRecord, SubmissionError>;

    /// Submitted intents, oldest first, with their recorded transactions.
    async fn submitted(&self, limit: usize) -> Result<Vec<SubmittedIntent>, StoreError>;

    /// Ends the intent as `settlement` says, through the domain state machine.
    async fn settle(
        &self,
        intent: IntentId,
        settlement: Settlement,
    ) -> Result<TransferIntentRecord, TransitionError>;

    /// How long the oldest confirmed intent has waited since its confirmation (on the database
    /// clock); `None` when none waits.
    async fn oldest_confirmed_wait(&self) -> Result<Option<Duration>, StoreError>;
}

/// Expiry of intents nobody confirmed in time.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait IntentSweeper: Send + Sync {
    /// Expires up to `limit` intents still pending after `pending_for`, through the domain state
    /// machine; rows another caller holds are skipped, not waited for. Returns those expired.
    async fn expire_pending(
        &self,
        pending_for: Duration,
        limit: usize,
    ) -> Result<Vec<TransferIntentRecord>, StoreError>;
}
