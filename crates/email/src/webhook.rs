//! `WebhookVerifier` per the Standard Webhooks specification, which Resend's webhooks follow:
//! HMAC-SHA256 over `{id}.{timestamp}.{body}` with a shared secret, sent as `v1,<base64>`.

use std::fmt;
use std::time::Duration;

use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use hmac::{Hmac, Mac};
use ports::{SignatureError, WebhookSignature, WebhookVerifier};
use secrecy::{ExposeSecret, SecretString};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// How far a webhook's timestamp may be from the clock, either way: an older one may be a
/// replay of a captured request; a newer one, a clock too far off to judge that by.
pub const WEBHOOK_TOLERANCE: Duration = Duration::from_secs(5 * 60);

const SECRET_PREFIX: &str = "whsec_";
const SIGNATURE_VERSION: &str = "v1";

/// Standard base64, padded or not: secrets and signatures are written both ways.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

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
pub struct StandardWebhookVerifier {
    /// One HMAC keyed with each secret, cloned for each check.
    keyed: Vec<HmacSha256>,
}

impl fmt::Debug for StandardWebhookVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StandardWebhookVerifier")
            .field("secrets", &self.keyed.len())
            .finish()
    }
}

impl StandardWebhookVerifier {
    /// Secrets as the provider shows them, `whsec_<base64>`, or the base64 alone.
    pub fn new(
        secrets: impl IntoIterator<Item = SecretString>,
    ) -> Result<Self, InvalidWebhookSecret> {
        let keyed = secrets
            .into_iter()
            .enumerate()
            .map(|(index, secret)| {
                keyed_mac(secret.expose_secret()).ok_or(InvalidWebhookSecret::Malformed {
                    position: index + 1,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if keyed.is_empty() {
            return Err(InvalidWebhookSecret::Missing);
        }
        Ok(Self { keyed })
    }
}

impl WebhookVerifier for StandardWebhookVerifier {
    fn check_headers<'a>(
        &self,
        signature: WebhookSignature<'a>,
        now_unix: i64,
    ) -> Result<(), SignatureError> {
        candidate_signatures(signature, now_unix).map(drop)
    }

    fn verify<'a>(
        &self,
        signature: WebhookSignature<'a>,
        body: &[u8],
        now_unix: i64,
    ) -> Result<(), SignatureError> {
        let candidates = candidate_signatures(signature, now_unix)?;
        let matches = self.keyed.iter().any(|keyed| {
            let expected = signed(keyed.clone(), signature.id, signature.timestamp, body);
            // `verify_slice` compares in constant time: no timing tells how much of a forged
            // signature was right.
            candidates
                .iter()
                .any(|candidate| expected.clone().verify_slice(candidate).is_ok())
        });
        if matches {
            Ok(())
        } else {
            Err(SignatureError::Mismatch)
        }
    }
}

/// The `webhook-signature` value (`v1,<base64>`) of a webhook signed with `secret`: for tests
/// and benchmarks that play the provider.
///
/// # Panics
///
/// When `secret` is not `whsec_<base64>` or base64.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> String {
    let keyed = keyed_mac(secret).unwrap_or_else(|| panic!("not a webhook secret: {secret:?}"));
    let mac = signed(keyed, id, &timestamp.to_string(), body);
    format!(
        "{SIGNATURE_VERSION},{}",
        BASE64.encode(mac.finalize().into_bytes())
    )
}

/// `None` when the secret is not base64 of a non-empty key.
fn keyed_mac(secret: &str) -> Option<HmacSha256> {
    let encoded = secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret);
    let key = BASE64.decode(encoded).ok().filter(|key| !key.is_empty())?;
    HmacSha256::new_from_slice(&key).ok()
}

/// The HMAC of `{id}.{timestamp}.{body}`, fed piecewise so the body is not copied.
fn signed(mut mac: HmacSha256, id: &str, timestamp: &str, body: &[u8]) -> HmacSha256 {
    for piece in [id.as_bytes(), b".", timestamp.as_bytes(), b".", body] {
        mac.update(piece);
    }
    mac
}

/// Unix seconds written as plain digits.
fn unix_seconds(timestamp: &str) -> Option<i64> {
    let digits = !timestamp.is_empty() && timestamp.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| timestamp.parse().ok()).flatten()
}

/// The longest webhook id taken: providers' ids are a few dozen characters.
const MAX_WEBHOOK_ID_CHARS: usize = 256;

/// The `v1` signatures a webhook's headers offer, once the headers are found well formed and
/// fresh: an id, a timestamp within the tolerance and at least one signature as long as
/// HMAC-SHA256's (none other could ever match).
fn candidate_signatures(
    signature: WebhookSignature<'_>,
    now_unix: i64,
) -> Result<Vec<Vec<u8>>, SignatureError> {
    let id_usable = !signature.id.is_empty()
        && signature.id.len() <= MAX_WEBHOOK_ID_CHARS
        && signature.id.bytes().all(|b| b.is_ascii_graphic());
    if !id_usable {
        return Err(SignatureError::Malformed);
    }
    let timestamp = unix_seconds(signature.timestamp).ok_or(SignatureError::Malformed)?;
    if now_unix.abs_diff(timestamp) > WEBHOOK_TOLERANCE.as_secs() {
        return Err(SignatureError::Stale);
    }
    let candidates: Vec<Vec<u8>> = v1_signatures(signature.signatures)?
        .into_iter()
        .filter(|candidate| candidate.len() == HMAC_SHA256_BYTES)
        .collect();
    if candidates.is_empty() {
        return Err(SignatureError::Malformed);
    }
    Ok(candidates)
}

/// The length of an HMAC-SHA256.
const HMAC_SHA256_BYTES: usize = 32;

/// The decoded `v1` signatures of the header. Other versions are skipped (a later scheme next
/// to this one); a header with no `version,signature` entry at all is malformed.
fn v1_signatures(header: &str) -> Result<Vec<Vec<u8>>, SignatureError> {
    let entries: Vec<(&str, &str)> = header
        .split_ascii_whitespace()
        .filter_map(|entry| entry.split_once(','))
        .collect();
    if entries.is_empty() {
        return Err(SignatureError::Malformed);
    }
    Ok(entries
        .into_iter()
        .filter(|(version, _)| *version == SIGNATURE_VERSION)
        .filter_map(|(_, signature)| BASE64.decode(signature).ok())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_plain_digits() {
        assert_eq!(unix_seconds("1700000000"), Some(1_700_000_000));
        for bad in ["", "-5", "+5", "1.5", " 1", "99999999999999999999", "1e9"] {
            assert_eq!(unix_seconds(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn signature_headers_keep_only_v1_entries() {
        assert_eq!(v1_signatures("v1,AAEC v2,AAEC"), Ok(vec![vec![0, 1, 2]]));
        assert_eq!(v1_signatures("v2,AAEC"), Ok(Vec::new()));
        assert_eq!(v1_signatures("v1,!!!"), Ok(Vec::new()));
        for bad in ["", "   ", "v1", "AAEC v1"] {
            assert_eq!(
                v1_signatures(bad),
                Err(SignatureError::Malformed),
                "{bad:?}"
            );
        }
    }

    // The example the Standard Webhooks specification publishes with its reference libraries.
    #[test]
    fn the_specifications_test_vector_is_signed_and_verified() {
        const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        const ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
        const TIMESTAMP: i64 = 1_614_265_330;
        const BODY: &[u8] = br#"{"test": 2432232314}"#;
        const SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
        assert_eq!(sign(SECRET, ID, TIMESTAMP, BODY), SIGNATURE);
        let verifier =
            StandardWebhookVerifier::new([SecretString::from(SECRET)]).expect("a secret");
        let headers = WebhookSignature {
            id: ID,
            timestamp: "1614265330",
            signatures: SIGNATURE,
        };
        assert_eq!(verifier.verify(headers, BODY, TIMESTAMP), Ok(()));
        assert_eq!(
            verifier.verify(headers, br#"{"test": 2432232315}"#, TIMESTAMP),
            Err(SignatureError::Mismatch)
        );
    }

    #[test]
    fn headers_are_refused_before_the_body_when_no_signature_could_match() {
        let verifier =
            StandardWebhookVerifier::new([SecretString::from("whsec_AAEC")]).expect("a secret");
        let now = 1_700_000_000;
        let fresh = "1700000000";
        let full = format!("v1,{}", BASE64.encode([7_u8; HMAC_SHA256_BYTES]));
        let check = |id: &str, timestamp: &str, signatures: &str| {
            verifier.check_headers(
                WebhookSignature {
                    id,
                    timestamp,
                    signatures,
                },
                now,
            )
        };
        assert_eq!(check("msg_1", fresh, &full), Ok(()));
        let long_id = "m".repeat(MAX_WEBHOOK_ID_CHARS + 1);
        for (id, timestamp, signatures) in [
            ("", fresh, full.as_str()),
            ("msg 1", fresh, &full),
            (long_id.as_str(), fresh, &full),
            ("msg_1", "", &full),
            ("msg_1", fresh, ""),
            ("msg_1", fresh, "v1,AAEC"),
            ("msg_1", fresh, "v2,AAEC"),
        ] {
            assert_eq!(
                check(id, timestamp, signatures),
                Err(SignatureError::Malformed),
                "{id:?} {timestamp:?} {signatures:?}"
            );
        }
        assert_eq!(
            check("msg_1", "1699999000", &full),
            Err(SignatureError::Stale)
        );
    }

    #[test]
    fn secrets_with_or_without_prefix_are_the_same_key() {
        let id = "msg_1";
        assert_eq!(
            sign("whsec_c2VjcmV0LWtleS0xMjM0NTY3OA==", id, 1, b"{}"),
            sign("c2VjcmV0LWtleS0xMjM0NTY3OA", id, 1, b"{}")
        );
    }

    #[test]
    fn bad_secrets_are_named_by_position_not_shown() {
        let secrets = |list: &[&str]| {
            list.iter()
                .map(|s| SecretString::from(*s))
                .collect::<Vec<_>>()
        };
        let error = StandardWebhookVerifier::new(secrets(&["whsec_AAEC", "whsec_not*base64"]))
            .expect_err("refused");
        assert_eq!(error, InvalidWebhookSecret::Malformed { position: 2 });
        assert!(!error.to_string().contains("not*base64"));
        assert_eq!(
            StandardWebhookVerifier::new(secrets(&["whsec_"])).err(),
            Some(InvalidWebhookSecret::Malformed { position: 1 })
        );
        assert_eq!(
            StandardWebhookVerifier::new(secrets(&[])).err(),
            Some(InvalidWebhookSecret::Missing)
        );
    }
}
