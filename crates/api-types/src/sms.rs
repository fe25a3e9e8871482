//! SMS: the agent's number, its messages, and the answer to a wait for a code.

use domain::{EmailMessageRecord, SmsMessageRecord, MAX_WAIT_SECS};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

#[derive(Debug, Serialize, ToSchema)]
pub struct PhoneNumberResponse {
    /// E.164.
    pub number: String,
    pub country_iso2: Option<String>,
    pub provider: String,
}

/// The provider's record of a message.
#[derive(Debug, Serialize, ToSchema)]
pub struct SmsRawPayload {
    /// How it came in: `webhook`, `sync` or `sandbox`.
    pub source: String,
    pub provider_message_id: String,
    pub from_number: String,
    pub to_number: String,
    pub raw_message: String,
    /// The most likely verification code in the message.
    pub parsed_code: Option<String>,
    /// When the provider received it (RFC 3339), when it says.
    pub provider_received_at: Option<String>,
    /// The service the message names itself as coming from.
    pub service_name: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SmsMessageOut {
    pub message_id: Uuid,
    /// `inbound` or `outbound`.
    pub direction: String,
    pub from_number: String,
    pub to_number: String,
    pub raw_payload: SmsRawPayload,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

fn rfc3339(at: OffsetDateTime) -> Option<String> {
    at.format(&time::format_description::well_known::Rfc3339)
        .ok()
}

impl From<&SmsMessageRecord> for SmsMessageOut {
    fn from(message: &SmsMessageRecord) -> Self {
        Self {
            message_id: message.id.0,
            direction: message.direction.as_str().to_owned(),
            from_number: message.from.clone(),
            to_number: message.to.clone(),
            raw_payload: SmsRawPayload {
                source: message.source.as_str().to_owned(),
                provider_message_id: message.provider_message_id.clone(),
                from_number: message.from.clone(),
                to_number: message.to.clone(),
                raw_message: message.body.clone(),
                parsed_code: message.parsed_code.clone(),
                provider_received_at: message.provider_received_at.and_then(rfc3339),
                service_name: message.service_name.clone(),
            },
            created_at: message.created_at,
        }
    }
}

/// A verification code that arrived by SMS.
#[derive(Debug, Serialize, ToSchema)]
pub struct VerificationCodeResponse {
    /// The code found in the message; null when the message holds none.
    pub code: Option<String>,
    pub from_number: String,
    pub raw_message: String,
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
    pub request_id: Option<String>,
}

impl VerificationCodeResponse {
    pub fn new(message: &SmsMessageRecord, request_id: Option<String>) -> Self {
        Self {
            code: message.parsed_code.clone(),
            from_number: message.from.clone(),
            raw_message: message.body.clone(),
            received_at: message.provider_received_at.unwrap_or(message.created_at),
            request_id,
        }
    }
}

fn default_timeout() -> i64 {
    i64::from(MAX_WAIT_SECS)
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct WaitForCodeRequest {
    /// Only a message from this service (e.g. `Google`); empty for any.
    #[serde(default)]
    pub service_name: String,
    /// Seconds to wait, 0 to 300; 0 looks once.
    #[serde(default = "default_timeout")]
    #[schema(default = default_timeout, minimum = 0, maximum = 300)]
    pub timeout: i64,
    /// At most 128 characters: a retry with the same id returns the same result, and joins a
    /// wait with that id still in progress.
    #[serde(default)]
    pub request_id: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct CodesWaitRequest {
    /// Only a message from this service (e.g. `Google`); empty for any.
    #[serde(default)]
    pub service_name: String,
    /// Seconds to wait, 0 to 300; 0 looks once.
    #[serde(default = "default_timeout")]
    #[schema(default = default_timeout, minimum = 0, maximum = 300)]
    pub timeout: i64,
    /// At most 128 characters: a retry with the same id returns the same result.
    #[serde(default)]
    pub request_id: Option<String>,
    /// `sms`, `email`, or both; every channel the agent has when omitted.
    #[serde(default)]
    pub channels: Option<Vec<String>>,
}

/// A verification code that arrived by SMS or by mail.
#[derive(Debug, Serialize, ToSchema)]
pub struct CodeOut {
    /// `sms` or `email`.
    pub channel: String,
    /// The id of the SMS or the mail, as its own routes show it.
    pub message_id: String,
    /// The code found; null when the message holds none.
    pub code: Option<String>,
    /// The sender: a phone number or an email address.
    pub from: Option<String>,
    /// The SMS text, or the mail's subject.
    pub raw_message: String,
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
    pub request_id: Option<String>,
}

impl CodeOut {
    pub fn from_sms(message: &SmsMessageRecord, request_id: Option<String>) -> Self {
        Self {
            channel: "sms".into(),
            message_id: message.id.to_string(),
            code: message.parsed_code.clone(),
            from: Some(message.from.clone()),
            raw_message: message.body.clone(),
            received_at: message.provider_received_at.unwrap_or(message.created_at),
            request_id,
        }
    }

    pub fn from_email(message: &EmailMessageRecord, request_id: Option<String>) -> Self {
        Self {
            channel: "email".into(),
            message_id: message.id.to_string(),
            code: message.verification_codes.first().cloned(),
            from: message.from.clone(),
            raw_message: message.subject.clone().unwrap_or_default(),
            received_at: message.received_at.unwrap_or(message.created_at),
            request_id,
        }
    }
}
