//! SMS messages of an agent's phone number, and the rules of waiting for a code.

use time::OffsetDateTime;

use crate::{AgentId, Direction, PhoneNumberId, SmsMessageId};

/// The longest a wait for a code may block, in seconds; also its default.
pub const MAX_WAIT_SECS: u32 = 300;

/// The longest `request_id` of a wait, in characters.
pub const MAX_REQUEST_ID_CHARS: usize = 128;

/// How many messages the provider sync brings in at most, newest first.
pub const SYNC_WINDOW: usize = 100;

/// How an SMS came to be stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmsSource {
    /// The provider's webhook delivered it.
    Webhook,
    /// A sync of the provider's recent messages found it.
    Sync,
    /// `agentctl sandbox sms` put it at the sandbox provider.
    Sandbox,
}

impl SmsSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Webhook => "webhook",
            Self::Sync => "sync",
            Self::Sandbox => "sandbox",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "webhook" => Some(Self::Webhook),
            "sync" => Some(Self::Sync),
            "sandbox" => Some(Self::Sandbox),
            _ => None,
        }
    }
}

/// A stored SMS of a phone number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmsMessageRecord {
    pub id: SmsMessageId,
    pub agent_id: AgentId,
    pub phone_number_id: PhoneNumberId,
    pub direction: Direction,
    pub provider: String,
    pub provider_message_id: String,
    pub source: SmsSource,
    pub from: String,
    pub to: String,
    pub body: String,
    /// The most likely verification code in the body.
    pub parsed_code: Option<String>,
    /// The service the message names itself as coming from.
    pub service_name: Option<String>,
    pub provider_received_at: Option<OffsetDateTime>,
    /// When a wait for a code returned it; `None` while it is unseen.
    pub seen_at: Option<OffsetDateTime>,
    pub created_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_round_trip() {
        for source in [SmsSource::Webhook, SmsSource::Sync, SmsSource::Sandbox] {
            assert_eq!(SmsSource::parse(source.as_str()), Some(source));
        }
        assert_eq!(SmsSource::parse("carrier pigeon"), None);
    }
}
