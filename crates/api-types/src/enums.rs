//! The closed sets of names the API speaks (statuses, directions, channels): each is published
//! as a schema enum, and written exactly as the domain names it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Which way a message went: `inbound` (to the agent) or `outbound` (from it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(
    inline,
    description = "Which way a message went: `inbound` (received by the agent) or `outbound` (sent by it)."
)]
pub enum Direction {
    Inbound,
    Outbound,
}

impl From<Direction> for domain::Direction {
    fn from(direction: Direction) -> Self {
        match direction {
            Direction::Inbound => Self::Inbound,
            Direction::Outbound => Self::Outbound,
        }
    }
}

impl From<domain::Direction> for Direction {
    fn from(direction: domain::Direction) -> Self {
        match direction {
            domain::Direction::Inbound => Self::Inbound,
            domain::Direction::Outbound => Self::Outbound,
        }
    }
}

/// Where a mail stands: `queued` (accepted, waiting for the provider), `sent` (the provider took
/// it), `failed` (the provider refused it), or `received` (inbound).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EmailStatus {
    Queued,
    Sent,
    Failed,
    Received,
}

impl From<domain::EmailStatus> for EmailStatus {
    fn from(status: domain::EmailStatus) -> Self {
        match status {
            domain::EmailStatus::Queued => Self::Queued,
            domain::EmailStatus::Sent => Self::Sent,
            domain::EmailStatus::Failed => Self::Failed,
            domain::EmailStatus::Received => Self::Received,
        }
    }
}

/// The outcome of a send or a reply: `sent`, the message was accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SendStatus {
    Sent,
}

/// Who confirmed a transfer intent: `operator` (the approvals it needed) or `policy` (the
/// auto-confirm tier, at its creation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConfirmedBy {
    Operator,
    Policy,
}

impl From<domain::ConfirmedBy> for ConfirmedBy {
    fn from(by: domain::ConfirmedBy) -> Self {
        match by {
            domain::ConfirmedBy::Operator => Self::Operator,
            domain::ConfirmedBy::Policy => Self::Policy,
        }
    }
}

/// What an intent moves money by: `transfer`, a transaction this service sends
/// (`/v1/wallet/send`), or `x402`, an authorization the payee settles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum IntentKind {
    Transfer,
    X402,
}

impl From<domain::IntentKind> for IntentKind {
    fn from(kind: domain::IntentKind) -> Self {
        match kind {
            domain::IntentKind::Transfer => Self::Transfer,
            domain::IntentKind::X402 => Self::X402,
        }
    }
}

/// Where a transfer intent stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum IntentStatus {
    PendingConfirmation,
    Confirmed,
    /// An x402 payment's authorization was signed and handed out.
    Authorized,
    Submitted,
    Executed,
    Failed,
    Rejected,
    Expired,
}

impl From<domain::IntentStatus> for IntentStatus {
    fn from(status: domain::IntentStatus) -> Self {
        match status {
            domain::IntentStatus::PendingConfirmation => Self::PendingConfirmation,
            domain::IntentStatus::Confirmed => Self::Confirmed,
            domain::IntentStatus::Authorized => Self::Authorized,
            domain::IntentStatus::Submitted => Self::Submitted,
            domain::IntentStatus::Executed => Self::Executed,
            domain::IntentStatus::Failed => Self::Failed,
            domain::IntentStatus::Rejected => Self::Rejected,
            domain::IntentStatus::Expired => Self::Expired,
        }
    }
}

/// Whether a wallet may be used: `active`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum WalletStatus {
    Active,
}

impl From<domain::WalletStatus> for WalletStatus {
    fn from(status: domain::WalletStatus) -> Self {
        match status {
            domain::WalletStatus::Active => Self::Active,
        }
    }
}

/// How a verification code came: `sms` or `email`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(
    inline,
    description = "Where a code may arrive: `sms` (the agent's number) or `email` (its inbox)."
)]
pub enum Channel {
    Sms,
    Email,
}

impl Channel {
    /// Its name, as the REST wait's `channels` lists it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sms => "sms",
            Self::Email => "email",
        }
    }
}

/// What a key allows (the keys contract); every key holds `agent:read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum ScopeName {
    #[serde(rename = "agent:read")]
    AgentRead,
    #[serde(rename = "email:read")]
    EmailRead,
    #[serde(rename = "email:send")]
    EmailSend,
    #[serde(rename = "sms:read")]
    SmsRead,
    #[serde(rename = "codes:read")]
    CodesRead,
    #[serde(rename = "wallet:read")]
    WalletRead,
    #[serde(rename = "wallet:pay")]
    WalletPay,
    #[serde(rename = "events:read")]
    EventsRead,
    #[serde(rename = "webhooks:manage")]
    WebhooksManage,
    #[serde(rename = "keys:manage")]
    KeysManage,
}
