//! The Standard Webhooks signature scheme (<https://www.standardwebhooks.com>), one module for
//! both sides: `verify` for the webhooks providers send us (Resend's inbound mail), `sign` for
//! those we send. A webhook carries its id, its Unix timestamp and its signatures in three
//! headers; each signature is `v1,<base64>` of the HMAC-SHA256, keyed with the shared secret, of
//! `{id}.{timestamp}.{payload}`.

use std::fmt;
use std::time::Duration;

use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// The header carrying the webhook's id: the same on every redelivery of one event.
pub const ID_HEADER: &str = "webhook-id";
/// The header carrying the Unix seconds when the webhook was signed.
pub const TIMESTAMP_HEADER: &str = "webhook-timestamp";
/// The header carrying the space-separated `v1,<base64>` signatures.
pub const SIGNATURE_HEADER: &str = "webhook-signature";

/// How far a webhook's timestamp may be from the clock, either way: an older one may be a
/// replay of a captured request; a newer one, a clock too far off to judge that by.
pub const TOLERANCE: Duration = Duration::from_secs(5 * 60);

const SECRET_PREFIX: &str = "whsec_";
const SIGNATURE_VERSION: &str = "v1";

/// The length of an HMAC-SHA256.
const HMAC_SHA256_BYTES: usize = 32;

/// The longest webhook id taken: providers' ids are a few dozen characters.
const MAX_ID_CHARS: usize = 256;

/// Standard base64, padded or not: secrets and signatures are written both ways.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The secret is never shown, not even in part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a webhook secret is `whsec_` (optional) and base64 of a non-empty key")]
pub struct InvalidSecret;

/// A shared secret, keyed once and cloned for each signature.
#[derive(Clone)]
pub struct Secret {
    keyed: HmacSha256,
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Secret").finish_non_exhaustive()
    }
}

impl Secret {
    /// The text of a new secret made of `random` bytes, `whsec_<base64>`, as it is shown once.
    pub fn text_of(random: [u8; 32]) -> String {
        format!("{SECRET_PREFIX}{}", BASE64.encode(random))
    }

    /// A secret as providers show it, `whsec_<base64>`, or the base64 alone.
    pub fn parse(text: &str) -> Result<Self, InvalidSecret> {
        let encoded = text.strip_prefix(SECRET_PREFIX).unwrap_or(text);
        let key = BASE64
            .decode(encoded)
            .ok()
            .filter(|key| !key.is_empty())
            .ok_or(InvalidSecret)?;
        let keyed = HmacSha256::new_from_slice(&key).map_err(|_| InvalidSecret)?;
        Ok(Self { keyed })
    }

    /// The HMAC of `{id}.{timestamp}.{payload}`, fed piecewise so the payload is not copied.
    fn mac(&self, id: &str, timestamp: &str, payload: &[u8]) -> HmacSha256 {
        let mut mac = self.keyed.clone();
        for piece in [id.as_bytes(), b".", timestamp.as_bytes(), b".", payload] {
            mac.update(piece);
        }
        mac
    }
}

/// The values of a webhook's three signature headers, as received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignedHeaders<'a> {
    /// Of `ID_HEADER`.
    pub id: &'a str,
    /// Of `TIMESTAMP_HEADER`.
    pub timestamp: &'a str,
    /// Of `SIGNATURE_HEADER`.
    pub signatures: &'a str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("the webhook signature headers are missing or malformed")]
    Malformed,
    #[error("the webhook timestamp is outside the tolerance")]
    Stale,
    #[error("no webhook signature matches")]
    Mismatch,
}

/// The value of `SIGNATURE_HEADER` for a webhook `id` with `payload`, signed at `timestamp`.
pub fn sign(secret: &Secret, id: &str, timestamp: i64, payload: &[u8]) -> String {
    let mac = secret.mac(id, &timestamp.to_string(), payload);
    format!(
        "{SIGNATURE_VERSION},{}",
        BASE64.encode(mac.finalize().into_bytes())
    )
}

/// What can be told before the payload is read: the headers are there, well formed, carry a
/// signature of HMAC-SHA256's length and a timestamp within `TOLERANCE` of `now_unix`. Refusing
/// here keeps a sender without the secret from making the receiver read and hold a payload.
pub fn could_verify(headers: SignedHeaders<'_>, now_unix: i64) -> Result<(), SignatureError> {
    candidate_signatures(headers, now_unix).map(drop)
}

/// Whether any of the headers' `v1` signatures is the signature of `payload` by any of
/// `secrets` (several while a secret is rotated), with a timestamp within `TOLERANCE`.
pub fn verify(
    secrets: &[Secret],
    headers: SignedHeaders<'_>,
    payload: &[u8],
    now_unix: i64,
) -> Result<(), SignatureError> {
    let candidates = candidate_signatures(headers, now_unix)?;
    let matches = secrets.iter().any(|secret| {
        let expected = secret.mac(headers.id, headers.timestamp, payload);
        // `verify_slice` compares in constant time: no timing tells how much of a forged
        // signature was right.
        candidates
            .iter()
            .any(|candidate| expected.clone().verify_slice(candidate).is_ok())
    });
    match matches {
        true => Ok(()),
        false => Err(SignatureError::Mismatch),
    }
}

/// Unix seconds written as plain digits.
fn unix_seconds(timestamp: &str) -> Option<i64> {
    let digits = !timestamp.is_empty() && timestamp.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| timestamp.parse().ok()).flatten()
}

/// The `v1` signatures the headers offer, once they are found well formed and fresh: an id, a
/// timestamp within the tolerance and at least one signature as long as HMAC-SHA256's (none
/// other could ever match).
fn candidate_signatures(
    headers: SignedHeaders<'_>,
    now_unix: i64,
) -> Result<Vec<Vec<u8>>, SignatureError> {
    let id_usable = !headers.id.is_empty()
        && headers.id.len() <= MAX_ID_CHARS
        && headers.id.bytes().all(|b| b.is_ascii_graphic());
    if !id_usable {
        return Err(SignatureError::Malformed);
    }
    let timestamp = unix_seconds(headers.timestamp).ok_or(SignatureError::Malformed)?;
    if now_unix.abs_diff(timestamp) > TOLERANCE.as_secs() {
        return Err(SignatureError::Stale);
    }
    let candidates: Vec<Vec<u8>> = v1_signatures(headers.signatures)?
        .into_iter()
        .filter(|candidate| candidate.len() == HMAC_SHA256_BYTES)
        .collect();
    if candidates.is_empty() {
        return Err(SignatureError::Malformed);
    }
    Ok(candidates)
}

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

    fn secret(text: &str) -> Secret {
        Secret::parse(text).expect("a secret")
    }

    /// The example the reference libraries of the specification test their signing with
    /// (github.com/standard-webhooks/standard-webhooks, `libraries/*`, "sign"): the signature is
    /// the published one, written out, not one this module computed.
    #[test]
    fn the_specifications_test_vector_is_signed_and_verified() {
        let published = [secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")];
        let id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
        let timestamp = 1_614_265_330;
        let payload = br#"{"test": 2432232314}"#;
        let signature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

        assert_eq!(sign(&published[0], id, timestamp, payload), signature);
        let headers = SignedHeaders {
            id,
            timestamp: "1614265330",
            signatures: signature,
        };
        assert_eq!(verify(&published, headers, payload, timestamp), Ok(()));
        assert_eq!(
            verify(&published, headers, br#"{"test": 2432232315}"#, timestamp),
            Err(SignatureError::Mismatch)
        );
    }

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

    #[test]
    fn headers_are_refused_before_the_payload_when_no_signature_could_match() {
        let now = 1_700_000_000;
        let fresh = "1700000000";
        let full = format!("v1,{}", BASE64.encode([7_u8; HMAC_SHA256_BYTES]));
        let check = |id: &str, timestamp: &str, signatures: &str| {
            could_verify(
                SignedHeaders {
                    id,
                    timestamp,
                    signatures,
                },
                now,
            )
        };
        assert_eq!(check("msg_1", fresh, &full), Ok(()));
        let long_id = "m".repeat(MAX_ID_CHARS + 1);
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
            sign(&secret("whsec_c2VjcmV0LWtleS0xMjM0NTY3OA=="), id, 1, b"{}"),
            sign(&secret("c2VjcmV0LWtleS0xMjM0NTY3OA"), id, 1, b"{}")
        );
    }

    #[test]
    fn a_secret_that_is_not_base64_of_a_key_is_refused_and_never_shown() {
        for bad in ["whsec_", "", "whsec_not*base64", "not*base64"] {
            assert_eq!(Secret::parse(bad).err(), Some(InvalidSecret), "{bad:?}");
        }
        assert!(!format!("{:?}", secret("whsec_c2VjcmV0")).contains("c2VjcmV0"));
    }
}
