//! Commands: what an agent asks a use case to do, every field already valid. Each way in (the
//! HTTP API today, MCP and the console next) builds them from its own input (`api_types` does it
//! for the request shapes the API accepts) and the use cases in `app` take them as they are.

use std::time::Duration;

use crate::x402::PaymentChallenge;
use crate::{
    AtomicAmount, EmailAddress, EventTypes, EvmAddress, IdempotencyKey, NewAttachment, WebhookUrl,
};

/// An x402 challenge to pay (`/v1/wallet/x402/authorize`), its fields already valid.
#[derive(Debug, Clone, PartialEq)]
pub struct X402Request {
    pub challenge: PaymentChallenge,
    /// The resource paid for, when the challenge names none.
    pub resource_url: Option<String>,
    /// The agent's own ceiling: a challenge asking more is refused before the policy is asked.
    pub max_amount: Option<AtomicAmount>,
    pub idempotency_key: IdempotencyKey,
}

/// An x402 challenge to judge by the spend policy as a payment would be, nothing reserved.
#[derive(Debug, Clone)]
pub struct X402Check {
    pub challenge: PaymentChallenge,
    /// The agent's own ceiling, as a payment's.
    pub max_amount: Option<AtomicAmount>,
}

/// A resource to fetch and pay for, every field already valid.
#[derive(Debug, Clone)]
pub struct X402Fetch {
    pub url: crate::WebhookUrl,
    pub method: crate::x402::FetchMethod,
    /// Names lower-cased, each allowed (`check_fetch_headers`).
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
    /// The agent's own ceiling: a challenge asking more is refused before the policy is asked.
    pub max_amount: AtomicAmount,
    pub idempotency_key: IdempotencyKey,
}

/// A new message as the agent wrote it, its fields already valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendMail {
    pub to: Vec<EmailAddress>,
    pub cc: Vec<EmailAddress>,
    pub bcc: Vec<EmailAddress>,
    pub subject: String,
    pub text: String,
    /// Custom headers, each already checked against the sensitive list.
    pub headers: Vec<(String, String)>,
    pub category: Option<String>,
    pub attachments: Vec<NewAttachment>,
    /// Given at all (even empty): the fields the service does not offer.
    pub reply_to_given: bool,
    pub html_given: bool,
    pub idempotency_key: Option<IdempotencyKey>,
}

/// A reply to a message of the inbox, its text already valid; the message is named apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyMail {
    pub text: String,
    pub attachments: Vec<NewAttachment>,
    pub idempotency_key: Option<IdempotencyKey>,
}

/// A forward of a message of the inbox, its fields already valid; the message is named apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardMail {
    pub to: Vec<EmailAddress>,
    pub cc: Vec<EmailAddress>,
    pub bcc: Vec<EmailAddress>,
    /// What the agent writes above the forwarded message; may be empty.
    pub text: String,
    /// Sent after the forwarded message's own.
    pub attachments: Vec<NewAttachment>,
    pub idempotency_key: Option<IdempotencyKey>,
}

/// A send as the agent asked for it; `asset` and `chain` are names still to be checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendRequest {
    pub to: EvmAddress,
    pub amount: AtomicAmount,
    pub asset: String,
    pub chain: String,
    pub idempotency_key: Option<IdempotencyKey>,
}

/// A wait for a code, as the agent asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeWait {
    /// Empty: any message.
    pub service_name: String,
    pub timeout: Duration,
    pub request_id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeChannel {
    Sms,
    Email,
}

impl CodeChannel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sms => "sms",
            Self::Email => "email",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "sms" => Some(Self::Sms),
            "email" => Some(Self::Email),
            _ => None,
        }
    }
}

/// A wait over channels: `None` means every channel the agent has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelsWait {
    pub wait: CodeWait,
    pub channels: Option<Vec<CodeChannel>>,
}

/// A new webhook endpoint as the agent asked for it. The URL is well formed; whether its target
/// is allowed is the service's to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateWebhook {
    pub url: WebhookUrl,
    /// `None`: every type.
    pub types: Option<EventTypes>,
    pub description: Option<String>,
}

/// A change of an endpoint; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateWebhook {
    pub url: Option<WebhookUrl>,
    /// `Some(None)`: every type.
    pub types: Option<Option<EventTypes>>,
    pub description: Option<Option<String>>,
    pub enabled: Option<bool>,
}
