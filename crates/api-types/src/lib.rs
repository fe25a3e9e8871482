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
mod operator;
mod sms;
mod wallet;

pub use agents::{AgentResponse, EmailInboxOut, PhoneNumberOut};
pub use commands::{EmailReply, EmailSend, IDEMPOTENCY_KEY_HEADER};
pub use email::{
    AttachmentOut, EmailInboxPage, EmailMessageOut, EmailReplyRequest, EmailSendRequest,
    EmailSendResponse, ParsedDataOut,
};
pub use enums::{Channel, Direction, EmailStatus, IntentStatus, SendStatus, WalletStatus};
pub use events::{
    event_type_names, EmailFailedData, EmailReceivedData, EmailSentData, EventData, EventOut,
    EventPage, EventTypeName, ServerSentEvent, SmsReceivedData, WebhookAttemptOut,
    WebhookAttemptPage, WebhookCreateRequest, WebhookOut, WebhookReplayRequest,
    WebhookReplayResponse, WebhookUpdateRequest,
};
pub use field_errors::{read_fields, FieldError, FieldErrors, FieldPath, RequestPart};
pub use operator::{
    OperatorAttemptView, OperatorConfirmationView, OperatorIntentDetail, OperatorIntentView,
    OperatorIssuedKey,
};
pub use sms::{
    CodeOut, CodesWaitRequest, PhoneNumberResponse, SmsMessageOut, SmsRawPayload,
    VerificationCodeResponse, WaitForCodeRequest,
};
/// Where the providers post inbound messages: the route the server serves, and the URL the
/// service gives the provider (a number bought at Twilio is pointed there).
pub const TWILIO_SMS_WEBHOOK_PATH: &str = "/webhooks/sms/twilio";
pub const INBOUND_EMAIL_WEBHOOK_PATH: &str = "/webhooks/email/inbound";

pub use wallet::{
    SpendPolicyOut, SpendPolicyResponse, TransferIntentOut, TransferIntentPage,
    WalletAddressResponse, WalletAssetBalance, WalletBalanceResponse, WalletOut, WalletSendRequest,
};
