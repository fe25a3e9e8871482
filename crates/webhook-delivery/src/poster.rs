//! `HttpWebhookPoster`: one signed POST of one event to one receiver.

use std::error::Error;
use std::net::IpAddr;
use std::time::{Duration, Instant, SystemTime};

use api_types::EventOut;
use async_trait::async_trait;
use domain::{is_globally_routable, AttemptFailure, Targets};
use ports::{PostAnswer, WebhookDelivery, WebhookPoster};
use reqwest::header::{CONTENT_TYPE, RETRY_AFTER};
use reqwest::{redirect, Response, StatusCode, Url};
use standard_webhooks::{sign, Secret, ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER};

use crate::retry_after::parse_retry_after;
use crate::target::{CheckedResolver, TargetRefused};

/// At most this many characters of a receiver's answer are kept in an attempt's account.
const ACCOUNT_CHARS: usize = 200;

/// How deliveries are posted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PosterSettings {
    /// The whole attempt: resolving, connecting, TLS, the answer's head and the part of its body
    /// that is read. Default 15 s.
    pub timeout: Duration,
    /// Which addresses a delivery may go to. Default `PublicOnly`.
    pub targets: Targets,
    /// At most this many bytes of a receiver's answer are read. Default 4096.
    pub max_response_bytes: usize,
}

impl Default for PosterSettings {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(15),
            targets: Targets::PublicOnly,
            max_response_bytes: 4096,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum InvalidPosterSettings {
    #[error("the webhook timeout must be longer than zero")]
    ZeroTimeout,
    #[error("the webhook HTTP client could not be built")]
    Client(#[source] reqwest::Error),
}

/// Posts over HTTP(S) with reqwest. Every attempt opens its own connection (none is kept idle),
/// so the receiver's host is resolved, and its addresses checked, at every attempt.
#[derive(Debug, Clone)]
pub struct HttpWebhookPoster {
    client: reqwest::Client,
    settings: PosterSettings,
}

/// What an attempt came to, but for its duration.
struct Outcome {
    status: Option<u16>,
    failure: Option<AttemptFailure>,
    detail: Option<String>,
    retry_after: Option<Duration>,
}

impl Outcome {
    fn failed(failure: AttemptFailure, detail: impl Into<String>) -> Self {
        Self {
            status: None,
            failure: Some(failure),
            detail: Some(detail.into()),
            retry_after: None,
        }
    }
}

impl HttpWebhookPoster {
    pub fn new(settings: PosterSettings) -> Result<Self, InvalidPosterSettings> {
        if settings.timeout.is_zero() {
            return Err(InvalidPosterSettings::ZeroTimeout);
        }
        let client = reqwest::Client::builder()
            .dns_resolver(CheckedResolver {
                targets: settings.targets,
            })
            // A proxy would connect on our behalf to addresses we never checked.
            .no_proxy()
            // A redirect could lead anywhere, private addresses included; a 3xx is the answer.
            .redirect(redirect::Policy::none())
            // A kept connection would skip the resolution, and the check, of the next attempt.
            .pool_max_idle_per_host(0)
            .build()
            .map_err(InvalidPosterSettings::Client)?;
        Ok(Self { client, settings })
    }

    async fn attempt(&self, delivery: &WebhookDelivery) -> Outcome {
        let url = match Url::parse(&delivery.url) {
            Ok(url) => url,
            Err(error) => {
                return Outcome::failed(
                    AttemptFailure::ConnectionFailed,
                    format!("invalid URL: {error}"),
                )
            }
        };
        // reqwest connects to an address written in the URL without asking the resolver.
        if let Some(refused) = literal_refused(&url, self.settings.targets) {
            return Outcome::failed(AttemptFailure::NotPubliclyRoutable, refused.to_string());
        }
        if let Some((failure, detail)) = plain_http_to_public(&url).await {
            return Outcome::failed(failure, detail);
        }
        let id = delivery.event.id.to_string();
        let body = EventOut::to_json(&delivery.event).into_bytes();
        let timestamp = unix_seconds(SystemTime::now());
        let signatures = signatures(delivery, &id, timestamp, &body);
        if signatures.is_empty() {
            // Unsigned, the receiver could not tell it from a forgery: not worth sending.
            return Outcome::failed(
                AttemptFailure::Unsigned,
                "no secret of the endpoint can sign the delivery",
            );
        }
        let sent = self
            .client
            .post(url)
            .header(CONTENT_TYPE, "application/json")
            .header(ID_HEADER, id)
            .header(TIMESTAMP_HEADER, timestamp.to_string())
            .header(SIGNATURE_HEADER, signatures.join(" "))
            .body(body)
            .send()
            .await;
        match sent {
            Ok(response) => self.answer(response).await,
            Err(error) => {
                let failure = match TargetRefused::within(&error) {
                    Some(_) => AttemptFailure::NotPubliclyRoutable,
                    None => AttemptFailure::ConnectionFailed,
                };
                Outcome::failed(failure, describe(error))
            }
        }
    }

    async fn answer(&self, response: Response) -> Outcome {
        let status = response.status();
        let retry_after = match status {
            StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE => response
                .headers()
                .get(RETRY_AFTER)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| parse_retry_after(value, SystemTime::now())),
            _ => None,
        };
        // A 2xx says all there is to know: its body is not read.
        let (failure, detail) = match status.is_success() {
            true => (None, None),
            false => {
                let body = read_bounded(response, self.settings.max_response_bytes).await;
                (
                    Some(AttemptFailure::Answered(status.as_u16())),
                    Some(account(status, &body)),
                )
            }
        };
        Outcome {
            status: Some(status.as_u16()),
            failure,
            detail,
            retry_after,
        }
    }
}

#[async_trait]
impl WebhookPoster for HttpWebhookPoster {
    async fn post(&self, delivery: &WebhookDelivery) -> PostAnswer {
        let started = Instant::now();
        let timeout = self.settings.timeout;
        let outcome = tokio::time::timeout(timeout, self.attempt(delivery))
            .await
            .unwrap_or_else(|_| {
                Outcome::failed(
                    AttemptFailure::TimedOut,
                    format!("timed out after {} ms", timeout.as_millis()),
                )
            });
        PostAnswer {
            status: outcome.status,
            failure: outcome.failure,
            detail: outcome.detail,
            retry_after: outcome.retry_after,
            duration: started.elapsed(),
        }
    }
}

pub(crate) fn literal_refused(url: &Url, targets: Targets) -> Option<TargetRefused> {
    // The URL parser has already written any IPv4 form as dotted decimal, IPv6 in brackets.
    let host = url.host_str()?;
    let ip: IpAddr = host
        .strip_prefix('[')
        .and_then(|bracketed| bracketed.strip_suffix(']'))
        .unwrap_or(host)
        .parse()
        .ok()?;
    TargetRefused::first_of(host, [ip], targets)
}

/// Plain `http` goes only to private addresses (allowed for tests and private networks): a
/// host that resolves to a public one is refused, as `https` is the rule there. What the
/// agent is told, and what the log is.
pub(crate) async fn plain_http_to_public(url: &Url) -> Option<(AttemptFailure, String)> {
    if url.scheme() != "http" {
        return None;
    }
    let host = url
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']');
    let port = url.port_or_known_default()?;
    let addresses = match tokio::net::lookup_host((host, port)).await {
        Ok(addresses) => addresses,
        Err(error) => {
            return Some((
                AttemptFailure::ConnectionFailed,
                format!("resolving {host}: {error}"),
            ))
        }
    };
    addresses
        .map(|address| address.ip())
        .find(|ip| is_globally_routable(*ip))
        .map(|ip| {
            (
                AttemptFailure::PublicNeedsHttps,
                format!(
                    "plain http refused: {host} resolves to {ip}, a public address needs https"
                ),
            )
        })
}

fn unix_seconds(now: SystemTime) -> i64 {
    let since_epoch = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since_epoch.as_secs()).unwrap_or(i64::MAX)
}

/// One `v1,<base64>` per secret that parses, newest first as the secrets are.
fn signatures(delivery: &WebhookDelivery, id: &str, timestamp: i64, body: &[u8]) -> Vec<String> {
    delivery
        .secrets
        .iter()
        .enumerate()
        .filter_map(|(position, text)| match Secret::parse(text) {
            Ok(secret) => Some(sign(&secret, id, timestamp, body)),
            Err(_) => {
                // Its position tells which one; the secret itself is never written out.
                tracing::warn!(
                    endpoint = %delivery.endpoint,
                    delivery = %delivery.id,
                    position,
                    "a secret of the webhook endpoint does not parse; it signs nothing"
                );
                None
            }
        })
        .collect()
}

/// Why no answer came: the refusal of the target when it was that, otherwise each cause in turn
/// (reqwest's own text only says a request failed). The URL is left out: the log shows it.
pub(crate) fn describe(error: reqwest::Error) -> String {
    if let Some(refused) = TargetRefused::within(&error) {
        return refused.to_string();
    }
    let error = error.without_url();
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(error) = cause {
        text.push_str(": ");
        text.push_str(&error.to_string());
        cause = error.source();
    }
    text
}

/// Up to `limit` bytes of the answer's body; what arrives past it is not read, and dropping the
/// answer closes its connection.
async fn read_bounded(mut response: Response, limit: usize) -> Vec<u8> {
    let mut kept = Vec::new();
    while kept.len() < limit {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = limit - kept.len();
                kept.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            // The status is the answer; a body cut short still shows what arrived.
            Ok(None) | Err(_) => break,
        }
    }
    kept
}

/// `HTTP <status>` and the start of the answer's text, on one line.
fn account(status: StatusCode, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let words: Vec<&str> = text
        .split(|c: char| c.is_control() || c.is_whitespace())
        .filter(|word| !word.is_empty())
        .collect();
    let line: String = words.join(" ").chars().take(ACCOUNT_CHARS).collect();
    match line.is_empty() {
        true => format!("HTTP {}", status.as_u16()),
        false => format!("HTTP {}: {line}", status.as_u16()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn plain_http_goes_only_to_private_addresses() {
        async fn refused(url: &str) -> Option<(AttemptFailure, String)> {
            plain_http_to_public(&Url::parse(url).expect("a URL")).await
        }
        assert!(refused("http://127.0.0.1:9000/hook").await.is_none());
        assert!(refused("http://localhost:9000/hook").await.is_none());
        assert!(
            refused("https://8.8.8.8/hook").await.is_none(),
            "https is checked elsewhere"
        );
        let (failure, detail) = refused("http://8.8.8.8/hook").await.expect("refused");
        assert_eq!(failure, AttemptFailure::PublicNeedsHttps);
        assert!(detail.contains("resolves to 8.8.8.8"), "{detail}");
    }

    #[test]
    fn the_account_is_one_line_of_at_most_200_characters() {
        let body = format!("line one\r\n\tline\u{7}two {}", "x".repeat(500));
        let account = account(StatusCode::INTERNAL_SERVER_ERROR, body.as_bytes());
        assert!(
            account.starts_with("HTTP 500: line one line two xxx"),
            "{account}"
        );
        assert_eq!(account.chars().count(), "HTTP 500: ".len() + ACCOUNT_CHARS);
        assert!(!account.chars().any(char::is_control));
    }

    #[test]
    fn an_answer_without_text_is_its_status() {
        assert_eq!(account(StatusCode::BAD_GATEWAY, b""), "HTTP 502");
        assert_eq!(account(StatusCode::NOT_FOUND, b" \r\n "), "HTTP 404");
        assert_eq!(
            account(StatusCode::GONE, b"\xff gone"),
            "HTTP 410: \u{fffd} gone"
        );
    }

    #[test]
    fn literal_addresses_are_checked_before_any_connection() {
        let refused = |url: &str, targets| {
            literal_refused(&Url::parse(url).expect("a URL"), targets).map(|r| r.to_string())
        };
        assert_eq!(
            refused("http://127.0.0.1:9/hook", Targets::PublicOnly).as_deref(),
            Some("target refused: 127.0.0.1 resolves to 127.0.0.1, which is not publicly routable")
        );
        assert_eq!(
            refused("https://[::ffff:10.0.0.1]/", Targets::PublicOnly).as_deref(),
            Some(
                "target refused: [::ffff:a00:1] resolves to ::ffff:10.0.0.1, which is not \
                 publicly routable"
            )
        );
        assert_eq!(
            refused("http://127.0.0.1:9/", Targets::PrivateAllowed),
            None
        );
        assert_eq!(
            refused("https://[::ffff:0:a00:1]/", Targets::PublicOnly).as_deref(),
            Some(
                "target refused: [::ffff:0:a00:1] resolves to ::ffff:0:a00:1, which is not \
                 publicly routable"
            )
        );
        assert_eq!(refused("https://8.8.8.8/", Targets::PublicOnly), None);
        assert_eq!(refused("https://localhost/", Targets::PublicOnly), None);
        assert!(refused("http://0x7f.1/", Targets::PublicOnly).is_some());
    }

    #[test]
    fn a_zero_timeout_is_refused() {
        let settings = PosterSettings {
            timeout: Duration::ZERO,
            ..PosterSettings::default()
        };
        assert!(matches!(
            HttpWebhookPoster::new(settings),
            Err(InvalidPosterSettings::ZeroTimeout)
        ));
    }

    #[test]
    fn defaults_are_the_documented_ones() {
        assert_eq!(
            PosterSettings::default(),
            PosterSettings {
                timeout: Duration::from_secs(15),
                targets: Targets::PublicOnly,
                max_response_bytes: 4096,
            }
        );
    }
}
