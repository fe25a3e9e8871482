//! `InboundMailWebhook` of Resend's inbound mail: signed per the Standard Webhooks
//! specification (`standard_webhooks`), its body Resend's JSON event or a raw RFC 5322 message.

use std::fmt;

use async_trait::async_trait;
use ports::{
    InboundFormat, InboundMailWebhook, InboundParser, ProviderWebhookHeaders,
    ProviderWebhookRefusal, ProviderWebhookRequest, WebhookMail,
};
use secrecy::{ExposeSecret, SecretString};
use standard_webhooks::{
    Secret, SignatureError, SignedHeaders, ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER,
};

use crate::MailParserInbound;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidWebhookSecret {
    #[error("at least one webhook secret is needed")]
    Missing,
    /// The secret itself is never shown.
    #[error("webhook secret number {position} is not `whsec_` (optional) and base64 of a key")]
    Malformed { position: usize },
}

/// Accepts webhooks signed with any of its secrets, so a secret can be rotated without a window
/// in which the provider's webhooks fail: both are active until the old one is removed.
pub struct MailWebhook {
    secrets: Vec<Secret>,
}

impl fmt::Debug for MailWebhook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MailWebhook")
            .field("secrets", &self.secrets.len())
            .finish()
    }
}

impl MailWebhook {
    /// Secrets as the provider shows them, `whsec_<base64>`, or the base64 alone.
    pub fn new(
        secrets: impl IntoIterator<Item = SecretString>,
    ) -> Result<Self, InvalidWebhookSecret> {
        let secrets = secrets
            .into_iter()
            .enumerate()
            .map(|(index, secret)| {
                Secret::parse(secret.expose_secret()).map_err(|_| InvalidWebhookSecret::Malformed {
                    position: index + 1,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if secrets.is_empty() {
            return Err(InvalidWebhookSecret::Missing);
        }
        Ok(Self { secrets })
    }
}

/// The signature headers of a webhook, empty where one is missing.
fn signed_headers(headers: &ProviderWebhookHeaders) -> SignedHeaders<'_> {
    let value = |name| headers.get(name).unwrap_or_default();
    SignedHeaders {
        id: value(ID_HEADER),
        timestamp: value(TIMESTAMP_HEADER),
        signatures: value(SIGNATURE_HEADER),
    }
}

fn refused(error: SignatureError) -> ProviderWebhookRefusal {
    ProviderWebhookRefusal::Signature(format!("Invalid webhook signature: {error}"))
}

/// Resend posts its JSON event as `application/json`; any other type is a raw message.
fn format_of(headers: &ProviderWebhookHeaders) -> InboundFormat {
    let json = headers
        .get("content-type")
        .unwrap_or_default()
        .split(';')
        .next()
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"));
    match json {
        true => InboundFormat::ProviderJson,
        false => InboundFormat::Raw,
    }
}

#[async_trait]
impl InboundMailWebhook for MailWebhook {
    fn could_verify(
        &self,
        headers: &ProviderWebhookHeaders,
        now_unix: i64,
    ) -> Result<(), ProviderWebhookRefusal> {
        standard_webhooks::could_verify(signed_headers(headers), now_unix).map_err(refused)
    }

    async fn receive(
        &self,
        request: ProviderWebhookRequest,
        now_unix: i64,
    ) -> Result<WebhookMail, ProviderWebhookRefusal> {
        let signed = signed_headers(&request.headers);
        standard_webhooks::verify(&self.secrets, signed, &request.body, now_unix)
            .map_err(refused)?;
        let delivery_id = signed.id.to_owned();
        let format = format_of(&request.headers);
        let email = MailParserInbound
            .parse(format, request.body)
            .await
            .map_err(|unreadable| ProviderWebhookRefusal::Malformed(unreadable.to_string()))?;
        Ok(WebhookMail { delivery_id, email })
    }
}

/// The `webhook-signature` value of a webhook signed with `secret`: for tests and benchmarks
/// that play the provider.
///
/// # Panics
///
/// When `secret` is not `whsec_<base64>` or base64.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> String {
    let secret = Secret::parse(secret).unwrap_or_else(|_| panic!("not a webhook secret"));
    standard_webhooks::sign(&secret, id, timestamp, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_secrets_are_named_by_position_not_shown() {
        let secrets = |list: &[&str]| {
            list.iter()
                .map(|s| SecretString::from(*s))
                .collect::<Vec<_>>()
        };
        let error =
            MailWebhook::new(secrets(&["whsec_AAEC", "whsec_not*base64"])).expect_err("refused");
        assert_eq!(error, InvalidWebhookSecret::Malformed { position: 2 });
        assert!(!error.to_string().contains("not*base64"));
        assert_eq!(
            MailWebhook::new(secrets(&["whsec_"])).err(),
            Some(InvalidWebhookSecret::Malformed { position: 1 })
        );
        assert_eq!(
            MailWebhook::new(secrets(&[])).err(),
            Some(InvalidWebhookSecret::Missing)
        );
    }
}
