//! The traits the agent-runtime core needs from the outside world, and what they carry beyond
//! the domain's own records. Port signatures hold domain and std types only, never an adapter's.

pub mod agents;
pub mod chain;
pub mod console;
pub mod email;
pub mod errors;
pub mod events;
pub mod health;
pub mod intents;
pub mod keys;
pub mod listings;
pub mod notifications;
pub mod paid_resources;
pub mod provider_webhooks;
pub mod provisioning;
pub mod queue;
pub mod receipts;
pub mod sms;
pub mod wallet_keys;

pub use agents::{
    AgentStore, NewAgent, NewEmailInbox, NewPhoneNumber, NewWallet, PolicyUpdateError,
};
pub use chain::{
    BroadcastError, ChainClient, ChainError, ChainWriter, ReceiptStatus, SignedTransfer,
    TransferCall,
};
pub use console::{
    AuditLog, AuditPage, Ceremony, ConsoleSessions, FailedSignIn, NewOperator, NewSession,
    OperatorAccounts, OperatorStoreError, OperatorTokens, PasskeyError, Passkeys, SessionOpening,
    SessionRecord, StoredPasskey, TokenRecord, UsedChallenge,
};
pub use email::{
    AcceptError, Acceptance, AttachmentBytes, AttachmentContent, AttachmentObjects,
    AttachmentUploads, ClaimedEmail, Delivery, EmailCodes, EmailIdempotency, EmailOutbox,
    EmailSender, InboundEmail, InboundFormat, InboundMailStore, InboundMailWebhook,
    InboundParseError, InboundParser, Mailbox, NewInboundEmail, NewOutboundEmail, OutboundEmail,
    SendThrottle, SenderRuleStore, WebhookMail, QUEUED_MAIL_TOPIC,
};
pub use errors::{Answered, Conflict, KeyedRefusal, RequestKey, StoreError};
pub use events::{
    events_topic, EndpointRefusal, EndpointWithSecret, EventLog, NewWebhookEndpoint, PostAnswer,
    Replayed, WebhookAttemptOutcomes, WebhookDelivery, WebhookDeliveryLog, WebhookEndpointChanges,
    WebhookEndpointStore, WebhookPoster, EVERY_AGENTS_EVENTS_TOPIC, WEBHOOK_DELIVERIES_TOPIC,
};
pub use health::{DatabaseHealth, PoolUsage};
pub use intents::{
    Admission, AdmissionCheck, AdmissionContext, AdmissionError, AdmissionLimits, AdmissionRefusal,
    AdmissionSigner, Approval, ApprovalCheck, ApprovalContext, AttemptRecord, AuthorizationSettled,
    AuthorizationWatch, IntentAdmission, IntentApproval, IntentFilter, IntentRecords,
    IntentSweeper, IntentTransitions, NewTransferIntent, RecordedAuthorization, Settlement,
    SettlementQueue, SignedAuthorization, SigningBasis, SigningFailed, SubmissionClaim,
    SubmissionError, SubmissionQueue, SubmittedIntent, TransitionError, UsageReading, WalletUsage,
    X402Authorizations, CONFIRMED_INTENTS_TOPIC,
};
pub use keys::{KeyCreationError, KeyHolder, KeyMade, KeyStore, KeyedCreation, NewKey};
pub use listings::{Listing, ListingVersion, UsageVersion};
pub use notifications::{
    revoked_topic, BarrierPassed, InstanceBarrier, Notifications, Timer, Wakeup,
    AGENT_PROFILES_TOPIC,
};
pub use paid_resources::{FetchError, ResourceFetcher, ResourceRequest, ResourceResponse};
pub use provider_webhooks::{
    ProviderWebhookHeaders, ProviderWebhookRefusal, ProviderWebhookRequest,
};
pub use provisioning::{
    InboxProvisioner, KeyVault, NumberProvisioner, ProviderError, ProvisionedInbox,
    ProvisionedNumber, SealedWalletKey,
};
pub use queue::{Claimed, DeliveryError, JobOutcome, LeasedJob, LeasedQueue};
pub use receipts::{ReceiptKey, ReceiptSigner};
pub use sms::{
    InboundSmsWebhook, NewSms, NumberReleaser, ProviderSms, SmsFlow, SmsProvider, SmsStore,
};
pub use wallet_keys::{SealedKeyRecord, WalletKeyStore};

#[cfg(feature = "mock")]
pub use agents::MockAgentStore;
#[cfg(feature = "mock")]
pub use chain::{MockChainClient, MockChainWriter};
#[cfg(feature = "mock")]
pub use console::{
    MockAuditLog, MockConsoleSessions, MockOperatorAccounts, MockOperatorTokens, MockPasskeys,
};
#[cfg(feature = "mock")]
pub use email::{
    MockAttachmentContent, MockAttachmentObjects, MockAttachmentUploads, MockEmailCodes,
    MockEmailOutbox, MockEmailSender, MockInboundMailStore, MockInboundMailWebhook,
    MockInboundParser, MockMailbox, MockSenderRuleStore,
};
#[cfg(feature = "mock")]
pub use events::{
    MockEventLog, MockWebhookAttemptOutcomes, MockWebhookDeliveryLog, MockWebhookEndpointStore,
    MockWebhookPoster,
};
#[cfg(feature = "mock")]
pub use health::MockDatabaseHealth;
#[cfg(feature = "mock")]
pub use intents::{
    MockAuthorizationWatch, MockIntentAdmission, MockIntentRecords, MockIntentSweeper,
    MockIntentTransitions, MockSettlementQueue, MockSubmissionQueue, MockWalletUsage,
    MockX402Authorizations,
};
#[cfg(feature = "mock")]
pub use keys::MockKeyStore;
#[cfg(feature = "mock")]
pub use notifications::{MockInstanceBarrier, MockNotifications, MockTimer};
#[cfg(feature = "mock")]
pub use paid_resources::MockResourceFetcher;
#[cfg(feature = "mock")]
pub use provisioning::{MockInboxProvisioner, MockKeyVault, MockNumberProvisioner};
#[cfg(feature = "mock")]
pub use queue::MockLeasedQueue;
#[cfg(feature = "mock")]
pub use receipts::MockReceiptSigner;
#[cfg(feature = "mock")]
pub use sms::{MockInboundSmsWebhook, MockNumberReleaser, MockSmsProvider, MockSmsStore};
#[cfg(feature = "mock")]
pub use wallet_keys::MockWalletKeyStore;
