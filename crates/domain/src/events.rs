//! The events an agent hears of (decision 0058): what each is, in the order the agent's changes
//! committed, and the thin facts it carries. The log itself is written by the database in the
//! transaction of each change.

use std::fmt;
use std::str::FromStr;

use time::OffsetDateTime;
use uuid::Uuid;

use crate::{EmailMessageId, IntentStatus, SmsMessageId, TransferIntentRecord};

/// An event's id: the same wherever the event goes (feed, stream, every webhook attempt).
/// Printed `evt_` and the 32 hex digits of its UUID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId(pub Uuid);

const EVENT_ID_PREFIX: &str = "evt_";

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{EVENT_ID_PREFIX}{}", self.0.simple())
    }
}

impl FromStr for EventId {
    type Err = uuid::Error;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let hex = text.strip_prefix(EVENT_ID_PREFIX).unwrap_or(text);
        Uuid::try_parse(hex).map(Self)
    }
}

/// What happened, by the names of the events contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventType {
    EmailReceived,
    EmailSent,
    EmailFailed,
    SmsReceived,
    TransferIntentCreated,
    TransferIntentConfirmed,
    TransferIntentRejected,
    TransferIntentExpired,
    TransferIntentSubmitted,
    TransferIntentExecuted,
    TransferIntentFailed,
    /// An x402 payment's authorization was signed and handed out.
    TransferIntentAuthorized,
}

impl EventType {
    pub const ALL: [Self; 12] = [
        Self::EmailReceived,
        Self::EmailSent,
        Self::EmailFailed,
        Self::SmsReceived,
        Self::TransferIntentCreated,
        Self::TransferIntentConfirmed,
        Self::TransferIntentRejected,
        Self::TransferIntentExpired,
        Self::TransferIntentSubmitted,
        Self::TransferIntentExecuted,
        Self::TransferIntentFailed,
        Self::TransferIntentAuthorized,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::EmailReceived => "email.received",
            Self::EmailSent => "email.sent",
            Self::EmailFailed => "email.failed",
            Self::SmsReceived => "sms.received",
            Self::TransferIntentCreated => "transfer_intent.created",
            Self::TransferIntentConfirmed => "transfer_intent.confirmed",
            Self::TransferIntentRejected => "transfer_intent.rejected",
            Self::TransferIntentExpired => "transfer_intent.expired",
            Self::TransferIntentSubmitted => "transfer_intent.submitted",
            Self::TransferIntentExecuted => "transfer_intent.executed",
            Self::TransferIntentFailed => "transfer_intent.failed",
            Self::TransferIntentAuthorized => "transfer_intent.authorized",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == name)
    }

    /// The event an intent's move into `status` is.
    pub fn of_intent_status(status: IntentStatus) -> Self {
        match status {
            IntentStatus::PendingConfirmation => Self::TransferIntentCreated,
            IntentStatus::Confirmed => Self::TransferIntentConfirmed,
            IntentStatus::Authorized => Self::TransferIntentAuthorized,
            IntentStatus::Rejected => Self::TransferIntentRejected,
            IntentStatus::Expired => Self::TransferIntentExpired,
            IntentStatus::Submitted => Self::TransferIntentSubmitted,
            IntentStatus::Executed => Self::TransferIntentExecuted,
            IntentStatus::Failed => Self::TransferIntentFailed,
        }
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which types a reader or an endpoint wants; empty wants none, `all()` every one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventTypes(u16);

impl EventTypes {
    pub fn all() -> Self {
        Self::of(EventType::ALL)
    }

    pub fn of(types: impl IntoIterator<Item = EventType>) -> Self {
        Self(
            types
                .into_iter()
                .fold(0, |bits, kind| bits | Self::bit(kind)),
        )
    }

    fn bit(kind: EventType) -> u16 {
        1 << (kind as u16)
    }

    pub fn contains(self, kind: EventType) -> bool {
        self.0 & Self::bit(kind) != 0
    }

    pub fn is_all(self) -> bool {
        self == Self::all()
    }

    /// Whether it wants no type at all.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The types in the contract's order.
    pub fn iter(self) -> impl Iterator<Item = EventType> {
        EventType::ALL
            .into_iter()
            .filter(move |kind| self.contains(*kind))
    }

    /// Reads a comma-separated list of type names (blanks around names ignored, empty items
    /// skipped); the first unknown name is the error.
    pub fn parse_list(list: &str) -> Result<Self, UnknownEventType> {
        let mut types = Vec::new();
        for name in list
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
        {
            types.push(EventType::parse(name).ok_or_else(|| UnknownEventType(name.to_owned()))?);
        }
        Ok(Self::of(types))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown event type {0:?}")]
pub struct UnknownEventType(pub String);

/// How much of what an outside sender wrote an event carries: the database writes each event
/// within these (migration 000029), so no sender can make an event large. Every event is read by
/// every stream, cache and webhook of its agent; the full record stays behind its GET route.
pub mod thin {
    /// The characters of a mail's subject an `email.received` event keeps.
    pub const SUBJECT_CHARS: usize = 256;
    /// The characters of a sender's address an event keeps.
    pub const ADDRESS_CHARS: usize = 320;
    /// The verification codes an `email.received` event names, the most likely first.
    pub const CODES: usize = 10;
    /// The characters of a failed mail's reason an `email.failed` event keeps.
    pub const REASON_CHARS: usize = 512;
}

/// The facts an event carries: ids and the few fields an agent acts on, within [`thin`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventPayload {
    EmailReceived {
        message_id: EmailMessageId,
        thread_id: Uuid,
        from: Option<String>,
        subject: Option<String>,
        verification_codes: Vec<String>,
        /// How many attachments the mail has; their names and ids are on the message.
        attachment_count: u32,
    },
    EmailSent {
        message_id: EmailMessageId,
        provider_message_id: Option<String>,
    },
    EmailFailed {
        message_id: EmailMessageId,
        reason: Option<String>,
    },
    SmsReceived {
        message_id: SmsMessageId,
        from_number: String,
        to_number: String,
        code: Option<String>,
    },
    /// The intent as it was when it entered the state the event names.
    TransferIntent(Box<TransferIntentRecord>),
}

/// One event of an agent's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRecord {
    pub id: EventId,
    /// Per agent, strictly increasing in commit order, without gaps.
    pub seq: u64,
    pub event_type: EventType,
    /// When the change committed.
    pub timestamp: OffsetDateTime,
    pub payload: EventPayload,
    /// The agent key whose request caused it (made the intent or the mail it is of); `None` for
    /// what no key caused, and for events the agent reads, which show none.
    pub key_id: Option<crate::keys::KeyId>,
}

/// Where a reader's position stands against what is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogBounds {
    /// The last `seq` retention removed; 0 when none was.
    pub pruned_through: u64,
}

impl LogBounds {
    /// Whether a reader asking for what follows `after` missed events that are no longer kept:
    /// it is told to start again from the oldest kept one.
    pub fn must_reset(self, after: u64) -> bool {
        after < self.pruned_through
    }

    /// Where a reader asking for what follows `after` reads from.
    pub fn start_after(self, after: u64) -> u64 {
        after.max(self.pruned_through)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_reads_back_from_its_name() {
        for kind in EventType::ALL {
            assert_eq!(EventType::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(EventType::parse("email.bounced"), None);
    }

    #[test]
    fn lists_of_types_name_the_first_unknown_one() {
        let types = EventTypes::parse_list("sms.received, email.received,,").expect("known");
        assert_eq!(
            types.iter().collect::<Vec<_>>(),
            [EventType::EmailReceived, EventType::SmsReceived]
        );
        assert_eq!(
            EventTypes::parse_list("sms.received,nope,also"),
            Err(UnknownEventType("nope".into()))
        );
        assert!(EventTypes::all().is_all());
        assert!(!EventTypes::of([EventType::EmailSent]).is_all());
    }

    #[test]
    fn event_ids_print_with_their_prefix_and_read_back() {
        let id = EventId(Uuid::from_u128(0x0192_0000_0000_7000_8000_0000_0000_0001));
        let printed = id.to_string();
        assert_eq!(printed, "evt_01920000000070008000000000000001");
        assert_eq!(printed.parse::<EventId>(), Ok(id));
    }

    #[test]
    fn intents_entering_each_state_are_the_event_of_that_state() {
        assert_eq!(
            EventType::of_intent_status(IntentStatus::PendingConfirmation).as_str(),
            "transfer_intent.created"
        );
        assert_eq!(
            EventType::of_intent_status(IntentStatus::Executed).as_str(),
            "transfer_intent.executed"
        );
    }

    #[test]
    fn a_position_older_than_what_is_kept_resets_to_the_oldest_kept() {
        let bounds = LogBounds { pruned_through: 10 };
        assert!(bounds.must_reset(3));
        assert_eq!(bounds.start_after(3), 10);
        assert!(!bounds.must_reset(10));
        assert_eq!(bounds.start_after(12), 12);
        assert!(!LogBounds { pruned_through: 0 }.must_reset(0));
    }
}
