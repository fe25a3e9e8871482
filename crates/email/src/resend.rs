//! `EmailSender` over Resend's HTTP API (`POST /emails`). The message's id is sent as the
//! idempotency key, so a hand-off retried within Resend's 24 hours is answered with the first
//! one's result instead of mailing the message again.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ports::{Delivery, DeliveryError, EmailSender, OutboundEmail};
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, RETRY_AFTER};
use reqwest::{StatusCode, Url};
use secrecy::{ExposeSecret, SecretString};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

pub const RESEND_PROVIDER: &str = "resend";

/// Where Resend's API is.
pub const RESEND_BASE_URL: &str = "https://api.resend.com";

/// The error name of a 409 that no retry mends: the key was used before for another payload.
const IDEMPOTENCY_KEY_REUSED: &str = "invalid_idempotent_request";

/// The most of an unreadable error body kept in the error.
const BODY_EXCERPT_CHARS: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidResendSettings {
    #[error("the Resend base URL must be an http(s) URL without query or fragment, got {0:?}")]
    BaseUrl(String),
    #[error("the Resend API key must be non-empty visible ASCII")]
    ApiKey,
    #[error("the Resend timeout must be longer than zero")]
    Timeout,
    #[error("the HTTP client could not be set up: {0}")]
    Client(String),
}

/// How to reach Resend. Checked when made, so a sender built from them only fails on what
/// Resend answers.
#[derive(Debug, Clone)]
pub struct ResendSettings {
    /// `POST` here: `{base_url}/emails`.
    endpoint: Url,
    api_key: SecretString,
    timeout: Duration,
}

impl ResendSettings {
    /// Settings for Resend's own API; `timeout` bounds each request, answer included.
    pub fn new(api_key: SecretString, timeout: Duration) -> Result<Self, InvalidResendSettings> {
        let key = api_key.expose_secret();
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(InvalidResendSettings::ApiKey);
        }
        if timeout.is_zero() {
            return Err(InvalidResendSettings::Timeout);
        }
        Ok(Self {
            endpoint: endpoint(RESEND_BASE_URL)?,
            api_key,
            timeout,
        })
    }

    /// Another base URL than Resend's: a proxy in front of it, or a stand-in in tests.
    pub fn with_base_url(self, url: &str) -> Result<Self, InvalidResendSettings> {
        Ok(Self {
            endpoint: endpoint(url)?,
            ..self
        })
    }
}

fn endpoint(url: &str) -> Result<Url, InvalidResendSettings> {
    let invalid = || InvalidResendSettings::BaseUrl(url.to_owned());
    let parsed = Url::parse(url).map_err(|_| invalid())?;
    let usable = matches!(parsed.scheme(), "http" | "https")
        && parsed.has_host()
        && parsed.query().is_none()
        && parsed.fragment().is_none();
    if !usable {
        return Err(invalid());
    }
    // The endpoint is joined onto the path: `https://host/prefix` → `https://host/prefix/emails`.
    let endpoint = format!("{}/emails", parsed.as_str().trim_end_matches('/'));
    Url::parse(&endpoint).map_err(|_| invalid())
}

/// Sends mail through Resend.
pub struct ResendSender {
    client: reqwest::Client,
    endpoint: Url,
    authorization: HeaderValue,
}

impl fmt::Debug for ResendSender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResendSender")
            .field("endpoint", &self.endpoint.as_str())
            .finish_non_exhaustive()
    }
}

impl ResendSender {
    pub fn new(settings: ResendSettings) -> Result<Self, InvalidResendSettings> {
        let client = reqwest::Client::builder()
            .timeout(settings.timeout)
            .build()
            .map_err(|error| InvalidResendSettings::Client(error.to_string()))?;
        let mut authorization =
            HeaderValue::try_from(format!("Bearer {}", settings.api_key.expose_secret()))
                .map_err(|_| InvalidResendSettings::ApiKey)?;
        authorization.set_sensitive(true);
        Ok(Self {
            client,
            endpoint: settings.endpoint,
            authorization,
        })
    }
}

/// The body of `POST /emails`.
#[derive(Serialize)]
struct SendRequest<'a> {
    from: &'a str,
    to: Vec<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    cc: Vec<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    bcc: Vec<&'a str>,
    subject: &'a str,
    text: &'a str,
    headers: Headers<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    attachments: Vec<ResendAttachment<'a>>,
}

/// An attachment as Resend takes it: its bytes in base64.
#[derive(Serialize)]
struct ResendAttachment<'a> {
    filename: &'a str,
    content: String,
    content_type: &'a str,
}

/// The threading headers, then the custom ones, as one JSON object in that order.
struct Headers<'a>(Vec<(&'a str, &'a str)>);

impl Serialize for Headers<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl<'a> SendRequest<'a> {
    fn new(email: &'a OutboundEmail, references: &'a str) -> Result<Self, DeliveryError> {
        let addresses =
            |list: &'a [domain::EmailAddress]| list.iter().map(|a| a.as_str()).collect();
        let mut headers = vec![("Message-ID", email.internet_message_id.as_str())];
        if let Some(id) = &email.in_reply_to {
            headers.push(("In-Reply-To", id));
        }
        if !references.is_empty() {
            headers.push(("References", references));
        }
        headers.extend(
            email
                .headers
                .iter()
                .map(|(name, value)| (name.as_str(), value.as_str())),
        );
        let attachments = email
            .attachments
            .iter()
            .map(|attachment| {
                Ok(ResendAttachment {
                    filename: attachment.meta.filename.as_deref().unwrap_or_default(),
                    content: BASE64.encode(crate::bytes_to_send(attachment)?),
                    content_type: &attachment.meta.content_type,
                })
            })
            .collect::<Result<_, DeliveryError>>()?;
        Ok(Self {
            from: email.from.as_str(),
            to: addresses(&email.to),
            cc: addresses(&email.cc),
            bcc: addresses(&email.bcc),
            subject: &email.subject,
            text: &email.text,
            headers: Headers(headers),
            attachments,
        })
    }
}

#[derive(Deserialize)]
struct SendResponse {
    id: String,
}

/// Resend's error body: `{"statusCode": 422, "name": "validation_error", "message": "..."}`.
#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    name: String,
    #[serde(default)]
    message: String,
}

#[async_trait]
impl EmailSender for ResendSender {
    fn provider(&self) -> &'static str {
        RESEND_PROVIDER
    }

    async fn send(&self, email: &OutboundEmail) -> Result<Delivery, DeliveryError> {
        let references = email.references.join(" ");
        let request = SendRequest::new(email, &references)?;
        let response = self
            .client
            .post(self.endpoint.clone())
            .header(AUTHORIZATION, self.authorization.clone())
            .header("Idempotency-Key", email.message_id.to_string())
            .json(&request)
            .send()
            .await
            .map_err(|error| DeliveryError::transient(format!("Resend unreachable: {error}")))?;
        let status = response.status();
        let retry_after = retry_after(response.headers());
        let body = response.bytes().await.map_err(|error| {
            DeliveryError::transient(format!("Resend's answer was cut off: {error}"))
        })?;
        if status.is_success() {
            // A success whose id cannot be read is retried: the idempotency key makes Resend
            // answer the retry with the same message instead of mailing it twice.
            let sent: SendResponse = serde_json::from_slice(&body).map_err(|error| {
                DeliveryError::transient(format!("Resend's answer has no id: {error}"))
            })?;
            return Ok(Delivery {
                provider_message_id: sent.id,
            });
        }
        Err(classify(status, retry_after, &body))
    }
}

/// A `Retry-After` given in seconds; the HTTP-date form, rare from APIs, is left to the schedule.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds = headers
        .get(RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(seconds))
}

/// Rate limits (429), Resend's own trouble (5xx) and a concurrent request under the same
/// idempotency key (409) may pass, not before the `Retry-After` Resend gives; every other refusal
/// would be repeated.
fn classify(status: StatusCode, retry_after: Option<Duration>, body: &[u8]) -> DeliveryError {
    let error = serde_json::from_slice::<ErrorBody>(body).ok();
    let reason = match &error {
        Some(error) if !error.name.is_empty() => {
            format!("{status}: {}: {}", error.name, error.message)
        }
        _ => format!("{status}: {}", excerpt(body)),
    };
    let key_reused = error.is_some_and(|error| error.name == IDEMPOTENCY_KEY_REUSED);
    // A refused API key is the service's configuration, not the message: mail waits for the fix.
    let retryable = match status {
        StatusCode::TOO_MANY_REQUESTS | StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => true,
        StatusCode::CONFLICT => !key_reused,
        _ => !status.is_client_error(),
    };
    if retryable {
        DeliveryError::Transient {
            reason,
            retry_after,
        }
    } else {
        DeliveryError::Refused(reason)
    }
}

fn excerpt(body: &[u8]) -> String {
    String::from_utf8_lossy(body)
        .chars()
        .take(BODY_EXCERPT_CHARS)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str) -> SecretString {
        SecretString::from(text)
    }

    #[test]
    fn settings_are_checked() {
        let timeout = Duration::from_secs(5);
        assert!(ResendSettings::new(key("re_123"), timeout).is_ok());
        assert_eq!(
            ResendSettings::new(key(""), timeout).err(),
            Some(InvalidResendSettings::ApiKey)
        );
        assert_eq!(
            ResendSettings::new(key("re 123"), timeout).err(),
            Some(InvalidResendSettings::ApiKey)
        );
        assert_eq!(
            ResendSettings::new(key("re_123"), Duration::ZERO).err(),
            Some(InvalidResendSettings::Timeout)
        );
        let settings = ResendSettings::new(key("re_123"), timeout).expect("valid");
        for bad in ["", "ftp://x.example", "not a url", "https://x.example/?a=1"] {
            assert!(
                matches!(
                    settings.clone().with_base_url(bad),
                    Err(InvalidResendSettings::BaseUrl(_))
                ),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn the_endpoint_is_under_the_base_url() {
        assert_eq!(
            endpoint(RESEND_BASE_URL).expect("valid").as_str(),
            "https://api.resend.com/emails"
        );
        assert_eq!(
            endpoint("http://127.0.0.1:8080/proxy/")
                .expect("valid")
                .as_str(),
            "http://127.0.0.1:8080/proxy/emails"
        );
    }

    #[test]
    fn the_api_key_stays_out_of_debug_output() {
        let settings =
            ResendSettings::new(key("re_secret"), Duration::from_secs(1)).expect("valid");
        assert!(!format!("{settings:?}").contains("re_secret"));
        let sender = ResendSender::new(settings).expect("client");
        assert!(!format!("{sender:?}").contains("re_secret"));
    }

    #[test]
    fn refusals_are_told_from_passing_trouble() {
        let body = |name: &str| format!(r#"{{"statusCode":0,"name":"{name}","message":"m"}}"#);
        let transient = [
            (429, body("rate_limit_exceeded")),
            (500, body("internal_server_error")),
            (503, "<html>unavailable</html>".to_owned()),
            (409, body("concurrent_idempotent_requests")),
            (401, body("missing_api_key")),
            (403, body("invalid_api_key")),
        ];
        for (status, text) in transient {
            let status = StatusCode::from_u16(status).expect("status");
            assert!(
                matches!(
                    classify(status, None, text.as_bytes()),
                    DeliveryError::Transient { .. }
                ),
                "{status}"
            );
        }
        let refused = [
            (400, "validation_error"),
            (404, "not_found"),
            (409, IDEMPOTENCY_KEY_REUSED),
            (422, "missing_required_field"),
        ];
        for (status, name) in refused {
            let status = StatusCode::from_u16(status).expect("status");
            assert_eq!(
                classify(status, None, body(name).as_bytes()),
                DeliveryError::Refused(format!("{status}: {name}: m"))
            );
        }
    }

    #[test]
    fn a_rate_limit_carries_resends_retry_after_in_seconds() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(RETRY_AFTER, HeaderValue::from_str(value).expect("header"));
            retry_after(&headers)
        };
        assert_eq!(with("7"), Some(Duration::from_secs(7)));
        assert_eq!(with(" 30 "), Some(Duration::from_secs(30)));
        assert_eq!(with("Wed, 21 Oct 2026 07:28:00 GMT"), None);
        assert_eq!(with("-1"), None);
        assert_eq!(retry_after(&HeaderMap::new()), None);
        let limited = classify(
            StatusCode::TOO_MANY_REQUESTS,
            with("7"),
            br#"{"name":"rate_limit_exceeded","message":"m"}"#,
        );
        assert_eq!(
            limited,
            DeliveryError::Transient {
                reason: "429 Too Many Requests: rate_limit_exceeded: m".into(),
                retry_after: Some(Duration::from_secs(7)),
            }
        );
    }
}
