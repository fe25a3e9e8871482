//! SMS: the agent's number, its messages, and the answer to a wait for a code.

use std::fmt;

use domain::{EmailMessageRecord, SmsMessageRecord, MAX_WAIT_SECS};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use time::OffsetDateTime;
use utoipa::openapi::schema::{Array, ArrayBuilder, SchemaType, Type};
use utoipa::openapi::Ref;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::enums::{Channel, Direction};

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
    pub direction: Direction,
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
            direction: message.direction.into(),
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

/// A whole number of seconds as JSON may write it: an integer, or a number without a fractional
/// part (`5.0`), which is an integer to JSON Schema and to FastAPI alike. Its range is checked
/// with the other fields.
pub(crate) fn whole_number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    struct WholeNumber;

    impl Visitor<'_> for WholeNumber {
        type Value = i64;

        fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
            formatter.write_str("an integer")
        }

        fn visit_i64<E: de::Error>(self, value: i64) -> Result<i64, E> {
            Ok(value)
        }

        fn visit_u64<E: de::Error>(self, value: u64) -> Result<i64, E> {
            i64::try_from(value)
                .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(value), &self))
        }

        fn visit_f64<E: de::Error>(self, value: f64) -> Result<i64, E> {
            // i64::MIN is -2^63 exactly; i64::MAX as f64 rounds up to 2^63, which is outside.
            let in_range = value >= i64::MIN as f64 && value < i64::MAX as f64;
            if value.fract() == 0.0 && in_range {
                Ok(value as i64)
            } else {
                Err(E::invalid_type(de::Unexpected::Float(value), &self))
            }
        }
    }

    deserializer.deserialize_any(WholeNumber)
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct WaitForCodeRequest {
    /// Only a message from this service (e.g. `Google`); empty for any.
    #[serde(default)]
    pub service_name: String,
    /// Seconds to wait, 0 to 300; 0 looks once.
    #[serde(default = "default_timeout", deserialize_with = "whole_number")]
    #[schema(default = default_timeout, minimum = 0, maximum = 300)]
    pub timeout: i64,
    /// At most 128 characters: a retry with the same id returns the same result, and joins a
    /// wait with that id still in progress.
    #[serde(default)]
    #[schema(max_length = 128, pattern = "^[^\\u0000]*$")]
    pub request_id: Option<String>,
}

fn channels_schema() -> Array {
    ArrayBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Array, Type::Null]))
        .items(Ref::from_schema_name("Channel"))
        .min_items(Some(1))
        .description(Some(
            "`sms`, `email`, or both; every channel the agent has when omitted (an empty list is \
             422).",
        ))
        .build()
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct CodesWaitRequest {
    /// Only a message from this service (e.g. `Google`); empty for any.
    #[serde(default)]
    pub service_name: String,
    /// Seconds to wait, 0 to 300; 0 looks once.
    #[serde(default = "default_timeout", deserialize_with = "whole_number")]
    #[schema(default = default_timeout, minimum = 0, maximum = 300)]
    pub timeout: i64,
    /// At most 128 characters: a retry with the same id returns the same result.
    #[serde(default)]
    #[schema(max_length = 128, pattern = "^[^\\u0000]*$")]
    pub request_id: Option<String>,
    #[serde(default)]
    #[schema(schema_with = channels_schema)]
    pub channels: Option<Vec<String>>,
}

/// A verification code that arrived by SMS or by mail.
#[derive(Debug, Serialize, ToSchema)]
pub struct CodeOut {
    pub channel: Channel,
    /// The id of the SMS or the mail, as its own routes show it.
    pub message_id: String,
    /// The code found; null when the message holds none.
    pub code: Option<String>,
    /// The sender: a phone number or an email address.
    pub from: Option<String>,
    /// Whether the sender is authenticated: a mail whose receiving side verified DKIM or DMARC
    /// for the domain of `from`, then `authenticated_domain`. An SMS never is. A wait's
    /// `service_name` matched the message's text; where the sender is authenticated (or is an SMS
    /// sender id) it also had to be that service's, otherwise it is a hint only.
    pub sender_authenticated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authenticated_domain: Option<String>,
    /// The SMS text, or the mail's subject.
    pub raw_message: String,
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
    pub request_id: Option<String>,
}

impl CodeOut {
    pub fn from_sms(message: &SmsMessageRecord, request_id: Option<String>) -> Self {
        Self {
            channel: Channel::Sms,
            message_id: message.id.to_string(),
            code: message.parsed_code.clone(),
            from: Some(message.from.clone()),
            sender_authenticated: false,
            authenticated_domain: None,
            raw_message: message.body.clone(),
            received_at: message.provider_received_at.unwrap_or(message.created_at),
            request_id,
        }
    }

    pub fn from_email(message: &EmailMessageRecord, request_id: Option<String>) -> Self {
        Self {
            channel: Channel::Email,
            message_id: message.id.to_string(),
            code: message.verification_codes.first().cloned(),
            from: message.from.clone(),
            sender_authenticated: message.sender_authentication.domain().is_some(),
            authenticated_domain: message.sender_authentication.domain().map(str::to_owned),
            raw_message: message.subject.clone().unwrap_or_default(),
            received_at: message.received_at.unwrap_or(message.created_at),
            request_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeout_of(body: &str) -> Result<i64, String> {
        serde_json::from_str::<WaitForCodeRequest>(body)
            .map(|request| request.timeout)
            .map_err(|error| error.to_string())
    }

    #[test]
    fn a_timeout_is_a_whole_number_written_with_or_without_a_fraction() {
        assert_eq!(timeout_of(r#"{"timeout": 5}"#), Ok(5));
        assert_eq!(timeout_of(r#"{"timeout": 196.0}"#), Ok(196));
        assert_eq!(timeout_of(r#"{"timeout": -3.0}"#), Ok(-3));
        assert_eq!(timeout_of("{}"), Ok(300));
    }

    #[test]
    fn a_timeout_with_a_fraction_or_beyond_64_bits_is_not_an_integer() {
        for body in [
            r#"{"timeout": 1.5}"#,
            r#"{"timeout": 1e300}"#,
            r#"{"timeout": 18446744073709551615}"#,
            r#"{"timeout": "5"}"#,
        ] {
            let error = timeout_of(body).expect_err(body);
            assert!(error.contains("expected an integer"), "{body}: {error}");
        }
    }
}
