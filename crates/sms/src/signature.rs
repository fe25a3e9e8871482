//! `SmsWebhookVerifier` for Twilio's `X-Twilio-Signature`: base64 of the HMAC-SHA1, keyed with
//! the account's auth token, of the webhook's URL followed by each form parameter's name and
//! value, the parameters sorted by name.

use std::fmt;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use hmac::{Hmac, Mac};
use ports::SmsWebhookVerifier;
use secrecy::{ExposeSecret, SecretString};
use sha1::Sha1;

type HmacSha1 = Hmac<Sha1>;

/// An empty token would let anyone sign: HMAC with an empty key is no secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the Twilio auth token must not be empty")]
pub struct InvalidTwilioAuthToken;

/// Accepts webhooks that Twilio signed with the account's auth token.
pub struct TwilioSignatureVerifier {
    /// Keyed once, cloned for each check.
    keyed: HmacSha1,
}

impl fmt::Debug for TwilioSignatureVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TwilioSignatureVerifier")
            .finish_non_exhaustive()
    }
}

impl TwilioSignatureVerifier {
    pub fn new(auth_token: SecretString) -> Result<Self, InvalidTwilioAuthToken> {
        let keyed = keyed_mac(auth_token.expose_secret()).ok_or(InvalidTwilioAuthToken)?;
        Ok(Self { keyed })
    }
}

impl SmsWebhookVerifier for TwilioSignatureVerifier {
    fn verify(&self, url: &str, params: &[(String, String)], signature: &str) -> bool {
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
            TwilioSignatureVerifier::new(SecretString::from("")).err(),
            Some(InvalidTwilioAuthToken)
        );
    }

    #[test]
    fn the_token_stays_out_of_debug_output() {
        let verifier =
            TwilioSignatureVerifier::new(SecretString::from("token-secret")).expect("valid");
        assert!(!format!("{verifier:?}").contains("token-secret"));
    }

    #[test]
    fn a_signature_that_is_not_base64_is_refused() {
        let verifier = TwilioSignatureVerifier::new(SecretString::from("12345")).expect("valid");
        assert!(!verifier.verify("https://example.com/sms", &[], "not base64!"));
        assert!(!verifier.verify("https://example.com/sms", &[], ""));
    }
}
