//! `verify` on webhooks signed with `sign`, and on every way one can be wrong.

use standard_webhooks::{sign, verify, Secret, SignatureError, SignedHeaders, TOLERANCE};

const OLD_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const NEW_SECRET: &str = "whsec_bmV3LXNlY3JldC1rZXktMDEyMzQ1Njc4OQ==";
const ID: &str = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W";
const NOW: i64 = 1_767_225_600;
const BODY: &[u8] = br#"{"type":"email.received","data":{"email_id":"e-1"}}"#;

fn secret(text: &str) -> Secret {
    Secret::parse(text).expect("a valid secret")
}

fn secrets(secrets: &[&str]) -> Vec<Secret> {
    secrets.iter().map(|text| secret(text)).collect()
}

fn signed(text: &str, id: &str, timestamp: i64, body: &[u8]) -> String {
    sign(&secret(text), id, timestamp, body)
}

fn check(
    secrets: &[Secret],
    timestamp: &str,
    signatures: &str,
    body: &[u8],
) -> Result<(), SignatureError> {
    verify(
        secrets,
        SignedHeaders {
            id: ID,
            timestamp,
            signatures,
        },
        body,
        NOW,
    )
}

fn now() -> String {
    NOW.to_string()
}

#[test]
fn a_signed_webhook_is_accepted() {
    let signature = signed(OLD_SECRET, ID, NOW, BODY);
    assert!(signature.starts_with("v1,"), "{signature}");

    assert_eq!(
        check(&secrets(&[OLD_SECRET]), &now(), &signature, BODY),
        Ok(())
    );
}

#[test]
fn a_secret_without_its_prefix_is_the_same_secret() {
    let bare = OLD_SECRET.trim_start_matches("whsec_");
    let signature = signed(OLD_SECRET, ID, NOW, BODY);

    assert_eq!(check(&secrets(&[bare]), &now(), &signature, BODY), Ok(()));
}

#[test]
fn a_tampered_body_does_not_match() {
    let signature = signed(OLD_SECRET, ID, NOW, BODY);
    let tampered = br#"{"type":"email.received","data":{"email_id":"e-2"}}"#;

    assert_eq!(
        check(&secrets(&[OLD_SECRET]), &now(), &signature, tampered),
        Err(SignatureError::Mismatch)
    );
}

#[test]
fn a_tampered_signature_does_not_match() {
    let signature = signed(OLD_SECRET, ID, NOW, BODY);
    let (version, encoded) = signature.split_once(',').expect("v1,<base64>");
    let flipped = if encoded.starts_with('A') { "B" } else { "A" };
    let tampered = format!("{version},{flipped}{}", &encoded[1..]);

    assert_eq!(
        check(&secrets(&[OLD_SECRET]), &now(), &tampered, BODY),
        Err(SignatureError::Mismatch)
    );
}

#[test]
fn the_id_and_timestamp_are_signed_too() {
    let secrets = secrets(&[OLD_SECRET]);
    let other_time = signed(OLD_SECRET, ID, NOW - 1, BODY);
    assert_eq!(
        check(&secrets, &now(), &other_time, BODY),
        Err(SignatureError::Mismatch)
    );
    let other_id = signed(OLD_SECRET, "msg_other", NOW, BODY);
    assert_eq!(
        check(&secrets, &now(), &other_id, BODY),
        Err(SignatureError::Mismatch)
    );
}

#[test]
fn timestamps_beyond_five_minutes_either_way_are_stale() {
    let secrets = secrets(&[OLD_SECRET]);
    let tolerance = i64::try_from(TOLERANCE.as_secs()).expect("seconds");
    for offset in [-tolerance - 1, tolerance + 1, -86_400, 86_400] {
        let timestamp = NOW + offset;
        let signature = signed(OLD_SECRET, ID, timestamp, BODY);
        assert_eq!(
            check(&secrets, &timestamp.to_string(), &signature, BODY),
            Err(SignatureError::Stale),
            "{offset} s"
        );
    }
    for offset in [-tolerance, tolerance, 0] {
        let timestamp = NOW + offset;
        let signature = signed(OLD_SECRET, ID, timestamp, BODY);
        assert_eq!(
            check(&secrets, &timestamp.to_string(), &signature, BODY),
            Ok(()),
            "{offset} s"
        );
    }
}

#[test]
fn during_rotation_either_secret_passes_and_a_removed_one_fails() {
    let both = secrets(&[OLD_SECRET, NEW_SECRET]);
    for text in [OLD_SECRET, NEW_SECRET] {
        let signature = signed(text, ID, NOW, BODY);
        assert_eq!(check(&both, &now(), &signature, BODY), Ok(()), "{text}");
    }

    let rotated = secrets(&[NEW_SECRET]);
    let by_old = signed(OLD_SECRET, ID, NOW, BODY);
    assert_eq!(
        check(&rotated, &now(), &by_old, BODY),
        Err(SignatureError::Mismatch)
    );
}

#[test]
fn one_valid_signature_among_several_is_enough() {
    let valid = signed(NEW_SECRET, ID, NOW, BODY);
    let by_old = signed(OLD_SECRET, ID, NOW, BODY);
    let header = format!(
        "v1,Zm9yZ2VkLXNpZ25hdHVyZQ== v2,{} {valid} v1a,{}",
        &by_old[3..],
        &valid[3..]
    );

    assert_eq!(
        check(&secrets(&[NEW_SECRET]), &now(), &header, BODY),
        Ok(())
    );
}

/// A header offering no `v1` signature of HMAC-SHA256's length could never match: it is refused
/// as malformed, before the body is looked at.
#[test]
fn only_v1_signatures_count() {
    let valid = signed(OLD_SECRET, ID, NOW, BODY);
    let as_v2 = format!("v2,{}", &valid[3..]);

    assert_eq!(
        check(&secrets(&[OLD_SECRET]), &now(), &as_v2, BODY),
        Err(SignatureError::Malformed)
    );
}

#[test]
fn malformed_headers_are_told_apart() {
    let secrets = secrets(&[OLD_SECRET]);
    let valid = signed(OLD_SECRET, ID, NOW, BODY);
    for timestamp in ["", "soon", "-1", "1.7e9", "99999999999999999999999"] {
        assert_eq!(
            check(&secrets, timestamp, &valid, BODY),
            Err(SignatureError::Malformed),
            "timestamp {timestamp:?}"
        );
    }
    for signatures in ["", "  ", "v1", &valid[3..]] {
        assert_eq!(
            check(&secrets, &now(), signatures, BODY),
            Err(SignatureError::Malformed),
            "signatures {signatures:?}"
        );
    }
    let without_id = verify(
        &secrets,
        SignedHeaders {
            id: "",
            timestamp: &now(),
            signatures: &valid,
        },
        BODY,
        NOW,
    );
    assert_eq!(without_id, Err(SignatureError::Malformed));
}

#[test]
fn a_signature_that_is_not_base64_is_malformed() {
    assert_eq!(
        check(&secrets(&[OLD_SECRET]), &now(), "v1,%%%not-base64%%%", BODY),
        Err(SignatureError::Malformed)
    );
}
