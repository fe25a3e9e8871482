//! The shapes agent-runtime speaks, field for field as the API contract names them: what the
//! HTTP API returns, what `agentctl` prints (so both describe an agent alike), and the bodies the
//! API accepts. Built from the domain's records only; serde and utoipa, no transport. The bodies
//! become the domain's commands here (`TryFrom`), or `FieldErrors` each way in renders its way.

mod agents;
mod commands;
mod email;
mod enums;
mod events;
mod field_errors;
mod keys;
mod operator;
mod sms;
mod wallet;

pub use agents::{AgentResponse, EmailInboxOut, PhoneNumberOut};
pub use commands::{
    attachments_too_large, idempotency_key_header, EmailForward, EmailReply, EmailSend,
    IDEMPOTENCY_KEY_HEADER,
};
pub use email::{
    search_query, AttachmentIn, AttachmentOut, EmailForwardRequest, EmailInboxPage,
    EmailMessageOut, EmailReplyRequest, EmailSendRequest, EmailSendResponse, ParsedDataOut,
    SenderRulesOut, SenderRulesRequest, ThreadDetailOut, ThreadOut, ThreadPageOut,
};
pub use enums::{
    Channel, ConfirmedBy, Direction, EmailStatus, IntentKind, IntentStatus, ScopeName, SendStatus,
    WalletStatus,
};
pub use events::{
    event_type_names, read_event_types, EmailFailedData, EmailReceivedData, EmailSentData,
    EventData, EventOut, EventPage, EventTypeName, ServerSentEvent, SmsReceivedData,
    WebhookAttemptOut, WebhookAttemptPage, WebhookCreateRequest, WebhookOut, WebhookReplayRequest,
    WebhookReplayResponse, WebhookUpdateRequest,
};
pub use field_errors::{read_fields, FieldError, FieldErrors, FieldPath, PageLimit, RequestPart};
pub use keys::{
    KeyCreateRequest, KeyCreatedOut, KeyCreation, KeyInUseOut, KeyListOut, KeyOut,
    MAX_KEY_LIFETIME_SECONDS,
};
pub use operator::{
    ConsoleInvitationOut, ConsoleOperatorOut, OperatorAttemptView, OperatorConfirmationView,
    OperatorEventView, OperatorIntentDetail, OperatorIntentView, OperatorIssuedKey,
};
pub use sms::{
    CodeOut, CodesWaitRequest, PhoneNumberResponse, SmsMessageOut, SmsRawPayload,
    VerificationCodeResponse, WaitForCodeRequest,
};
/// The credential of an `Authorization` header's value when its scheme is `Bearer` (in any
/// case): how every way in over HTTP carries the agent key.
pub fn bearer_credential(value: &str) -> Option<&str> {
    let (scheme, credential) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| credential.trim())
}

/// Where the providers post inbound messages: the route the server serves, and the URL the
/// service gives the provider (a number bought at Twilio is pointed there).
pub const TWILIO_SMS_WEBHOOK_PATH: &str = "/webhooks/sms/twilio";
pub const INBOUND_EMAIL_WEBHOOK_PATH: &str = "/webhooks/email/inbound";

pub use wallet::{
    approval_url, default_asset, default_chain, ApprovalsOut, FetchedResponseOut, PolicyVerdictOut,
    ReceiptKeyOut, ReceiptKeysOut, ReceiptOut, RecipientLimitOut, SpendPolicyOut,
    SpendPolicyResponse, SpendUsageOut, TransferIntentOut, TransferIntentPage,
    WalletAddressResponse, WalletAssetBalance, WalletBalanceResponse, WalletCheckRequest,
    WalletOut, WalletSendRequest, WindowUsageOut, X402AuthorizationStatus, X402AuthorizeRequest,
    X402AuthorizedOut, X402CheckRequest, X402FetchFailedOut, X402FetchOut, X402FetchPaymentOut,
    X402FetchRequest, X402FetchStatus, X402PaymentOut, X402PendingOut,
};
