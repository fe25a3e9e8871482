//! Use cases of agent-runtime. Each service owns the ports it needs as `Arc<dyn Port>`; each
//! operation returns its own error enum, which the transport maps to a status and a detail.

pub mod agents;
pub mod auth_cache;
pub mod authorization_watch;
mod barrier;
mod chain_id;
pub mod codes;
pub mod decisions;
pub mod errors;
pub mod events;
pub mod execution;
pub mod expiry;
mod in_flight;
pub mod key_rotation;
pub mod keys;
pub mod leased_queue;
pub mod long_lived;
pub mod mail;
pub mod object_storage;
pub mod operator;
pub mod outbox;
mod paging;
pub mod services;
pub mod sms;
mod waiting;
pub mod wallet;
pub mod webhooks;

pub use agents::{AgentService, AuthError, Principal};
pub use auth_cache::AuthCache;
pub use authorization_watch::{AuthorizationWatcher, WatchError, WatchRound, WatchSettings};
pub use codes::{
    ChannelsWait, CodeChannel, CodePorts, CodeService, CodeWait, FoundCode, WaitError,
};
/// The operator's principal, defined beside the records that keep it (`decided_by`).
pub use domain::{Operator, OperatorName};
pub use operator::{
    new_csrf_token, AccessError, AgentAdmin, AgentAdminPorts, AgentLookupError, BalanceCheck,
    CeremonyStart, ChainResolution, ChainResolutionPorts, ConfirmError, Confirmation,
    ConsoleAccess, ConsoleSession, ConsoleStores, CreateAgent, CreateAgentError, DecisionStores,
    DisableError, EndpointView, EventAdmin, Inspection, IntentDecisions, Invitation, InviteError,
    IssuedKey, OperatorServices, PolicyAdmin, PolicyError, ProofError, RecipientStanding,
    ResolveError, Review, RevokeTokenError, SignedIn, TokenError, FAILED_SIGN_IN_RATE,
    SAME_RECIPIENT_SHOWN,
};

pub use decisions::{Decision, DecisionPorts, DecisionWaitError, DecisionWaits};
pub use errors::NotProvisioned;
pub use events::{
    EventFollower, EventPage, EventPorts, EventService, FollowError, FollowItem, MAX_EVENT_PAGE,
};
pub use execution::{ExecutionError, Executor, ExecutorSettings, FollowOutcome, SubmitOutcome};
pub use expiry::IntentExpiry;
pub use key_rotation::{ResealError, ResealReport, WalletKeyRotation};
pub use keys::{KeyError, KeyService, KeyedRequest, MadeKey};
pub use leased_queue::{Deliver, HandOff, LeasedWorker, QueueSettings};
pub use long_lived::{LongLived, LongLivedCaps, LongLivedKind, LongLivedPlace, LongLivedUsage};
pub use mail::{
    AttachmentDownload, AttachmentError, ForwardMail, IngestError, IngestReport, MailIntakePorts,
    MailIntakeService, MailPage, MailServices, MailboxPorts, MailboxService, OutboundMailPorts,
    OutboundMailService, ReadMailError, ReplyMail, SendMail, SendMailError, SendRates,
    SenderRulesView, PREVIEW_CHARS, TRANSACTIONAL,
};
pub use object_storage::{AttachmentSweep, ObjectStorage};
pub use outbox::OutboxWorker;
pub use paging::Kept;
pub use services::Services;
pub use sms::{Delivered, SmsError, SmsHistory, SmsPorts, SmsService, SmsSync, SmsWebhookError};
pub use wallet::{
    BalanceError, FetchFailure, FetchOutcome, IntentLookupError, IntentPage, ListIntentsError,
    PolicyUsage, ReceiptError, SendError, SendLimits, SendRequest, SignedReceipt, TransferCheck,
    UsageStamp, WalletError, WalletService, WalletStores, X402Check, X402Error, X402Fetch,
    X402Outcome, X402Ports, X402Request, IDEMPOTENCY_KEY_TTL,
};
pub use webhooks::{AttemptPage, WebhookAttempt, WebhookError, WebhookService};

use domain::AgentKey;
use rand::RngCore;

/// A new agent key from the operating system's random source.
fn generate_agent_key() -> AgentKey {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    AgentKey::from_random_bytes(bytes)
}
