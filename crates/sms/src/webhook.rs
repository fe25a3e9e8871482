//! `InboundSmsWebhook` of Twilio's incoming-message webhook: a form signed with
//! `X-Twilio-Signature`, base64 of the HMAC-SHA1, keyed with the account's auth token, of the
//! public URL Twilio posted to followed by each form parameter's name and value, the parameters
//! sorted by name.

use std::fmt;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use hmac::{Hmac, Mac};
use ports::{
    InboundSmsWebhook, ProviderSms, ProviderWebhookHeaders, ProviderWebhookRefusal,
    ProviderWebhookRequest, SmsFlow,
};
use secrecy::{ExposeSecret, SecretString};
use sha1::Sha1;

type HmacSha1 = Hmac<Sha1>;

/// The header Twilio signs its webhooks in.
const SIGNATURE_HEADER: &str = "X-Twilio-Signature";

/// An empty token would let anyone sign: HMAC with an empty key is no secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the Twilio auth token must not be empty")]
pub struct InvalidTwilioAuthToken;

/// Accepts the incoming messages Twilio posted, signed with the account's auth token, to the
/// service's public URL.
pub struct TwilioWebhook {
    /// Keyed once, cloned for each check.
    keyed: HmacSha1,
    /// The service's public base URL (`https://agents.example.com`): Twilio signs the URL it
    /// posted to, which a proxy in front of the service hides from it.
    public_base_url: String,
}

impl fmt::Debug for TwilioWebhook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TwilioWebhook")
            .field("public_base_url", &self.public_base_url)
            .finish_non_exhaustive()
    }
}

impl TwilioWebhook {
    pub fn new(
        auth_token: SecretString,
        public_base_url: String,
    ) -> Result<Self, InvalidTwilioAuthToken> {
        let keyed = keyed_mac(auth_token.expose_secret()).ok_or(InvalidTwilioAuthToken)?;
        Ok(Self {
            keyed,
            public_base_url,
        })
    }

    /// Whether `signature` signs `url` and its form `params`.
    fn signs(&self, url: &str, params: &[(String, String)], signature: &str) -> bool {
        let Ok(candidate) = BASE64.decode(signature) else {
            return false;
        };
        // `verify_slice` compares in constant time: no timing tells how much of a forged
        // signature was right.
        signed(self.keyed.clone(), url, params)
            .verify_slice(&candidate)
            .is_ok()
    }
}

/// The length of an HMAC-SHA1.
const HMAC_SHA1_BYTES: usize = 20;

fn bad_signature() -> ProviderWebhookRefusal {
    ProviderWebhookRefusal::Signature(format!("Invalid {SIGNATURE_HEADER}"))
}

impl InboundSmsWebhook for TwilioWebhook {
    fn could_verify(&self, headers: &ProviderWebhookHeaders) -> Result<(), ProviderWebhookRefusal> {
        let signature = headers.get(SIGNATURE_HEADER).unwrap_or_default();
        match BASE64
            .decode(signature)
            .is_ok_and(|decoded| decoded.len() == HMAC_SHA1_BYTES)
        {
            true => Ok(()),
            false => Err(bad_signature()),
        }
    }

    /// The signature is checked before the form's shape: what a forger sent is not judged further
    /// than that it is not Twilio's.
    fn receive(
        &self,
        request: ProviderWebhookRequest,
    ) -> Result<ProviderSms, ProviderWebhookRefusal> {
        let params: Vec<(String, String)> =
            serde_urlencoded::from_bytes(&request.body).map_err(|error| {
                ProviderWebhookRefusal::Malformed(format!("The body is not a form: {error}"))
            })?;
        let url = format!(
            "{}{}",
            self.public_base_url.trim_end_matches('/'),
            request.path_and_query
        );
        let signature = request.headers.get(SIGNATURE_HEADER).unwrap_or_default();
        if !self.signs(&url, &params, signature) {
            return Err(bad_signature());
        }
        if let Some(refused) = refused_params(&params) {
            return Err(ProviderWebhookRefusal::Malformed(format!(
                "not an SMS webhook of the provider: {refused}"
            )));
        }
        let param = |name: &str| {
            params
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.clone())
                .ok_or_else(|| {
                    ProviderWebhookRefusal::Malformed(format!("the webhook lacks {name}"))
                })
        };
        Ok(ProviderSms {
            provider_message_id: param("MessageSid")?,
            flow: SmsFlow::Inbound,
            from: param("From")?,
            to: param("To")?,
            body: param("Body").unwrap_or_default(),
            received_at: None,
        })
    }
}

/// The parameters of Twilio's incoming-message webhook (Messaging, with WhatsApp's and the
/// Messaging Service's additions); `MediaUrl{n}` and `MediaContentType{n}` come once per medium.
const KNOWN_PARAMS: &[&str] = &[
    "AccountSid",
    "AddOns",
    "ApiVersion",
    "Body",
    "ButtonPayload",
    "ButtonText",
    "ChannelMetadata",
    "Forwarded",
    "FrequentlyForwarded",
    "From",
    "FromCity",
    "FromCountry",
    "FromState",
    "FromZip",
    "Latitude",
    "Longitude",
    "MessageSid",
    "MessageType",
    "MessagingServiceSid",
    "NumMedia",
    "NumSegments",
    "OptOutType",
    "ProfileName",
    "ReferralBody",
    "ReferralCtwaClid",
    "ReferralHeadline",
    "ReferralMediaContentType",
    "ReferralMediaId",
    "ReferralMediaUrl",
    "ReferralNumMedia",
    "ReferralSourceId",
    "ReferralSourceType",
    "ReferralSourceUrl",
    "SmsMessageSid",
    "SmsSid",
    "SmsStatus",
    "To",
    "ToCity",
    "ToCountry",
    "ToState",
    "ToZip",
    "WaId",
];

/// Parameters that come numbered, once per medium of an MMS.
const NUMBERED_PARAMS: &[&str] = &["MediaUrl", "MediaContentType"];

/// Whether `sid` is a Twilio id of `prefixes`: two letters and 32 hexadecimal digits.
fn is_sid(sid: &str, prefixes: &[&str]) -> bool {
    sid.len() == 34
        && prefixes.iter().any(|prefix| sid.starts_with(prefix))
        && sid[2..].bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_known_param(name: &str) -> bool {
    KNOWN_PARAMS.contains(&name)
        || NUMBERED_PARAMS.iter().any(|prefix| {
            name.strip_prefix(prefix).is_some_and(|index| {
                !index.is_empty() && index.len() <= 2 && index.bytes().all(|b| b.is_ascii_digit())
            })
        })
}

/// Why the form is not Twilio's incoming-message webhook, if it is not: every parameter is one
/// Twilio sends, each at most once, and the message and account ids are of their shapes (the
/// message's repeated in `SmsSid` and `SmsMessageSid` the same).
fn refused_params(params: &[(String, String)]) -> Option<String> {
    let mut seen: Vec<&str> = Vec::with_capacity(params.len());
    for (name, _) in params {
        if !is_known_param(name) {
            return Some(format!("the parameter {name:?} is not one Twilio sends"));
        }
        if seen.contains(&name.as_str()) {
            return Some(format!("the parameter {name} is given twice"));
        }
        seen.push(name);
    }
    let value = |wanted: &str| {
        params
            .iter()
            .find(|(name, _)| name == wanted)
            .map(|(_, value)| value.as_str())
    };
    // A form without one is refused by `receive`, which names what is missing.
    let message_sid = value("MessageSid")?;
    if !is_sid(message_sid, &["SM", "MM"]) {
        return Some("MessageSid is not a Twilio message id".to_owned());
    }
    for alias in ["SmsSid", "SmsMessageSid"] {
        if value(alias).is_some_and(|sid| sid != message_sid) {
            return Some(format!("{alias} differs from MessageSid"));
        }
    }
    if value("AccountSid").is_some_and(|sid| !is_sid(sid, &["AC"])) {
        return Some("AccountSid is not a Twilio account id".to_owned());
    }
    None
}

/// The `X-Twilio-Signature` Twilio would send with `params` posted to `url`: for tests that
/// play Twilio.
///
/// # Panics
///
/// When `auth_token` is empty.
pub fn sign(auth_token: &str, url: &str, params: &[(String, String)]) -> String {
    let keyed = keyed_mac(auth_token).expect("the Twilio auth token must not be empty");
    BASE64.encode(signed(keyed, url, params).finalize().into_bytes())
}

fn keyed_mac(auth_token: &str) -> Option<HmacSha1> {
    if auth_token.is_empty() {
        return None;
    }
    HmacSha1::new_from_slice(auth_token.as_bytes()).ok()
}

/// Sorted by name, then by value: Twilio sorts byte-wise (case-sensitive), and a name posted
/// more than once has its values in order too, so the order they arrived in does not matter.
fn signed(mut mac: HmacSha1, url: &str, params: &[(String, String)]) -> HmacSha1 {
    let mut sorted: Vec<&(String, String)> = params.iter().collect();
    sorted.sort_unstable();
    mac.update(url.as_bytes());
    for (name, value) in sorted {
        mac.update(name.as_bytes());
        mac.update(value.as_bytes());
    }
    mac
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_token_is_refused() {
        assert_eq!(
            TwilioWebhook::new(SecretString::from(""), "https://example.com".into()).err(),
            Some(InvalidTwilioAuthToken)
        );
    }

    #[test]
    fn the_token_stays_out_of_debug_output() {
        let webhook = TwilioWebhook::new(
            SecretString::from("token-secret"),
            "https://example.com".into(),
        )
        .expect("valid");
        assert!(!format!("{webhook:?}").contains("token-secret"));
    }

    #[test]
    fn a_signature_that_is_not_base64_is_refused() {
        let webhook = TwilioWebhook::new(SecretString::from("12345"), "https://example.com".into())
            .expect("valid");
        assert!(!webhook.signs("https://example.com/sms", &[], "not base64!"));
        assert!(!webhook.signs("https://example.com/sms", &[], ""));
    }
}
