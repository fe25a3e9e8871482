//! Email messages and the rules of sending them: recipient and size limits, the custom headers an
//! agent may not set, and how a reply is threaded onto the message it answers.

use std::fmt;
use std::time::Duration;

use sha2::{Digest, Sha256};
use time::OffsetDateTime;

use crate::{
    check_no_nul, AgentId, AttachmentMeta, EmailAddress, EmailInboxId, EmailMessageId,
    RetrySchedule,
};

/// At most this many recipients over `to`, `cc` and `bcc` together.
pub const MAX_RECIPIENTS: usize = 20;

/// The largest `body_text` accepted, in bytes of UTF-8 (256 KiB).
pub const MAX_BODY_TEXT_BYTES: usize = 256 * 1024;

/// Headers an agent may not set through `headers`, compared case-insensitively, with why: each is
/// written by the service or the provider, and letting a caller set it would forge the sender,
/// add recipients the limits never saw, break threading or the message's structure, or fake the
/// trace and signatures receivers judge the mail by. `ARC-` names are refused as a prefix.
pub const SENSITIVE_HEADERS: &[(&str, &str)] = &[
    ("from", "the sender is the agent's inbox"),
    ("sender", "the sender is the agent's inbox"),
    ("reply-to", "reply_to is unavailable"),
    ("return-path", "bounces go to the provider's address"),
    ("to", "recipients are given in to, cc and bcc"),
    ("cc", "recipients are given in to, cc and bcc"),
    ("bcc", "recipients are given in to, cc and bcc"),
    ("subject", "the subject is given in subject"),
    ("message-id", "the service names every message it sends"),
    ("in-reply-to", "threading is set by the reply route"),
    ("references", "threading is set by the reply route"),
    ("date", "the date is the time of sending"),
    (
        "mime-version",
        "the message's structure is built by the service",
    ),
    (
        "content-type",
        "the message's structure is built by the service",
    ),
    (
        "content-transfer-encoding",
        "the message's structure is built by the service",
    ),
    ("dkim-signature", "signatures are added by the provider"),
    ("received", "trace headers are added by mail servers"),
    (
        "authentication-results",
        "authentication results are added by receiving servers",
    ),
    (
        "received-spf",
        "authentication results are added by receiving servers",
    ),
    ("delivered-to", "trace headers are added by mail servers"),
    ("x-original-to", "trace headers are added by mail servers"),
    (
        "disposition-notification-to",
        "receipts would go to an address the limits never saw",
    ),
    (
        "return-receipt-to",
        "receipts would go to an address the limits never saw",
    ),
    ("errors-to", "bounces go to the provider's address"),
];

/// Prefixes of header names refused like the headers of `SENSITIVE_HEADERS`, with why.
const SENSITIVE_PREFIXES: &[(&str, &str)] = &[
    ("arc-", "signatures are added by the provider"),
    ("resent-", "resending is not something an agent's mail does"),
    (
        "content-",
        "the message's structure is built by the service",
    ),
];

/// The suffix of signature headers (`DKIM-Signature`, `X-Google-DKIM-Signature`, ...).
const SIGNATURE_SUFFIX: &str = "-signature";

/// At most this many custom headers on one message.
pub const MAX_CUSTOM_HEADERS: usize = 50;

/// At most this many bytes of custom header names and values together (16 KiB).
pub const MAX_CUSTOM_HEADER_BYTES: usize = 16 * 1024;

/// The longest custom header name (RFC 5322 keeps a header's line within 78 characters).
pub const MAX_HEADER_NAME_CHARS: usize = 76;

/// Why a custom header is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderRefused {
    #[error("header names must be 1 to 76 printable ASCII characters without ':' or spaces")]
    BadName,
    #[error("header {0:?} contains a line break (CR or LF)")]
    LineBreak(String),
    #[error("header {0:?} contains a control character (only the tab is allowed)")]
    ControlCharacter(String),
    #[error("header {0:?} contains the NUL character (U+0000)")]
    NulCharacter(String),
    #[error("header {name:?} may not be set: {reason}")]
    Sensitive { name: String, reason: &'static str },
}

/// Checks one custom header: a token name, no CR, LF, NUL or other control character but the
/// tab in its value, and not a sensitive header.
pub fn check_custom_header(name: &str, value: &str) -> Result<(), HeaderRefused> {
    if name.contains(['\r', '\n']) || value.contains(['\r', '\n']) {
        return Err(HeaderRefused::LineBreak(name.to_owned()));
    }
    if check_no_nul(value).is_err() {
        return Err(HeaderRefused::NulCharacter(name.to_owned()));
    }
    if value.chars().any(|c| c.is_control() && c != '\t') {
        return Err(HeaderRefused::ControlCharacter(name.to_owned()));
    }
    let token = !name.is_empty()
        && name.len() <= MAX_HEADER_NAME_CHARS
        && name.bytes().all(|b| b.is_ascii_graphic() && b != b':');
    if !token {
        return Err(HeaderRefused::BadName);
    }
    let lower = name.to_ascii_lowercase();
    let reason = SENSITIVE_HEADERS
        .iter()
        .find(|(sensitive, _)| *sensitive == lower)
        .or_else(|| {
            SENSITIVE_PREFIXES
                .iter()
                .find(|(prefix, _)| lower.starts_with(prefix))
        })
        .map(|(_, reason)| *reason)
        .or_else(|| {
            lower
                .ends_with(SIGNATURE_SUFFIX)
                .then_some("signatures are added by the provider")
        });
    match reason {
        Some(reason) => Err(HeaderRefused::Sensitive {
            name: name.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// Why a message's custom headers are too many or too large together, if they are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeadersTooLarge {
    #[error("at most {MAX_CUSTOM_HEADERS} custom headers are allowed")]
    TooMany,
    #[error("custom headers may hold at most {MAX_CUSTOM_HEADER_BYTES} bytes of names and values together")]
    TooManyBytes,
}

/// Checks the custom headers of one message together: their count and their bytes.
pub fn check_custom_headers_size<'a>(
    headers: impl ExactSizeIterator<Item = (&'a str, &'a str)>,
) -> Result<(), HeadersTooLarge> {
    if headers.len() > MAX_CUSTOM_HEADERS {
        return Err(HeadersTooLarge::TooMany);
    }
    let bytes: usize = headers.map(|(name, value)| name.len() + value.len()).sum();
    if bytes > MAX_CUSTOM_HEADER_BYTES {
        return Err(HeadersTooLarge::TooManyBytes);
    }
    Ok(())
}

/// The subject of a reply: `Re: ` before the original's, unless it already starts with a reply
/// prefix (`Re:`, `RE:`, `re :`...), so a long exchange does not grow `Re: Re: Re:`.
pub fn reply_subject(original: Option<&str>) -> String {
    prefixed_subject("Re", &["Re"], original)
}

/// The subject of a forward: `Fwd: ` before the original's, once (`Fw:`, as some clients
/// write it, counts as one), as for a reply.
pub fn forward_subject(original: Option<&str>) -> String {
    prefixed_subject("Fwd", &["Fwd", "Fw"], original)
}

/// `prefix: ` before the original subject unless it already starts with one of `known` (in any
/// case, spaces allowed before the colon). The original came from an outside sender: it is put on
/// one line, as a decoded CR or LF would end the header and start another.
fn prefixed_subject(prefix: &str, known: &[&str], original: Option<&str>) -> String {
    let single_line = single_line(original);
    let original = single_line.trim();
    let already = known.iter().any(|known| {
        original
            .get(..known.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(known))
            && original[known.len()..].trim_start().starts_with(':')
    });
    if already {
        original.to_owned()
    } else if original.is_empty() {
        format!("{prefix}:")
    } else {
        format!("{prefix}: {original}")
    }
}

/// The text of a forward: what the agent wrote, then the forwarded message under a separator
/// line, its sender, date, subject and recipients, then its text as it came.
pub fn forward_text(written: &str, original: &EmailMessageRecord) -> String {
    let mut text =
        String::with_capacity(written.len() + original.text.as_deref().map_or(0, str::len) + 256);
    if !written.is_empty() {
        text.push_str(written);
        text.push_str("\n\n");
    }
    text.push_str("---------- Forwarded message ---------\n");
    let date = original
        .received_at
        .or(original.sent_at)
        .unwrap_or(original.created_at);
    let date = date
        .format(&time::format_description::well_known::Rfc2822)
        .unwrap_or_default();
    let lines = [
        ("From", original.from.clone().unwrap_or_default()),
        ("Date", date),
        ("Subject", single_line(original.subject.as_deref())),
        ("To", original.to.join(", ")),
        ("Cc", original.cc.join(", ")),
    ];
    for (name, value) in lines {
        if !value.is_empty() {
            text.push_str(&format!("{name}: {value}\n"));
        }
    }
    text.push('\n');
    text.push_str(original.text.as_deref().unwrap_or_default());
    text
}

/// A header value of outside mail on one line: each run of control characters becomes a space.
fn single_line(value: Option<&str>) -> String {
    value
        .unwrap_or_default()
        .split(char::is_control)
        .filter(|piece| !piece.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `References` of a reply (RFC 5322 3.6.4): the original's references, else its
/// `In-Reply-To`, followed by the original's own Message-ID.
pub fn reply_references(
    original_references: &[String],
    original_in_reply_to: Option<&str>,
    original_message_id: Option<&str>,
) -> Vec<String> {
    let mut references: Vec<String> = if original_references.is_empty() {
        original_in_reply_to
            .map(str::to_owned)
            .into_iter()
            .collect()
    } else {
        original_references.to_vec()
    };
    if let Some(id) = original_message_id {
        if !references.iter().any(|known| known == id) {
            references.push(id.to_owned());
        }
    }
    references
}

/// SHA-256 of a request's fields, each length-prefixed so no two different requests share one:
/// what an idempotency key is bound to.
pub fn request_fingerprint<'a>(fields: impl IntoIterator<Item = &'a str>) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for field in fields {
        hasher.update((field.len() as u64).to_be_bytes());
        hasher.update(field.as_bytes());
    }
    hasher.finalize().into()
}

/// How a leased queue retries a job the far side could not take (a message the provider could
/// not take, a webhook its receiver did not answer): waits doubling on the schedule, until the
/// job has waited `give_up_after` since it was queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliveryRetry {
    pub schedule: RetrySchedule,
    pub give_up_after: Duration,
}

/// How far either way a retry's wait is spread, so jobs that failed together (a provider's
/// outage) do not all come back in the same instant.
pub(crate) const RETRY_JITTER: f64 = 0.1;

/// The longest `Retry-After` honoured: it comes from outside, and a job waits no longer than
/// this on its word.
pub(crate) const MAX_HONOURED_RETRY_AFTER: Duration = Duration::from_secs(3600);

impl DeliveryRetry {
    /// The wait before the next attempt after `attempts` failed ones, or `None` when the job is
    /// too old to try again. The schedule's wait is spread by `spread` (drawn by the caller from
    /// -1 to 1) over ±10 %, and is never shorter than the far side's `retry_after`, which is
    /// honoured up to `MAX_HONOURED_RETRY_AFTER`.
    pub fn after_transient(
        &self,
        attempts: u32,
        age: Duration,
        retry_after: Option<Duration>,
        spread: f64,
    ) -> Option<Duration> {
        if age >= self.give_up_after {
            return None;
        }
        let scheduled = self.schedule.delay(attempts.saturating_sub(1));
        // A spread that is no number spreads nothing (`mul_f64` would panic on it).
        let spread = match spread.is_nan() {
            true => 0.0,
            false => spread.clamp(-1.0, 1.0) * RETRY_JITTER,
        };
        let spread_wait = scheduled.mul_f64(1.0 + spread);
        let asked = retry_after
            .unwrap_or_default()
            .min(MAX_HONOURED_RETRY_AFTER);
        Some(spread_wait.max(asked))
    }
}

/// Which way a message went, mail or SMS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    Inbound,
    Outbound,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Inbound => "inbound",
            Self::Outbound => "outbound",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "inbound" => Some(Self::Inbound),
            "outbound" => Some(Self::Outbound),
            _ => None,
        }
    }
}

/// Where a message stands. Outbound: `queued` when accepted, then `sent` once the provider took
/// it, or `failed` when the provider refused it for good (the reason is kept). Inbound: `received`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EmailStatus {
    Queued,
    Sent,
    Failed,
    Received,
}

impl EmailStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Sent => "sent",
            Self::Failed => "failed",
            Self::Received => "received",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "queued" => Some(Self::Queued),
            "sent" => Some(Self::Sent),
            "failed" => Some(Self::Failed),
            "received" => Some(Self::Received),
            _ => None,
        }
    }
}

impl fmt::Display for EmailStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the receiving side's authentication results (RFC 8601 `Authentication-Results`) said of
/// an inbound message's sender.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum SenderAuthentication {
    /// No DKIM or DMARC result came with the message (and an outbound message has none).
    #[default]
    Unreported,
    /// Results came, and none authenticated the domain of the From address.
    Failed,
    /// DMARC passed for the From domain, or a DKIM signature of that domain (or of a domain it
    /// is under) verified.
    Passed { domain: String },
}

impl SenderAuthentication {
    /// The authenticated domain, when there is one.
    pub fn domain(&self) -> Option<&str> {
        match self {
            Self::Passed { domain } => Some(domain),
            Self::Unreported | Self::Failed => None,
        }
    }
}

/// Characters of a thread's newest message shown in a page of threads.
pub const THREAD_PREVIEW_CHARS: usize = 200;
/// Messages a thread read returns at most: its newest ones, oldest first.
pub const MAX_THREAD_MESSAGES: usize = 100;

/// A thread as a page of an inbox's threads shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadSummary {
    pub thread_id: EmailMessageId,
    /// The subject of its first message.
    pub subject: Option<String>,
    /// The addresses of its messages' From, To and Cc, lowercased, each once, the first 50.
    pub participants: Vec<String>,
    pub message_count: u64,
    pub last_message_at: OffsetDateTime,
    pub last_message_id: EmailMessageId,
    /// The first `THREAD_PREVIEW_CHARS` of its newest message's text.
    pub last_message_preview: Option<String>,
}

/// A thread read whole: what a page of threads says of it, and its newest messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadRead {
    pub thread_id: EmailMessageId,
    /// The subject of its first message, as `ThreadSummary` has it.
    pub subject: Option<String>,
    /// Its participants, as `ThreadSummary` has them.
    pub participants: Vec<String>,
    /// All its messages, those left out of `messages` included.
    pub message_count: u64,
    /// Its newest `MAX_THREAD_MESSAGES` messages at most, oldest first, in full.
    pub messages: Vec<EmailMessageRecord>,
}

impl ThreadRead {
    /// How many earlier messages `messages` leaves out (0 unless the thread holds more than
    /// `MAX_THREAD_MESSAGES`).
    pub fn earlier_omitted(&self) -> u64 {
        self.message_count
            .saturating_sub(self.messages.len() as u64)
    }
}

/// A stored message of an inbox, inbound or outbound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailMessageRecord {
    pub id: EmailMessageId,
    pub inbox_id: EmailInboxId,
    pub agent_id: AgentId,
    pub direction: Direction,
    pub status: EmailStatus,
    /// Messages of one conversation share it: a reply takes the thread of what it answers.
    pub thread_id: EmailMessageId,
    pub provider_message_id: Option<String>,
    /// The RFC 5322 Message-ID, with its angle brackets.
    pub internet_message_id: Option<String>,
    pub in_reply_to: Option<String>,
    pub references: Vec<String>,
    pub subject: Option<String>,
    pub from: Option<String>,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub bcc: Vec<String>,
    pub reply_to: Vec<String>,
    pub text: Option<String>,
    pub html: Option<String>,
    pub attachments: Vec<AttachmentMeta>,
    /// Header names and values in the order they came; a name may repeat.
    pub headers: Vec<(String, String)>,
    pub verification_codes: Vec<String>,
    /// Whether the sender of an inbound message was authenticated, and as which domain.
    pub sender_authentication: SenderAuthentication,
    /// The service an inbound message's subject and text name, recognised when it came in.
    pub service_name: Option<String>,
    /// Why the provider refused an outbound message for good.
    pub failure_reason: Option<String>,
    pub created_at: OffsetDateTime,
    pub received_at: Option<OffsetDateTime>,
    pub sent_at: Option<OffsetDateTime>,
}

impl EmailMessageRecord {
    /// Where a reply to it goes: the sender of an inbound message, when that is a usable address.
    /// `None` for outbound messages and for inbound ones without a usable sender.
    pub fn reply_recipient(&self) -> Option<EmailAddress> {
        if self.direction != Direction::Inbound {
            return None;
        }
        self.from
            .as_deref()
            .and_then(|a| EmailAddress::parse(a).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sensitive_header_is_refused_whatever_its_case() {
        for name in [
            "From",
            "TO",
            "cc",
            "Bcc",
            "Subject",
            "Reply-To",
            "Sender",
            "Return-Path",
            "Message-ID",
            "Date",
            "MIME-Version",
            "Content-Type",
            "Content-Transfer-Encoding",
            "DKIM-Signature",
            "ARC-Seal",
            "arc-authentication-results",
            "Received",
            "In-Reply-To",
            "References",
            "Authentication-Results",
            "Received-SPF",
            "X-Google-DKIM-Signature",
            "Message-Signature",
            "Resent-From",
            "resent-to",
            "Disposition-Notification-To",
            "Return-Receipt-To",
            "Errors-To",
            "Delivered-To",
            "X-Original-To",
            "Content-Disposition",
            "content-language",
        ] {
            assert!(
                matches!(
                    check_custom_header(name, "x"),
                    Err(HeaderRefused::Sensitive { .. })
                ),
                "{name}"
            );
        }
        assert_eq!(check_custom_header("X-Campaign", "spring"), Ok(()));
        assert_eq!(
            check_custom_header("List-Unsubscribe", "<mailto:u@x.io>"),
            Ok(())
        );
    }

    #[test]
    fn a_nul_character_in_a_value_is_refused() {
        assert_eq!(
            check_custom_header("X-A", "one\0two"),
            Err(HeaderRefused::NulCharacter("X-A".into()))
        );
    }

    #[test]
    fn control_characters_other_than_the_tab_are_refused() {
        assert_eq!(check_custom_header("X-A", "one\ttwo"), Ok(()));
        for value in ["a\u{7}b", "a\u{1b}[31m", "a\u{7f}", "a\u{85}b"] {
            assert_eq!(
                check_custom_header("X-A", value),
                Err(HeaderRefused::ControlCharacter("X-A".into())),
                "{value:?}"
            );
        }
    }

    #[test]
    fn custom_headers_are_bounded_in_count_and_bytes_together() {
        let many: Vec<(String, String)> = (0..=MAX_CUSTOM_HEADERS)
            .map(|n| (format!("X-{n}"), "v".to_owned()))
            .collect();
        let check = |list: &[(String, String)]| {
            check_custom_headers_size(list.iter().map(|(n, v)| (n.as_str(), v.as_str())))
        };
        assert_eq!(check(&many), Err(HeadersTooLarge::TooMany));
        assert_eq!(check(&many[..MAX_CUSTOM_HEADERS]), Ok(()));
        let heavy = vec![("X-A".to_owned(), "v".repeat(MAX_CUSTOM_HEADER_BYTES))];
        assert_eq!(check(&heavy), Err(HeadersTooLarge::TooManyBytes));
    }

    #[test]
    fn line_breaks_in_names_or_values_are_refused() {
        for (name, value) in [
            ("X-A", "one\r\nBcc: victim@example.com"),
            ("X-A", "one\ntwo"),
            ("X-A", "one\rtwo"),
            ("X-A\r\nBcc", "x"),
        ] {
            assert!(
                matches!(
                    check_custom_header(name, value),
                    Err(HeaderRefused::LineBreak(_))
                ),
                "{name:?}: {value:?}"
            );
        }
    }

    #[test]
    fn header_names_must_be_tokens() {
        for bad in ["", "X A", "X:A", "Ünicode", &"x".repeat(77)] {
            assert_eq!(
                check_custom_header(bad, "v"),
                Err(HeaderRefused::BadName),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn forward_subjects_get_one_prefix() {
        assert_eq!(forward_subject(Some("Invoice 7")), "Fwd: Invoice 7");
        assert_eq!(forward_subject(Some("FWD : Invoice 7")), "FWD : Invoice 7");
        assert_eq!(forward_subject(Some("Fw: Invoice 7")), "Fw: Invoice 7");
        assert_eq!(
            forward_subject(Some("Fwx: Invoice 7")),
            "Fwd: Fwx: Invoice 7"
        );
        assert_eq!(forward_subject(Some("Re: Invoice 7")), "Fwd: Re: Invoice 7");
        assert_eq!(forward_subject(None), "Fwd:");
        assert_eq!(forward_subject(Some("a\r\nBcc: b")), "Fwd: a Bcc: b");
    }

    #[test]
    fn a_forward_quotes_the_original_under_the_text() {
        let mut original = EmailMessageRecord::fixture();
        original.subject = Some("Invoice\r\n7".into());
        original.from = Some("billing@vendor.example".into());
        original.to = vec!["agent@inbox.example".into()];
        original.text = Some("Amount: 12 USD\nDue: Friday".into());
        let text = forward_text("Please pay this.", &original);
        assert!(text.starts_with("Please pay this.\n\n---------- Forwarded message ---------\n"));
        assert!(text.contains("From: billing@vendor.example\n"));
        assert!(text.contains("Subject: Invoice 7\n"));
        assert!(text.contains("To: agent@inbox.example\n"));
        assert!(!text.contains("Cc:"), "an empty field is left out");
        assert!(text.ends_with("\n\nAmount: 12 USD\nDue: Friday"));
        assert!(forward_text("", &original).starts_with("---------- Forwarded"));
    }

    #[test]
    fn reply_subjects_get_one_prefix() {
        assert_eq!(reply_subject(Some("Your order")), "Re: Your order");
        assert_eq!(reply_subject(Some("Re: Your order")), "Re: Your order");
        assert_eq!(reply_subject(Some("RE: Your order")), "RE: Your order");
        assert_eq!(reply_subject(Some("re : x")), "re : x");
        assert_eq!(reply_subject(Some("Regarding x")), "Re: Regarding x");
        assert_eq!(reply_subject(None), "Re:");
        assert_eq!(reply_subject(Some("  ")), "Re:");
        assert_eq!(
            reply_subject(Some("Hi\r\nBcc: victim@example.com")),
            "Re: Hi Bcc: victim@example.com"
        );
        assert_eq!(reply_subject(Some("a\u{0}\u{7}b\t c")), "Re: a b  c");
    }

    #[test]
    fn reply_references_extend_the_chain_with_the_original() {
        let chain = vec!["<a@x>".to_owned(), "<b@x>".to_owned()];
        assert_eq!(
            reply_references(&chain, Some("<b@x>"), Some("<c@x>")),
            vec!["<a@x>", "<b@x>", "<c@x>"]
        );
        assert_eq!(
            reply_references(&[], Some("<b@x>"), Some("<c@x>")),
            vec!["<b@x>", "<c@x>"]
        );
        assert_eq!(reply_references(&[], None, Some("<c@x>")), vec!["<c@x>"]);
        assert_eq!(reply_references(&[], None, None), Vec::<String>::new());
        assert_eq!(
            reply_references(&["<c@x>".to_owned()], None, Some("<c@x>")),
            vec!["<c@x>"]
        );
    }

    #[test]
    fn fingerprints_tell_field_boundaries_apart() {
        assert_eq!(
            request_fingerprint(["a", "b"]),
            request_fingerprint(["a", "b"])
        );
        assert_ne!(
            request_fingerprint(["ab", ""]),
            request_fingerprint(["a", "b"])
        );
        assert_ne!(request_fingerprint(["a"]), request_fingerprint(["a", ""]));
    }

    /// Waits doubling from `base` seconds to `cap`, given up after `give_up_after` seconds.
    fn retry_on(base: u64, cap: u64, give_up_after: u64) -> DeliveryRetry {
        DeliveryRetry {
            schedule: RetrySchedule {
                base: Duration::from_secs(base),
                cap: Duration::from_secs(cap),
            },
            give_up_after: Duration::from_secs(give_up_after),
        }
    }

    #[test]
    fn transient_failures_are_retried_with_growing_waits_until_the_message_is_too_old() {
        let retry = retry_on(2, 60, 3600);
        let young = Duration::from_secs(10);
        let unspread = |attempts| retry.after_transient(attempts, young, None, 0.0);
        assert_eq!(unspread(1), Some(Duration::from_secs(2)));
        assert_eq!(unspread(2), Some(Duration::from_secs(4)));
        assert_eq!(unspread(30), Some(Duration::from_secs(60)));
        assert_eq!(
            retry.after_transient(2, Duration::from_secs(3600), None, 0.0),
            None
        );
    }

    #[test]
    fn waits_are_spread_by_a_tenth_either_way() {
        let retry = retry_on(10, 60, 3600);
        let young = Duration::from_secs(1);
        let wait = |spread| retry.after_transient(1, young, None, spread);
        assert_eq!(wait(-1.0), Some(Duration::from_secs(9)));
        assert_eq!(wait(1.0), Some(Duration::from_secs(11)));
        assert_eq!(wait(0.5), Some(Duration::from_millis(10_500)));
        assert_eq!(
            wait(-7.0),
            wait(-1.0),
            "a spread outside -1..1 is held to it"
        );
        assert_eq!(wait(f64::NAN), Some(Duration::from_secs(10)));
    }

    #[test]
    fn a_retry_after_is_honoured_up_to_an_hour() {
        let retry = retry_on(2, 60, 86_400);
        let young = Duration::from_secs(1);
        let after = |asked| retry.after_transient(1, young, Some(asked), 1.0);
        assert_eq!(
            after(Duration::from_secs(1)),
            Some(Duration::from_millis(2_200)),
            "a shorter Retry-After leaves the schedule's wait"
        );
        assert_eq!(
            after(Duration::from_secs(120)),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            after(Duration::from_secs(10 * 86_400)),
            Some(MAX_HONOURED_RETRY_AFTER)
        );
    }

    #[test]
    fn statuses_and_directions_round_trip() {
        for status in [
            EmailStatus::Queued,
            EmailStatus::Sent,
            EmailStatus::Failed,
            EmailStatus::Received,
        ] {
            assert_eq!(EmailStatus::parse(status.as_str()), Some(status));
        }
        for direction in [Direction::Inbound, Direction::Outbound] {
            assert_eq!(Direction::parse(direction.as_str()), Some(direction));
        }
        assert_eq!(Direction::parse("sideways"), None);
    }
}
