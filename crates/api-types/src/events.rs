//! The events an agent hears of, as the feed, the stream and every webhook carry them, and the
//! shapes of its webhook endpoints (decision 0058).

use domain::commands::{CreateWebhook, UpdateWebhook};
use domain::{
    check_no_nul, EventPayload, EventRecord, EventType, EventTypes, Targets, WebhookAttemptRecord,
    WebhookEndpointRecord, WebhookUrl, MAX_WEBHOOK_DESCRIPTION_CHARS,
};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::json;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::field_errors::{FieldError, FieldErrors, RequestPart};
use crate::TransferIntentOut;

/// What happened: `email.received`, `email.sent`, `email.failed`, `sms.received`, or
/// `transfer_intent.` and the state an intent entered (`created`, `confirmed`, `rejected`,
/// `expired`, `submitted`, `executed`, `failed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum EventTypeName {
    #[serde(rename = "email.received")]
    EmailReceived,
    #[serde(rename = "email.sent")]
    EmailSent,
    #[serde(rename = "email.failed")]
    EmailFailed,
    #[serde(rename = "sms.received")]
    SmsReceived,
    #[serde(rename = "transfer_intent.created")]
    TransferIntentCreated,
    #[serde(rename = "transfer_intent.confirmed")]
    TransferIntentConfirmed,
    #[serde(rename = "transfer_intent.rejected")]
    TransferIntentRejected,
    #[serde(rename = "transfer_intent.expired")]
    TransferIntentExpired,
    #[serde(rename = "transfer_intent.submitted")]
    TransferIntentSubmitted,
    #[serde(rename = "transfer_intent.executed")]
    TransferIntentExecuted,
    #[serde(rename = "transfer_intent.failed")]
    TransferIntentFailed,
    #[serde(rename = "transfer_intent.authorized")]
    TransferIntentAuthorized,
}

impl From<EventType> for EventTypeName {
    fn from(kind: EventType) -> Self {
        match kind {
            EventType::EmailReceived => Self::EmailReceived,
            EventType::EmailSent => Self::EmailSent,
            EventType::EmailFailed => Self::EmailFailed,
            EventType::SmsReceived => Self::SmsReceived,
            EventType::TransferIntentCreated => Self::TransferIntentCreated,
            EventType::TransferIntentConfirmed => Self::TransferIntentConfirmed,
            EventType::TransferIntentRejected => Self::TransferIntentRejected,
            EventType::TransferIntentExpired => Self::TransferIntentExpired,
            EventType::TransferIntentSubmitted => Self::TransferIntentSubmitted,
            EventType::TransferIntentExecuted => Self::TransferIntentExecuted,
            EventType::TransferIntentFailed => Self::TransferIntentFailed,
            EventType::TransferIntentAuthorized => Self::TransferIntentAuthorized,
        }
    }
}

// No other field: each type's data is told from the others' by its fields alone.
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EmailReceivedData {
    pub message_id: Uuid,
    pub thread_id: Uuid,
    pub from: Option<String>,
    pub subject: Option<String>,
    /// The most likely first; at most 10.
    pub verification_codes: Vec<String>,
    /// How many attachments the mail has; the message (`/v1/email/messages/{message_id}`)
    /// names each, with the id to download it by.
    pub attachment_count: u32,
}

// No other field: each type's data is told from the others' by its fields alone.
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EmailSentData {
    pub message_id: Uuid,
    pub provider_message_id: Option<String>,
}

// No other field: each type's data is told from the others' by its fields alone.
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EmailFailedData {
    pub message_id: Uuid,
    pub reason: Option<String>,
}

// No other field: each type's data is told from the others' by its fields alone.
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SmsReceivedData {
    pub message_id: Uuid,
    pub from_number: String,
    pub to_number: String,
    pub code: Option<String>,
}

/// The facts of the event, by its type: ids and the few fields an agent acts on; the full record
/// stays behind its GET route. A transfer intent's events carry the intent as it was then.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum EventData {
    EmailReceived(EmailReceivedData),
    EmailSent(EmailSentData),
    EmailFailed(EmailFailedData),
    SmsReceived(SmsReceivedData),
    TransferIntent(Box<TransferIntentOut>),
}

impl From<&EventPayload> for EventData {
    fn from(payload: &EventPayload) -> Self {
        match payload {
            EventPayload::EmailReceived {
                message_id,
                thread_id,
                from,
                subject,
                verification_codes,
                attachment_count,
            } => Self::EmailReceived(EmailReceivedData {
                message_id: message_id.0,
                thread_id: *thread_id,
                from: from.clone(),
                subject: subject.clone(),
                verification_codes: verification_codes.clone(),
                attachment_count: *attachment_count,
            }),
            EventPayload::EmailSent {
                message_id,
                provider_message_id,
            } => Self::EmailSent(EmailSentData {
                message_id: message_id.0,
                provider_message_id: provider_message_id.clone(),
            }),
            EventPayload::EmailFailed { message_id, reason } => {
                Self::EmailFailed(EmailFailedData {
                    message_id: message_id.0,
                    reason: reason.clone(),
                })
            }
            EventPayload::SmsReceived {
                message_id,
                from_number,
                to_number,
                code,
            } => Self::SmsReceived(SmsReceivedData {
                message_id: message_id.0,
                from_number: from_number.clone(),
                to_number: to_number.clone(),
                code: code.clone(),
            }),
            EventPayload::TransferIntent(intent) => {
                Self::TransferIntent(Box::new(intent.as_ref().into()))
            }
        }
    }
}

/// One event: the same id and body in the feed, on the stream and in every webhook attempt.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventOut {
    /// `evt_` and 32 hex digits.
    #[schema(example = "evt_0193a1b2c3d47e8f9a0b1c2d3e4f5a6b")]
    pub id: String,
    /// Per agent, strictly increasing in commit order, without gaps.
    pub seq: u64,
    #[serde(rename = "type")]
    pub event_type: EventTypeName,
    /// When the change committed.
    #[serde(with = "time::serde::rfc3339")]
    pub timestamp: OffsetDateTime,
    pub data: EventData,
}

impl From<&EventRecord> for EventOut {
    fn from(event: &EventRecord) -> Self {
        Self {
            id: event.id.to_string(),
            seq: event.seq,
            event_type: event.event_type.into(),
            timestamp: event.timestamp,
            data: (&event.payload).into(),
        }
    }
}

impl EventOut {
    /// The event as one line of JSON: a webhook's body, a stream's `data:` line.
    pub fn to_json(event: &EventRecord) -> String {
        serde_json::to_string(&Self::from(event))
            .expect("an event is plain strings, numbers and lists")
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EventPage {
    /// Oldest first.
    pub items: Vec<EventOut>,
    /// The last item's `seq` when more may follow (pass it as `after`); `null` otherwise.
    pub next_after: Option<u64>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct WebhookCreateRequest {
    /// `https://` (`http://` only to a private address, where those are allowed), at most 2048
    /// characters, no credentials, no fragment.
    #[schema(format = "uri", max_length = 2048)]
    pub url: String,
    /// The event types to deliver; omitted or `null`: every type.
    #[serde(default)]
    #[schema(min_items = 1)]
    pub types: Option<Vec<String>>,
    #[serde(default)]
    pub description: Option<String>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct WebhookUpdateRequest {
    #[serde(default)]
    pub url: Option<String>,
    /// `null`: every type.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Vec<String>>, min_items = 1)]
    pub types: Option<Option<Vec<String>>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub description: Option<Option<String>>,
    #[serde(default)]
    pub enabled: Option<bool>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct WebhookReplayRequest {
    /// Every kept event with a greater `seq` is delivered again. An integer: `1000.0` is not a
    /// `seq`.
    #[schema(minimum = 0)]
    pub after: i64,
}

impl WebhookReplayRequest {
    /// The position to replay after, or pydantic's words for a negative one.
    pub fn position(&self) -> Result<u64, FieldErrors> {
        u64::try_from(self.after).map_err(|_| {
            FieldErrors::from(
                FieldError::body(
                    vec!["after".into()],
                    "greater_than_equal",
                    "Input should be greater than or equal to 0",
                    json!(self.after),
                )
                .with_context(json!({ "ge": 0 })),
            )
        })
    }
}

/// One message of `GET /v1/events/stream`, as an SSE client reads it: `retry` first, then each
/// event's `id` (its `seq`), `event` (its type, or `reset`) and `data` (the event as one line of
/// JSON; for `reset`, `{"after": <seq>}`). Comment lines keep the stream open.
#[derive(Debug, Serialize, ToSchema)]
pub struct ServerSentEvent {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: Option<String>,
    pub retry: Option<u64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookReplayResponse {
    /// How many deliveries are due now: those waiting for a later attempt brought forward, and
    /// every other event queued anew.
    pub queued: usize,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookOut {
    pub id: Uuid,
    pub url: String,
    /// `null`: every type.
    pub types: Option<Vec<EventTypeName>>,
    pub description: Option<String>,
    pub enabled: bool,
    pub disabled_reason: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// `whsec_` and the base64 of 32 random bytes: shown once, when created or rotated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

impl WebhookOut {
    /// The endpoint without its secret.
    pub fn new(endpoint: &WebhookEndpointRecord) -> Self {
        Self {
            id: endpoint.id.0,
            url: endpoint.url.clone(),
            types: endpoint
                .types
                .map(|types| types.iter().map(EventTypeName::from).collect()),
            description: endpoint.description.clone(),
            enabled: endpoint.enabled,
            disabled_reason: endpoint.disabled_reason.clone(),
            created_at: endpoint.created_at,
            secret: None,
        }
    }

    /// The endpoint with the secret it was just given.
    pub fn with_secret(endpoint: &WebhookEndpointRecord, secret: String) -> Self {
        Self {
            secret: Some(secret),
            ..Self::new(endpoint)
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookAttemptOut {
    pub event_id: String,
    pub event_type: EventTypeName,
    /// 1 for the first attempt at the event's delivery.
    pub attempt: u32,
    /// The receiver's status; `null` when there was none.
    pub status_code: Option<u16>,
    /// Why the attempt failed, in fixed words: `refused: not publicly routable`, `refused: a
    /// public address needs https`, `timed out`, `connection failed`, `refused: no secret of the
    /// endpoint can sign`, or `HTTP <status>` for an answer that is not 2xx. What the receiver
    /// wrote back is not shown.
    pub error: Option<String>,
    pub duration_ms: u64,
    #[serde(with = "time::serde::rfc3339")]
    pub attempted_at: OffsetDateTime,
}

impl From<&WebhookAttemptRecord> for WebhookAttemptOut {
    fn from(attempt: &WebhookAttemptRecord) -> Self {
        Self {
            event_id: attempt.event_id.to_string(),
            event_type: attempt.event_type.into(),
            attempt: attempt.attempt,
            status_code: attempt.status_code,
            error: attempt.error.clone(),
            duration_ms: u64::try_from(attempt.duration.as_millis()).unwrap_or(u64::MAX),
            attempted_at: attempt.attempted_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookAttemptPage {
    /// Newest first.
    pub items: Vec<WebhookAttemptOut>,
    /// Pass as `cursor` for the next page; `null` on the last page.
    pub next_cursor: Option<String>,
}

/// A field given, even as `null`: `Some(None)`; a field left out stays `None` (`default`).
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// The URL as written, well formed; whether its target is allowed is the service's to say.
fn check_url(url: &str) -> Result<WebhookUrl, FieldError> {
    WebhookUrl::parse(url, Targets::PrivateAllowed)
        .map_err(|error| FieldError::value_error("url", url, error))
}

/// The types named, or an error per unknown or empty list.
fn check_types(types: &[String]) -> Result<EventTypes, Vec<FieldError>> {
    if types.is_empty() {
        return Err(vec![FieldError::empty_list(vec!["types".into()])]);
    }
    let mut known = Vec::new();
    let mut unknown = Vec::new();
    for (index, name) in types.iter().enumerate() {
        match EventType::parse(name) {
            Some(kind) => known.push(kind),
            None => unknown.push(
                FieldError::body(
                    vec!["types".into(), index.into()],
                    "enum",
                    format!("Input should be one of {}", event_type_names()),
                    json!(name),
                )
                .with_context(json!({ "expected": event_type_names() })),
            ),
        }
    }
    match unknown.is_empty() {
        true => Ok(EventTypes::of(known)),
        false => Err(unknown),
    }
}

/// The types of a comma-separated list (`types` of the feed and the stream), or the enum error
/// naming the first unknown one.
pub fn read_event_types(part: RequestPart, list: &str) -> Result<EventTypes, FieldError> {
    let types = EventTypes::parse_list(list).map_err(|unknown| {
        let expected = event_type_names();
        FieldError::new(
            part,
            vec!["types".into()],
            "enum",
            format!("Input should be one of {expected}"),
            json!(unknown.0),
        )
        .with_context(json!({ "expected": expected }))
    })?;
    if types.is_empty() {
        // A list naming no type would match nothing, silently: every type is `types` left out.
        return Err(FieldError::new(
            part,
            vec!["types".into()],
            "value_error",
            "Value error, types names no event type; leave it out for every type",
            json!(list),
        ));
    }
    Ok(types)
}

/// Every type's name, quoted, as pydantic lists what an enum expects.
pub fn event_type_names() -> String {
    EventType::ALL
        .iter()
        .map(|kind| format!("'{}'", kind.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn check_description(description: &str) -> Option<FieldError> {
    FieldError::check_length("description", description, 0, MAX_WEBHOOK_DESCRIPTION_CHARS)
        .err()
        .or_else(|| {
            check_no_nul(description).err().map(|refused| {
                FieldError::value_error(
                    "description",
                    description,
                    format!("description {refused}"),
                )
            })
        })
}

impl TryFrom<WebhookCreateRequest> for CreateWebhook {
    type Error = FieldErrors;

    fn try_from(request: WebhookCreateRequest) -> Result<Self, FieldErrors> {
        let mut failures = Vec::new();
        let url = check_url(&request.url)
            .map_err(|error| failures.push(error))
            .ok();
        let types = match request.types.as_deref().map(check_types).transpose() {
            Ok(types) => types,
            Err(errors) => {
                failures.extend(errors);
                None
            }
        };
        failures.extend(request.description.as_deref().and_then(check_description));
        match (url, failures.is_empty()) {
            (Some(url), true) => Ok(CreateWebhook {
                url,
                types,
                description: request.description,
            }),
            _ => Err(FieldErrors(failures)),
        }
    }
}

impl TryFrom<WebhookUpdateRequest> for UpdateWebhook {
    type Error = FieldErrors;

    fn try_from(request: WebhookUpdateRequest) -> Result<Self, FieldErrors> {
        let mut failures = Vec::new();
        let url = match request.url.as_deref().map(check_url).transpose() {
            Ok(url) => url,
            Err(error) => {
                failures.push(error);
                None
            }
        };
        let types = match request.types {
            None => None,
            Some(None) => Some(None),
            Some(Some(names)) => match check_types(&names) {
                Ok(types) => Some(Some(types)),
                Err(errors) => {
                    failures.extend(errors);
                    None
                }
            },
        };
        if let Some(Some(description)) = &request.description {
            failures.extend(check_description(description));
        }
        match failures.is_empty() {
            true => Ok(UpdateWebhook {
                url,
                types,
                description: request.description,
                enabled: request.enabled,
            }),
            false => Err(FieldErrors(failures)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{EmailMessageId, EventId, TransferIntentRecord};

    fn event(payload: EventPayload, event_type: EventType) -> EventRecord {
        EventRecord {
            key_id: None,
            id: EventId(Uuid::from_u128(7)),
            seq: 42,
            event_type,
            timestamp: time::macros::datetime!(2026-11-25 10:00:00 UTC),
            payload,
        }
    }

    #[test]
    fn an_event_renders_as_the_contract_shows_it() {
        let received = event(
            EventPayload::EmailReceived {
                message_id: EmailMessageId(Uuid::from_u128(1)),
                thread_id: Uuid::from_u128(2),
                from: Some("a@example.com".into()),
                subject: Some("Your code".into()),
                verification_codes: vec!["123456".into()],
                attachment_count: 1,
            },
            EventType::EmailReceived,
        );
        let rendered: serde_json::Value =
            serde_json::from_str(&EventOut::to_json(&received)).expect("JSON");
        assert_eq!(
            rendered,
            json!({
                "id": "evt_00000000000000000000000000000007",
                "seq": 42,
                "type": "email.received",
                "timestamp": "2026-11-25T10:00:00Z",
                "data": {
                    "message_id": Uuid::from_u128(1),
                    "thread_id": Uuid::from_u128(2),
                    "from": "a@example.com",
                    "subject": "Your code",
                    "verification_codes": ["123456"],
                    "attachment_count": 1,
                },
            })
        );
    }

    #[test]
    fn an_intents_event_carries_the_intent_as_its_route_shows_it() {
        let intent = TransferIntentRecord::fixture();
        let rendered: serde_json::Value = serde_json::from_str(&EventOut::to_json(&event(
            EventPayload::TransferIntent(Box::new(intent.clone())),
            EventType::TransferIntentCreated,
        )))
        .expect("JSON");
        let route = serde_json::to_value(TransferIntentOut::from(&intent)).expect("JSON");
        assert_eq!(rendered["data"], route);
        assert_eq!(rendered["type"], "transfer_intent.created");
    }

    #[test]
    fn a_new_endpoint_names_each_wrong_field() {
        let refused = CreateWebhook::try_from(WebhookCreateRequest {
            url: "not a url".into(),
            types: Some(vec!["email.sent".into(), "email.bounced".into()]),
            description: Some("x".repeat(MAX_WEBHOOK_DESCRIPTION_CHARS + 1)),
        })
        .expect_err("three wrong fields");
        let paths: Vec<_> = refused.0.iter().map(|error| error.path.clone()).collect();
        assert_eq!(
            paths,
            [
                vec!["url".into()],
                vec!["types".into(), 1.into()],
                vec!["description".into()]
            ]
        );
        let empty = CreateWebhook::try_from(WebhookCreateRequest {
            url: "https://example.com/hook".into(),
            types: Some(vec![]),
            description: None,
        })
        .expect_err("no type");
        assert_eq!(empty.0[0].kind, "too_short");
    }

    #[test]
    fn a_change_tells_a_null_from_a_field_left_out() {
        let change: WebhookUpdateRequest =
            serde_json::from_str(r#"{"types": null, "enabled": false}"#).expect("JSON");
        let change = UpdateWebhook::try_from(change).expect("valid");
        assert_eq!(change.types, Some(None));
        assert_eq!(change.description, None);
        assert_eq!(change.enabled, Some(false));
    }
}
