//! Pure business rules of agent-runtime. Nothing here performs IO or needs an async runtime:
//! every type can only be built valid ("parse, don't validate").

pub mod agent;
pub mod amount;
pub mod asset;
pub mod client_address;
pub mod commands;
pub mod console;
pub mod contact;
pub mod cursor;
pub mod events;
pub mod evm_address;
pub mod execution;
#[cfg(any(test, feature = "test-fixtures"))]
pub mod fixtures;
pub mod ids;
pub mod intent;
pub mod json_bounds;
pub mod keys;
pub mod limits;
pub mod mail;
pub mod operator;
pub mod policy;
pub mod receipts;
pub mod retry;
pub mod sms;
pub mod text;
pub mod transfer;
pub mod wallet;
pub mod webhooks;
pub mod x402;

/// The mail modules, at the paths they had before they moved under `mail`.
pub use mail::{attachments, email, inbound, search, sender_rules};

/// 256-bit unsigned integers, the type of every on-chain amount.
pub use alloy_primitives::U256;

pub use agent::{
    AgentKey, AgentKeyError, AgentKeyHash, AgentProfile, AgentRecord, Label, LabelError,
    MAX_LABEL_CHARS,
};
pub use amount::{format_units, AtomicAmount, AtomicAmountError};
pub use asset::{Asset, AssetBalance, Chain, PolicyAsset};
pub use attachments::{
    content_digest, content_disposition, download_content_type, download_filename,
    outbound_attachments_fit, piece_count, AttachmentId, AttachmentMeta, InvalidAttachmentId,
    NewAttachment, NewAttachmentError, ATTACHMENT_PIECE_BYTES, DEFAULT_ATTACHMENT_MAX_BYTES,
    MAX_OUTBOUND_ATTACHMENTS, MAX_OUTBOUND_ATTACHMENT_BYTES, MAX_OUTBOUND_FILENAME_CHARS,
    MAX_REQUEST_BODY_BYTES,
};
pub use client_address::{InvalidProxyNetwork, ProxyNetwork, TrustedProxies, TrustedProxiesError};
pub use console::{
    approval_counts, named_decider, Actor, AuditAction, AuditRecord, AuditTarget, ChallengeRefused,
    ChallengeSeal, NamedDecisionRefused, OneTimeSecret, OperatorAccount, OperatorRole,
    OperatorToken, SecretHash, SignInChallenge, UnknownAuditAction, UnknownRole, CEREMONY_TTL,
    ENROLLMENT_TTL, SESSION_IDLE_TIMEOUT,
};
pub use contact::{
    EmailAddress, EmailAddressError, EmailInboxRecord, PhoneNumber, PhoneNumberError,
    PhoneNumberRecord, MAX_ADDRESS_CHARS,
};
pub use cursor::{CursorCodec, CursorPosition, InvalidCursor};
pub use email::{
    check_custom_header, check_custom_headers_size, forward_subject, forward_text,
    reply_references, reply_subject, request_fingerprint, DeliveryRetry, Direction,
    EmailMessageRecord, EmailStatus, HeaderRefused, HeadersTooLarge, SenderAuthentication,
    ThreadRead, ThreadSummary, MAX_BODY_TEXT_BYTES, MAX_HEADER_NAME_CHARS, MAX_RECIPIENTS,
    SENSITIVE_HEADERS,
};
pub use events::{
    EventId, EventPayload, EventRecord, EventType, EventTypes, LogBounds, UnknownEventType,
};
pub use evm_address::{EvmAddress, EvmAddressError};
pub use execution::{
    nonce_used, replacement_fees, without_receipt, FeeQuote, RetrySchedule, WithoutReceipt,
};
pub use ids::{
    AgentId, EmailInboxId, EmailMessageId, IntentId, LeaseId, OperatorId, PhoneNumberId,
    SmsMessageId, SpendPolicyId, SponsorId, WalletId, WebhookDeliveryId, WebhookEndpointId,
};
pub use intent::{
    Approvals, ConfirmedBy, IntentEvent, IntentKind, IntentStatus, TransferIntentRecord,
    TransferTerms, TransitionRefused, X402Payment, X402Resource,
};
pub use json_bounds::{json_items_within, MAX_JSON_ITEMS};
pub use limits::{RateDecision, RateLimit};
pub use operator::{
    Operator, OperatorName, OperatorNameError, StoredOperatorError, MAX_OPERATOR_NAME_CHARS,
};
pub use policy::{
    evaluate_transfer, evaluate_x402, judge_approval, window_usage, Admitted, Allowlist,
    AllowlistChange, ApprovalCount, ApprovalCountOutOfRange, ApprovalRefusal, ApprovalStanding,
    AutoConfirm, EarliestExecutions, Held, PolicyChange, PolicyChangeRefused, PolicyViolation,
    Quorum, QuorumOutOfRange, RecipientLimit, RecipientLimits, RecipientLimitsChange, Reservation,
    SpendLimits, SpendRules, SpendWindow, TooManyRecipientLimits, WindowUsage,
    MAX_APPROVALS_REQUIRED, MAX_RECIPIENT_LIMITS,
};
pub use retry::{RetryOffsets, RetryOffsetsError, RetryRule};
pub use search::{SearchQuery, SearchQueryError, MAX_RANKED_MATCHES, MAX_SEARCH_RESULTS};
pub use sender_rules::{
    InvalidSenderPattern, SenderPattern, SenderRules, SenderRulesError, MAX_SENDER_RULES,
};
pub use sms::{SmsMessageRecord, SmsSource, MAX_REQUEST_ID_CHARS, MAX_WAIT_SECS, SYNC_WINDOW};
pub use text::{check_no_nul, NulCharacter};
pub use transfer::{
    check_recipient, check_transfer_amount, IdempotencyKey, IdempotencyKeyError, RecipientRefused,
    TransferTooLarge, MAX_IDEMPOTENCY_KEY_CHARS, MAX_TRANSFER_ATOMIC,
};
pub use wallet::{Custody, SpendPolicyRecord, WalletBalances, WalletRecord, WalletStatus};
pub use webhooks::{
    is_globally_routable, target_allowed, AttemptFailure, Targets, WebhookAttemptRecord,
    WebhookEndpointRecord, WebhookUrl, WebhookUrlError, DEACTIVATED_AGENT_REASON,
    DISABLE_FAILING_AFTER, MAX_WEBHOOK_DESCRIPTION_CHARS, MAX_WEBHOOK_ENDPOINTS,
    MAX_WEBHOOK_URL_CHARS, OLD_SECRET_SIGNS_FOR, REPLAY_RATE, REVOKED_KEY_REASON,
    ROTATED_KEY_REASON,
};
