//! What a provider's inbound webhook is before any adapter reads it: the request as it arrived,
//! in no transport's types, and why an adapter refuses it. Each channel's port (`InboundMailWebhook`,
//! `InboundSmsWebhook`) speaks its provider's protocol (signature scheme, header names, URL
//! signed, field names) inside its adapter.

/// A request's headers, names compared without regard to case as HTTP does. Values are text:
/// the transport leaves out one that is not, as no provider's header is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderWebhookHeaders(Vec<(String, String)>);

impl ProviderWebhookHeaders {
    pub fn new(headers: impl IntoIterator<Item = (String, String)>) -> Self {
        Self(headers.into_iter().collect())
    }

    /// The first value of the header `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// An inbound webhook as the transport received it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderWebhookRequest {
    /// The path it was posted to, with its query (`/webhooks/sms/twilio?x=1`).
    pub path_and_query: String,
    pub headers: ProviderWebhookHeaders,
    pub body: Vec<u8>,
}

/// Why an adapter refused a webhook. The text is what the sender is told: written by the
/// adapter, in its provider's terms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderWebhookRefusal {
    /// Not shown to come from the provider: no signature, one that could never verify, a stale
    /// one or one that does not match.
    #[error("{0}")]
    Signature(String),
    /// Not a message the provider sends, or one that cannot be read.
    #[error("{0}")]
    Malformed(String),
}
