//! Twilio's REST API (`2010-04-01`) for one account: the messages sent to a number, and the
//! numbers bought for agents and given back. Each request carries the account's SID and auth
//! token as HTTP basic auth and is bounded by a timeout; a failure is told apart as passing
//! (`Unavailable`: rate limits, Twilio's own trouble, the network) or refused (`Refused`: what a
//! retry would only repeat).

mod messages;
mod numbers;

use std::fmt;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ports::ProviderError;
use reqwest::header::{HeaderValue, AUTHORIZATION};
use reqwest::{RequestBuilder, StatusCode};
use secrecy::{ExposeSecret, SecretString};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use url::{form_urlencoded, Url};

pub const TWILIO_PROVIDER: &str = "twilio";

/// Where Twilio's REST API is.
pub const TWILIO_BASE_URL: &str = "https://api.twilio.com";

const API_VERSION: &str = "2010-04-01";

/// Where numbers are bought unless told otherwise.
const DEFAULT_COUNTRY: &str = "US";

/// The most of an unreadable error body kept in the error.
const BODY_EXCERPT_CHARS: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidTwilioSettings {
    #[error("the Twilio base URL must be an http(s) URL without query or fragment, got {0:?}")]
    BaseUrl(String),
    #[error("the Twilio account SID must be AC and 32 hexadecimal digits, got {0:?}")]
    AccountSid(String),
    /// The token itself is never shown.
    #[error("the Twilio auth token must be non-empty visible ASCII")]
    AuthToken,
    #[error("the Twilio timeout must be longer than zero")]
    Timeout,
    #[error("the inbound-SMS webhook URL must be an http(s) URL with a host, got {0:?}")]
    SmsWebhookUrl(String),
    #[error("the country to buy numbers in must be an ISO 3166-1 alpha-2 code, got {0:?}")]
    Country(String),
    #[error("the HTTP client could not be set up: {0}")]
    Client(String),
}

/// How to reach Twilio, and how a number bought there is set up. Checked when made, so a client
/// built from them only fails on what Twilio answers.
#[derive(Debug, Clone)]
pub struct TwilioSettings {
    /// Without a trailing slash: Twilio's paging URIs are paths appended to it.
    base_url: String,
    account_sid: String,
    auth_token: SecretString,
    sms_webhook_url: Url,
    country: String,
    timeout: Duration,
}

impl TwilioSettings {
    /// Settings for Twilio's own API, buying numbers in the US. `sms_webhook_url` is the public
    /// URL of this service's inbound-SMS webhook, set on each number bought so that Twilio posts
    /// its texts there; `timeout` bounds each request, answer included.
    pub fn new(
        account_sid: String,
        auth_token: SecretString,
        sms_webhook_url: Url,
        timeout: Duration,
    ) -> Result<Self, InvalidTwilioSettings> {
        if !is_account_sid(&account_sid) {
            return Err(InvalidTwilioSettings::AccountSid(account_sid));
        }
        // Visible ASCII only: a token pasted with a space or a line break would fail every
        // request with a 401 that says nothing of why.
        let token = auth_token.expose_secret();
        if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(InvalidTwilioSettings::AuthToken);
        }
        if !matches!(sms_webhook_url.scheme(), "http" | "https") || !sms_webhook_url.has_host() {
            return Err(InvalidTwilioSettings::SmsWebhookUrl(
                sms_webhook_url.to_string(),
            ));
        }
        if timeout.is_zero() {
            return Err(InvalidTwilioSettings::Timeout);
        }
        Ok(Self {
            base_url: base_url(TWILIO_BASE_URL)?,
            account_sid,
            auth_token,
            sms_webhook_url,
            country: DEFAULT_COUNTRY.to_owned(),
            timeout,
        })
    }

    /// Another base URL than Twilio's: a proxy in front of it, or a stand-in in tests.
    pub fn with_base_url(self, url: &str) -> Result<Self, InvalidTwilioSettings> {
        Ok(Self {
            base_url: base_url(url)?,
            ..self
        })
    }

    /// The country numbers are bought in, as an ISO 3166-1 alpha-2 code in either case.
    pub fn with_country(self, iso2: &str) -> Result<Self, InvalidTwilioSettings> {
        if iso2.len() != 2 || !iso2.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(InvalidTwilioSettings::Country(iso2.to_owned()));
        }
        Ok(Self {
            country: iso2.to_ascii_uppercase(),
            ..self
        })
    }
}

fn is_account_sid(sid: &str) -> bool {
    sid.strip_prefix("AC")
        .is_some_and(|hex| hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn base_url(url: &str) -> Result<String, InvalidTwilioSettings> {
    let invalid = || InvalidTwilioSettings::BaseUrl(url.to_owned());
    let parsed = Url::parse(url).map_err(|_| invalid())?;
    let usable = matches!(parsed.scheme(), "http" | "https")
        && parsed.has_host()
        && parsed.query().is_none()
        && parsed.fragment().is_none();
    if !usable {
        return Err(invalid());
    }
    // A path is kept: `https://host/prefix` → `https://host/prefix/2010-04-01/...`.
    Ok(parsed.as_str().trim_end_matches('/').to_owned())
}

/// Twilio for one account: reads a number's messages, buys numbers and gives them back.
pub struct TwilioClient {
    client: reqwest::Client,
    base_url: String,
    /// `{base_url}/2010-04-01/Accounts/{AccountSid}`: every resource used is under it.
    account_url: String,
    authorization: HeaderValue,
    sms_webhook_url: Url,
    country: String,
}

impl fmt::Debug for TwilioClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TwilioClient")
            .field("account_url", &self.account_url)
            .field("sms_webhook_url", &self.sms_webhook_url.as_str())
            .field("country", &self.country)
            .finish_non_exhaustive()
    }
}

impl TwilioClient {
    pub fn new(settings: TwilioSettings) -> Result<Self, InvalidTwilioSettings> {
        let client = reqwest::Client::builder()
            .timeout(settings.timeout)
            .build()
            .map_err(|error| InvalidTwilioSettings::Client(error.to_string()))?;
        let credentials = format!(
            "{}:{}",
            settings.account_sid,
            settings.auth_token.expose_secret()
        );
        let mut authorization =
            HeaderValue::try_from(format!("Basic {}", BASE64.encode(credentials)))
                .map_err(|_| InvalidTwilioSettings::AuthToken)?;
        authorization.set_sensitive(true);
        Ok(Self {
            client,
            account_url: format!(
                "{}/{API_VERSION}/Accounts/{}",
                settings.base_url, settings.account_sid
            ),
            base_url: settings.base_url,
            authorization,
            sms_webhook_url: settings.sms_webhook_url,
            country: settings.country,
        })
    }

    /// The URL of `path` under the account, with `query` encoded as Twilio reads it (a number's
    /// `+` as `%2B`).
    fn account_resource(&self, path: &str, query: &[(&str, &str)]) -> String {
        let mut url = format!("{}/{path}", self.account_url);
        if !query.is_empty() {
            url.push('?');
            url.push_str(
                &form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(query)
                    .finish(),
            );
        }
        url
    }

    /// The URL of a `next_page_uri`: a path on Twilio's host, query included.
    fn next_page(&self, uri: &str) -> Result<String, ProviderError> {
        if !uri.starts_with('/') {
            return Err(unreadable(format!("a next page at {uri:?}")));
        }
        Ok(format!("{}{uri}", self.base_url))
    }

    /// Sends `request` with the account's credentials and reads the whole answer.
    async fn exchange(&self, request: RequestBuilder) -> Result<Answer, ProviderError> {
        let response = request
            .header(AUTHORIZATION, self.authorization.clone())
            .send()
            .await
            .map_err(unanswered)?;
        let status = response.status();
        let body = response.bytes().await.map_err(|error| {
            ProviderError::Unavailable(format!("Twilio's answer was cut off: {error}"))
        })?;
        Ok(Answer {
            status,
            body: body.into(),
        })
    }

    /// The JSON resource Twilio answers `request` with.
    async fn fetch<T: DeserializeOwned>(
        &self,
        request: RequestBuilder,
    ) -> Result<T, ProviderError> {
        let body = self.exchange(request).await?.accepted()?;
        serde_json::from_slice(&body).map_err(unreadable)
    }
}

struct Answer {
    status: StatusCode,
    body: Vec<u8>,
}

impl Answer {
    /// The body of a success; otherwise what Twilio's error says, classified.
    fn accepted(self) -> Result<Vec<u8>, ProviderError> {
        if self.status.is_success() {
            Ok(self.body)
        } else {
            Err(classify(self.status, &self.body))
        }
    }
}

fn unanswered(error: reqwest::Error) -> ProviderError {
    let what = if error.is_timeout() {
        "Twilio did not answer in time"
    } else {
        "Twilio unreachable"
    };
    ProviderError::Unavailable(format!("{what}: {error}"))
}

/// An answer that does not read as Twilio documents it: maybe a proxy's, maybe a change at
/// Twilio; reading again later is harmless.
fn unreadable(error: impl fmt::Display) -> ProviderError {
    ProviderError::Unavailable(format!("Twilio's answer could not be read: {error}"))
}

/// Twilio's error: `{"code": 20003, "message": "Authenticate", "more_info":
/// "https://www.twilio.com/docs/errors/20003", "status": 401}`.
#[derive(Deserialize)]
struct ErrorBody {
    code: Option<u32>,
    message: String,
    more_info: Option<String>,
}

impl ErrorBody {
    fn describe(&self, status: StatusCode) -> String {
        let code = self
            .code
            .map(|code| format!("Twilio error {code}: "))
            .unwrap_or_default();
        let more = self
            .more_info
            .as_deref()
            .map(|info| format!(" ({info})"))
            .unwrap_or_default();
        format!("{status}: {code}{}{more}", self.message)
    }
}

/// Rate limits (429), a request Twilio gave up waiting for (408) and Twilio's own trouble (5xx)
/// may pass; every other refusal would be repeated, a wrong SID or token included: that waits
/// for the configuration's fix, not for time.
fn classify(status: StatusCode, body: &[u8]) -> ProviderError {
    let reason = match serde_json::from_slice::<ErrorBody>(body) {
        Ok(error) => error.describe(status),
        Err(_) => format!("{status}: {}", excerpt(body)),
    };
    let passing = matches!(
        status,
        StatusCode::TOO_MANY_REQUESTS | StatusCode::REQUEST_TIMEOUT
    ) || !status.is_client_error();
    if passing {
        ProviderError::Unavailable(reason)
    } else {
        ProviderError::Refused(reason)
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

    const SID: &str = "AC0123456789abcdef0123456789abcdef";

    fn settings(sid: &str, token: &str) -> Result<TwilioSettings, InvalidTwilioSettings> {
        TwilioSettings::new(
            sid.to_owned(),
            SecretString::from(token),
            Url::parse("https://agents.example.com/webhooks/sms/twilio").expect("URL"),
            Duration::from_secs(5),
        )
    }

    #[test]
    fn settings_are_checked() {
        assert!(settings(SID, "token").is_ok());
        for sid in [
            "",
            "AC123",
            "SK0123456789abcdef0123456789abcdef",
            "AC0123456789abcdef0123456789abcdeg",
        ] {
            assert_eq!(
                settings(sid, "token").err(),
                Some(InvalidTwilioSettings::AccountSid(sid.to_owned())),
                "{sid:?}"
            );
        }
        for token in ["", "tok en", "token\n"] {
            assert_eq!(
                settings(SID, token).err(),
                Some(InvalidTwilioSettings::AuthToken),
                "{token:?}"
            );
        }
        let timeout = TwilioSettings::new(
            SID.to_owned(),
            SecretString::from("token"),
            Url::parse("https://agents.example.com/sms").expect("URL"),
            Duration::ZERO,
        );
        assert_eq!(timeout.err(), Some(InvalidTwilioSettings::Timeout));
        let webhook = TwilioSettings::new(
            SID.to_owned(),
            SecretString::from("token"),
            Url::parse("mailto:sms@example.com").expect("URL"),
            Duration::from_secs(5),
        );
        assert!(matches!(
            webhook,
            Err(InvalidTwilioSettings::SmsWebhookUrl(_))
        ));
    }

    #[test]
    fn the_base_url_and_country_are_checked() {
        let valid = settings(SID, "token").expect("valid");
        for bad in ["", "ftp://x.example", "not a url", "https://x.example/?a=1"] {
            assert!(
                matches!(
                    valid.clone().with_base_url(bad),
                    Err(InvalidTwilioSettings::BaseUrl(_))
                ),
                "{bad:?}"
            );
        }
        for bad in ["", "U", "USA", "U1", "é"] {
            assert_eq!(
                valid.clone().with_country(bad).err(),
                Some(InvalidTwilioSettings::Country(bad.to_owned())),
                "{bad:?}"
            );
        }
        assert_eq!(valid.with_country("gb").expect("valid").country, "GB");
    }

    #[test]
    fn resources_are_under_the_account_and_the_base_urls_path() {
        let client = TwilioClient::new(
            settings(SID, "token")
                .and_then(|settings| settings.with_base_url("http://127.0.0.1:8080/twilio/"))
                .expect("valid"),
        )
        .expect("client");
        assert_eq!(
            client.account_resource("Messages.json", &[("To", "+15550100123"), ("PageSize", "3")]),
            format!("http://127.0.0.1:8080/twilio/2010-04-01/Accounts/{SID}/Messages.json?To=%2B15550100123&PageSize=3")
        );
        assert_eq!(
            client
                .next_page("/2010-04-01/Accounts/x/Messages.json?Page=1")
                .expect("a path"),
            "http://127.0.0.1:8080/twilio/2010-04-01/Accounts/x/Messages.json?Page=1"
        );
        assert!(client.next_page("https://elsewhere.example/steal").is_err());
    }

    #[test]
    fn the_auth_token_stays_out_of_debug_output() {
        let settings = settings(SID, "token-secret").expect("valid");
        assert!(!format!("{settings:?}").contains("token-secret"));
        let client = TwilioClient::new(settings).expect("client");
        let debug = format!("{client:?}");
        assert!(!debug.contains("token-secret"), "{debug}");
        assert!(
            !debug.contains(&BASE64.encode(format!("{SID}:token-secret"))),
            "{debug}"
        );
    }

    #[test]
    fn refusals_are_told_from_passing_trouble() {
        let body = |code: u32, status: u16| {
            format!(
                r#"{{"code":{code},"message":"m","more_info":"https://www.twilio.com/docs/errors/{code}","status":{status}}}"#
            )
        };
        for (status, text) in [
            (429, body(20429, 429)),
            (408, body(0, 408)),
            (500, body(20500, 500)),
            (503, "<html>unavailable</html>".to_owned()),
        ] {
            let status = StatusCode::from_u16(status).expect("status");
            assert!(
                matches!(
                    classify(status, text.as_bytes()),
                    ProviderError::Unavailable(_)
                ),
                "{status}"
            );
        }
        for (status, code) in [(400, 21211), (401, 20003), (403, 20403), (404, 20404)] {
            let status = StatusCode::from_u16(status).expect("status");
            assert_eq!(
                classify(status, body(code, status.as_u16()).as_bytes()),
                ProviderError::Refused(format!(
                    "{status}: Twilio error {code}: m (https://www.twilio.com/docs/errors/{code})"
                ))
            );
        }
    }
}
