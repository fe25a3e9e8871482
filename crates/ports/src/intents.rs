//! Transfer intents, through narrow ports: admission (the wallet's send), the records (reads of
//! intents), the wallets' usage (spend windows), the transitions (operators' decisions), the
//! submission and settlement queues (the executor) and the sweeper (expiry of intents nobody
//! confirmed).

use std::time::Duration;

use async_trait::async_trait;
use domain::x402::{
    AuthorizationWindow, BlockHead, ChosenOffer, SettlementResponse, WatchedAuthorization,
};
use domain::{
    Actor, Admitted, AgentId, ApprovalRefusal, CursorPosition, EarliestExecutions, EvmAddress,
    Held, IdempotencyKey, IntentEvent, IntentId, IntentStatus, LeaseId, Operator, PolicyViolation,
    RateLimit, RecipientRefused, SpendPolicyRecord, TransferIntentRecord, TransferTerms,
    TransitionRefused, WalletId, WalletRecord, U256,
};
use time::OffsetDateTime;

use crate::{KeyedRefusal, ListingVersion, SignedTransfer, StoreError, UsageVersion};

#[derive(Debug, Clone, PartialEq)]
pub struct NewTransferIntent {
    pub id: IntentId,
    pub agent_id: AgentId,
    pub terms: TransferTerms,
    pub token_address: Option<EvmAddress>,
    pub idempotency_key: Option<IdempotencyKey>,
    /// The agent key that asks for it.
    pub key_id: Option<domain::keys::KeyId>,
    /// The offer an x402 payment pays, stored with it; `None` for a transfer.
    pub x402: Option<ChosenOffer>,
}

/// An x402 authorization signed for a confirmed intent, to record before it is handed out.
#[derive(Debug, Clone, PartialEq)]
pub struct SignedAuthorization {
    /// The offer it pays, as the request that had it signed chose it.
    pub offer: ChosenOffer,
    pub nonce: [u8; 32],
    pub window: AuthorizationWindow,
    /// The payment header's value.
    pub payment: String,
    /// The first block its use is searched in: the chain's head known before it was signed.
    pub watch_from_block: u64,
}

/// What signing an x402 payment from an agent's wallet needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningBasis {
    pub wallet_address: EvmAddress,
    pub sealed_key: Vec<u8>,
    /// The latest block of the chain the settlement watch saw, if it saw one: an authorization
    /// signed after that cannot be used in an earlier block.
    pub known_head: Option<u64>,
}

/// The authorization an intent holds, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedAuthorization {
    pub intent: TransferIntentRecord,
    /// The payment header's value.
    pub payment: String,
}

/// x402 payments' authorizations: what signing one needs, and its record.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait X402Authorizations: Send + Sync {
    /// The agent's wallet's address and sealed key, and the head of chain `chain_id` the
    /// settlement watch saw last; `None` when the agent has no wallet.
    async fn signing_basis(
        &self,
        agent: AgentId,
        chain_id: u64,
    ) -> Result<Option<SigningBasis>, StoreError>;

    /// Records `signed` and moves the intent from `confirmed` to `authorized`, in one
    /// transaction under the intent's lock. When the intent is authorized already (a request
    /// under the same key recorded its own first), that authorization is answered and `signed`,
    /// never handed out, is dropped; another status is refused.
    async fn record_authorization(
        &self,
        id: IntentId,
        signed: &SignedAuthorization,
    ) -> Result<RecordedAuthorization, TransitionError>;

    /// The authorization recorded for intent `id`, once it was signed.
    async fn recorded_authorization(
        &self,
        id: IntentId,
    ) -> Result<Option<RecordedAuthorization>, StoreError>;

    /// Keeps the settlement the paid server answered (its decoded `PAYMENT-RESPONSE`) with the
    /// payment; the intent, shown with it.
    async fn record_payment_response(
        &self,
        id: IntentId,
        settlement: &SettlementResponse,
    ) -> Result<TransferIntentRecord, StoreError>;
}

/// How the watch of an authorization ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthorizationSettled {
    /// The token reports it used in `tx_hash`: the intent is executed.
    Used { tx_hash: String, block_number: u64 },
    /// Its `validBefore` passed unused: the intent expires and its amount leaves the windows.
    Expired,
}

/// Authorized x402 intents, watched until the token reports them used or they expire; used by the
/// `AuthorizationWatcher`.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait AuthorizationWatch: Send + Sync {
    /// Notes `head` as the latest block of chain `chain_id` seen (a later one is kept): what
    /// authorizations signed from now on are searched from.
    async fn record_head(&self, chain_id: u64, head: BlockHead) -> Result<(), StoreError>;

    /// Up to `limit` authorized intents no other watcher holds, lowest first unsearched block
    /// first, held from the others for `look_for` (until put back or settled, or a crashed look
    /// lapses).
    async fn watched_authorizations(
        &self,
        limit: usize,
        look_for: Duration,
    ) -> Result<Vec<WatchedAuthorization>, StoreError>;

    /// Gives back `intents` unsettled, due again at once; with `searched_through`, each was
    /// searched through that block (an intent's first unsearched block only moves forward).
    async fn put_back(
        &self,
        intents: &[IntentId],
        searched_through: Option<u64>,
    ) -> Result<(), StoreError>;

    /// Ends the authorized intent as `settled` says, through the domain state machine.
    async fn settle_authorization(
        &self,
        intent: IntentId,
        settled: AuthorizationSettled,
    ) -> Result<TransferIntentRecord, TransitionError>;
}

/// How long an idempotency key lasts, and how often an agent may send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdmissionLimits {
    /// How long an idempotency key answers retries; after it, the key may be used afresh.
    pub idempotency_key: Duration,
    /// The agent's send rate, shared by every server instance. Every send that reaches admission
    /// takes a token, whatever its outcome, but one whose idempotency key is in flight.
    pub rate: RateLimit,
}

/// What the admission check sees, inside the wallet's critical section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdmissionContext<'a> {
    pub wallet_address: &'a EvmAddress,
    pub policy: &'a SpendPolicyRecord,
    /// What the wallet's intents hold in each spend window: those whose money may still move,
    /// and those whose money moved within it; the recipient's daily window is counted only where
    /// the policy caps it (zero otherwise). Saturates rather than overflows.
    pub held: Held,
}

/// Why the check refused a send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AdmissionRefusal {
    #[error(transparent)]
    Recipient(RecipientRefused),
    #[error(transparent)]
    Policy(PolicyViolation),
}

/// The rules a send must pass, decided inside the wallet's critical section, and how the intent
/// goes on when it passes them.
pub type AdmissionCheck =
    dyn Fn(&AdmissionContext<'_>) -> Result<Admitted, AdmissionRefusal> + Send + Sync;

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
    Refused(AdmissionRefusal),
    /// The key is in flight or was used for another transfer, or the agent's send rate is spent.
    #[error(transparent)]
    Keyed(#[from] KeyedRefusal<IntentId>),
    /// The payment the policy confirmed could not be signed: nothing was admitted, and the
    /// signer holds why.
    #[error(transparent)]
    Signing(#[from] SigningFailed),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A signer's refusal inside the admission; the signer itself keeps the reason for its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the payment could not be signed")]
pub struct SigningFailed;

/// Signs an x402 payment the policy confirms at its admission, inside the wallet's critical
/// section, so its authorization is recorded in the transaction that creates it: one commit, as
/// for a send, and nothing signed that is not recorded.
#[async_trait]
pub trait AdmissionSigner: Send + Sync {
    /// The chain whose head the watch saw last is part of the basis.
    fn chain_id(&self) -> u64;
    async fn sign(&self, basis: SigningBasis) -> Result<SignedAuthorization, SigningFailed>;
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransitionError {
    #[error("intent {0} not found")]
    NotFound(IntentId),
    #[error(transparent)]
    Refused(TransitionRefused),
    /// An approval judged and refused under the locks.
    #[error(transparent)]
    Judged(ApprovalRefusal),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Filters of the operator's intent listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IntentFilter {
    pub agent: Option<AgentId>,
    /// Only intents paying this recipient.
    pub recipient: Option<EvmAddress>,
    pub status: Option<IntentStatus>,
    /// Only intents past their decision: any status but `pending_confirmation`.
    pub decided: bool,
    /// Only intents executed at or after this time, and before `executed_before`: with either,
    /// only executed intents, ordered by their execution.
    pub executed_from: Option<OffsetDateTime>,
    pub executed_before: Option<OffsetDateTime>,
    /// Oldest first instead of newest first.
    pub oldest_first: bool,
    /// At most this many.
    pub limit: Option<usize>,
}

/// The wallet's critical section for new intents.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait IntentAdmission: Send + Sync {
    /// In one critical section per wallet (across all server instances): takes a token of the
    /// agent's send rate, then replays an earlier intent with the same live idempotency key, or
    /// sums what the wallet's intents hold in the spend window, runs `check`, and stores the
    /// intent if it passes. A second request with a key that is being admitted right now is
    /// refused at once.
    ///
    /// An x402 payment the policy confirms is signed by `signer`, when given, under the same
    /// locks, and stored `authorized` with its authorization.
    async fn admit<'a>(
        &self,
        intent: NewTransferIntent,
        limits: AdmissionLimits,
        check: &AdmissionCheck,
        signer: Option<&'a dyn AdmissionSigner>,
    ) -> Result<Admission, AdmissionError>;
}

/// An intent after an operator's approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    pub intent: TransferIntentRecord,
    /// False when this operator had approved it before.
    pub counted: bool,
    /// What the spend policy in force said of the intent when it was approved: a violation
    /// here means the approval was forced past it.
    pub verdict: Result<(), PolicyViolation>,
}

/// One approval an intent received, and whether it counts toward its quorum now
/// (`domain::approval_counts`: a named operator's no longer does once they are disabled).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntentApproval {
    pub approver: Operator,
    pub approved_at: OffsetDateTime,
    pub counts: bool,
}

/// What an approval is judged against, under the locks of the intent and its wallet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalContext<'a> {
    /// The intent as it stands under its lock.
    pub intent: &'a TransferIntentRecord,
    pub agent_active: bool,
    /// The policy in force; `None` where the wallet has none stored.
    pub policy: Option<&'a SpendPolicyRecord>,
    /// What the wallet's intents hold in each window, the intent's recipient's day included.
    pub held: Held,
    /// What the wallet's intents confirmed and not yet executed will take from its balance.
    pub committed: U256,
}

/// The rules an approval must pass, decided under the locks of the intent and its wallet: what
/// the policy says of the intent (`Err` inside when an approval is forced past it), or why the
/// approval is refused.
pub type ApprovalCheck = dyn Fn(&ApprovalContext<'_>) -> Result<Result<(), PolicyViolation>, ApprovalRefusal>
    + Send
    + Sync;

/// A recorded transaction of an intent and how its broadcasts went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRecord {
    pub transfer: SignedTransfer,
    pub broadcasts: u32,
    pub last_error: Option<String>,
}

/// A wallet, its policy and its windows as of one moment, with the version they show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageReading {
    pub wallet: WalletRecord,
    pub held: Held,
    pub earliest: EarliestExecutions,
    pub version: UsageVersion,
}

/// Intents as they are read, with transactions and approvals; used by the wallet and operators.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait IntentRecords: Send + Sync {
    /// One agent's intents, newest first, strictly after `after`.
    async fn page(
        &self,
        agent: AgentId,
        after: Option<CursorPosition>,
        limit: usize,
    ) -> Result<Vec<TransferIntentRecord>, StoreError>;

    /// Where the agent's intents stand: changes with every intent made, moved or removed.
    async fn listing_version(&self, agent: AgentId) -> Result<ListingVersion, StoreError>;

    async fn find(&self, id: IntentId) -> Result<Option<TransferIntentRecord>, StoreError>;

    /// Every intent matching `filter`, newest first unless it asks for the oldest first.
    async fn list(&self, filter: IntentFilter) -> Result<Vec<TransferIntentRecord>, StoreError>;

    /// The transactions recorded for the intent, newest first.
    async fn attempts(&self, id: IntentId) -> Result<Vec<AttemptRecord>, StoreError>;

    /// The approvals the intent received, oldest first, each with whether it counts now.
    async fn approvals(&self, id: IntentId) -> Result<Vec<IntentApproval>, StoreError>;
}

/// What each spend window of a wallet holds, and whom it paid; used by the wallet and operators.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait WalletUsage: Send + Sync {
    /// The agent's wallet with its stored policy, and what the wallet's intents hold in each
    /// spend window now (as admission counts them), in `recipient`'s daily window too when one
    /// is given: one reading, so the policy and the amounts are of one moment. None without a
    /// wallet.
    async fn wallet_and_held(
        &self,
        agent: AgentId,
        recipient: Option<EvmAddress>,
    ) -> Result<Option<(WalletRecord, Held)>, StoreError>;

    /// The agent's wallet with its stored policy and what its windows hold now, as
    /// `wallet_and_held` reads them, with the earliest execution each window counts and the
    /// version all of it shows: one reading. None without a wallet.
    async fn usage(&self, agent: AgentId) -> Result<Option<UsageReading>, StoreError>;

    /// Where the usage of the agent's wallet `wallet` stands, and the database's clock: one small
    /// reading, for a caller that keeps an earlier `usage`.
    async fn usage_version(
        &self,
        agent: AgentId,
        wallet: WalletId,
    ) -> Result<(UsageVersion, OffsetDateTime), StoreError>;

    /// Which of `pairs` (a wallet, a recipient) the wallet has paid: an executed intent of it to
    /// that recipient.
    async fn paid_recipients(
        &self,
        pairs: Vec<(WalletId, EvmAddress)>,
    ) -> Result<Vec<(WalletId, EvmAddress)>, StoreError>;
}

/// The decisions people take on intents (approvals, rejections); used by `IntentDecisions`.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait IntentTransitions: Send + Sync {
    /// Records `approver`'s approval of the pending intent under its row lock; once distinct
    /// operators' approvals reach the approvals the intent requires, it is confirmed
    /// (`confirmed_by` operator). What it requires is read under that lock: every change of the
    /// policy sets it on the wallet's pending intents under the same lock, so a change made
    /// while the approval was on its way is the one that counts. An operator's second approval
    /// is not counted again, and a named operator's approval stops counting once they are disabled
    /// (`IntentApproval::counts`). Before anything is recorded, `check` judges the approval under the
    /// locks of the wallet (and its policy) and of the intent, taken in that order as every
    /// writer of both takes them. The approval is audited as `approver`'s in the same
    /// transaction.
    async fn approve(
        &self,
        id: IntentId,
        approver: Actor,
        check: &ApprovalCheck,
    ) -> Result<Approval, TransitionError>;

    /// Moves the intent by `event` under its row lock, through the domain state machine, as
    /// `decided_by` decided; `reason` is kept as the failure reason of a reject or fail. An
    /// approval or a rejection is audited as `decided_by`'s in the same transaction.
    async fn transition(
        &self,
        id: IntentId,
        event: IntentEvent,
        reason: Option<String>,
        decided_by: Actor,
    ) -> Result<TransferIntentRecord, TransitionError>;
}

/// A confirmed intent leased to one executor, with what signing it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmissionClaim {
    pub intent: TransferIntentRecord,
    /// Proof of the lease, presented with every step that follows.
    pub lease: LeaseId,
    pub wallet_address: EvmAddress,
    pub sealed_key: Vec<u8>,
    /// Whether the intent's agent is still active.
    pub agent_active: bool,
    /// The nonce an earlier claim assigned to the intent, if one did.
    pub nonce: Option<u64>,
}

/// A submitted intent due for a look, with every transaction recorded for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmittedIntent {
    pub intent: TransferIntentRecord,
    pub nonce: u64,
    pub wallet_address: EvmAddress,
    pub sealed_key: Vec<u8>,
    /// Newest first; never empty.
    pub attempts: Vec<SignedTransfer>,
    /// How long ago the newest transaction was recorded.
    pub newest_attempt_age: Duration,
    /// How many looks found no receipt so far.
    pub checks: u32,
    /// For how long its nonce has been seen used without a receipt of its own, if it has.
    pub nonce_used_for: Option<Duration>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubmissionError {
    /// The lease expired and another executor may hold the intent now.
    #[error("lease on intent {0} lost")]
    LeaseLost(IntentId),
    /// A replacement must use the nonce of the intent it replaces.
    #[error("intent {intent} owns nonce {owned}, not {offered}")]
    WrongNonce {
        intent: IntentId,
        owned: u64,
        offered: u64,
    },
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
    /// The transaction `tx_hash` was mined and succeeded, in block `block_number` where known
    /// (an operator who resolves an intent by its hash may not say).
    Executed {
        tx_hash: String,
        block_number: Option<u64>,
    },
    /// It did not and will not move money; the reason is kept on the intent.
    Failed(String),
}

/// The topic published on commit when an intent enters `confirmed` (migration 000032): it wakes
/// the executor at once.
pub const CONFIRMED_INTENTS_TOPIC: &str = "intents-confirmed";

/// Confirmed intents to sign: leases, nonces, transactions recorded; used by the `Executor`.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait SubmissionQueue: Send + Sync {
    /// Leases the oldest confirmed intent not leased to anyone else to the caller as `lease`, for
    /// `lease_for`. The caller names the lease so that a claim whose answer was lost can still
    /// be given back.
    async fn claim_confirmed(
        &self,
        lease: LeaseId,
        lease_for: Duration,
    ) -> Result<Option<SubmissionClaim>, StoreError>;

    /// The claimed intent's nonce: the one assigned before, or the wallet's next one (at least
    /// `chain_next`, the chain's own count), assigned under the wallet's lock so that no two
    /// intents of a wallet ever share a nonce, whichever instance executes them.
    async fn assign_nonce(
        &self,
        intent: IntentId,
        lease: LeaseId,
        chain_next: u64,
    ) -> Result<u64, SubmissionError>;

    /// Gives back at once the intent `lease` holds, if any, e.g. when the chain could not be
    /// reached; a lease that lapsed or never took hold changes nothing.
    async fn release(&self, lease: LeaseId) -> Result<(), StoreError>;

    /// Records a signed transaction of the intent before it is broadcast. With `lease`, the
    /// first one: the intent moves to submitted. Without, a replacement for a submitted intent,
    /// with the same nonce. The intent is due for a look after `first_look`.
    async fn record_attempt(
        &self,
        intent: IntentId,
        lease: Option<LeaseId>,
        attempt: &SignedTransfer,
        first_look: Duration,
    ) -> Result<TransferIntentRecord, SubmissionError>;

    /// Notes a broadcast of `tx_hash` and, when it failed, what the node said.
    async fn record_broadcast(
        &self,
        tx_hash: &str,
        error: Option<String>,
    ) -> Result<(), StoreError>;

    /// How long the oldest confirmed intent has waited since its confirmation (on the database
    /// clock); `None` when none waits.
    async fn oldest_confirmed_wait(&self) -> Result<Option<Duration>, StoreError>;
}

/// Submitted intents to follow and settle; used by the `Executor` and `ChainResolution`.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait SettlementQueue: Send + Sync {
    /// Up to `limit` submitted intents whose next look is due, held back from other executors for
    /// `look_for` (until rescheduled or settled, or a crashed look lapses). Of each wallet only
    /// those among its `per_wallet` lowest nonces still submitted come, since no later one can be
    /// mined before them; wallet by wallet, the one with the most overdue intent first, each
    /// wallet's in nonce order.
    async fn due_submitted(
        &self,
        limit: usize,
        per_wallet: usize,
        look_for: Duration,
    ) -> Result<Vec<SubmittedIntent>, StoreError>;

    /// Puts the next look at the intent `after` from now; `nonce_used` notes (once) that its
    /// nonce was seen used without a receipt of its own.
    async fn reschedule(
        &self,
        intent: IntentId,
        after: Duration,
        nonce_used: bool,
    ) -> Result<(), StoreError>;

    /// Ends the intent as `settlement` says, through the domain state machine; `decided_by` is
    /// the operator who settled it, `None` when the executor did. An intent that failed before
    /// anything was sent for it gives its nonce back when it is the wallet's last.
    async fn settle(
        &self,
        intent: IntentId,
        settlement: Settlement,
        decided_by: Option<Operator>,
    ) -> Result<TransferIntentRecord, TransitionError>;
}

/// Expiry of intents nobody confirmed in time.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait IntentSweeper: Send + Sync {
    /// Expires up to `limit` intents still pending after `pending_for`, and x402 payments
    /// confirmed that long ago and never signed, through the domain state machine; rows another
    /// caller holds are skipped, not waited for. Returns those expired.
    async fn expire_pending(
        &self,
        pending_for: Duration,
        limit: usize,
    ) -> Result<Vec<TransferIntentRecord>, StoreError>;
}
