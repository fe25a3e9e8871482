//! The SMS adapters against their counterparts: Twilio's REST API played by wiremock with the
//! JSON Twilio documents, and webhooks signed as Twilio signs them.

mod messages;
mod numbers;
mod webhook;

use std::time::Duration;

use domain::PhoneNumber;
use secrecy::SecretString;
use serde_json::json;
use sms::{TwilioClient, TwilioSettings};
use url::Url;
use wiremock::MockServer;

pub const ACCOUNT_SID: &str = "AC0123456789abcdef0123456789abcdef";
pub const AUTH_TOKEN: &str = "auth-token-123";
pub const SMS_WEBHOOK_URL: &str = "https://agents.example.com/webhooks/sms/twilio";

/// Where the account's resources are, as Twilio's paths spell it.
pub fn account_path(resource: &str) -> String {
    format!("/2010-04-01/Accounts/{ACCOUNT_SID}/{resource}")
}

pub fn settings(base_url: &str, timeout: Duration) -> TwilioSettings {
    TwilioSettings::new(
        ACCOUNT_SID.to_owned(),
        SecretString::from(AUTH_TOKEN),
        Url::parse(SMS_WEBHOOK_URL).expect("URL"),
        timeout,
    )
    .and_then(|settings| settings.with_base_url(base_url))
    .expect("valid settings")
}

pub fn client(server: &MockServer) -> TwilioClient {
    TwilioClient::new(settings(&server.uri(), Duration::from_secs(5))).expect("client")
}

/// A client of an API that is not there: a port just freed, where nothing listens (a dropped
/// MockServer would go back to wiremock's pool and still answer).
pub fn unreachable_client() -> TwilioClient {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    TwilioClient::new(settings(
        &format!("http://127.0.0.1:{port}"),
        Duration::from_secs(5),
    ))
    .expect("client")
}

pub fn number(text: &str) -> PhoneNumber {
    PhoneNumber::parse(text).expect("E.164")
}

/// Twilio's error body.
pub fn twilio_error(status: u16, code: u32, message: &str) -> serde_json::Value {
    json!({
        "code": code,
        "message": message,
        "more_info": format!("https://www.twilio.com/docs/errors/{code}"),
        "status": status,
    })
}
