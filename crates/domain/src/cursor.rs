//! Opaque page cursors: a position (creation time and id of the last item shown), versioned and
//! tagged with an HMAC under a server secret and bound to the list it came from. Anything that
//! does not verify is simply invalid: a caller can neither forge a cursor nor carry one from one
//! agent's list to another's.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use uuid::Uuid;

const VERSION: u8 = 1;
/// Times a cursor may hold: years 1 to 9999, what every store can represent.
const EARLIEST_MICROS: i64 = -62_135_596_800_000_000;
const LATEST_MICROS: i64 = 253_402_300_799_999_999;
const TAG_LEN: usize = 16;
const BODY_LEN: usize = 1 + 8 + 16;

/// Where a page ends: the newest-first keyset position of its last item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CursorPosition {
    /// Microseconds since the Unix epoch (PostgreSQL's timestamp precision).
    pub created_at_micros: i64,
    pub id: Uuid,
}

impl CursorPosition {
    /// The position of a row created at `created_at`, to the microsecond PostgreSQL keeps.
    pub fn of(created_at: time::OffsetDateTime, id: Uuid) -> Self {
        let micros = created_at.unix_timestamp_nanos() / 1000;
        Self {
            created_at_micros: i64::try_from(micros).unwrap_or(i64::MAX),
            id,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Invalid cursor")]
pub struct InvalidCursor;

/// Encodes cursors with one server secret; verifies them with it and, while a secret is being
/// rotated, with the previous one.
#[derive(Clone)]
pub struct CursorCodec {
    secret: Vec<u8>,
    previous: Option<Vec<u8>>,
}

impl std::fmt::Debug for CursorCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CursorCodec(<secret>)")
    }
}

impl CursorCodec {
    pub fn new(secret: &[u8]) -> Self {
        Self {
            secret: secret.to_vec(),
            previous: None,
        }
    }

    /// Also accepts cursors signed with `previous`, so pages handed out before a rotation (or by
    /// an instance not yet restarted) keep working; new cursors are signed with the new secret.
    pub fn also_accepting(self, previous: &[u8]) -> Self {
        Self {
            previous: Some(previous.to_vec()),
            ..self
        }
    }

    /// `scope` names the list (e.g. the resource and the agent), so a cursor is valid only there.
    pub fn encode(&self, scope: &str, position: CursorPosition) -> String {
        let mut bytes = Vec::with_capacity(BODY_LEN + TAG_LEN);
        bytes.push(VERSION);
        bytes.extend_from_slice(&position.created_at_micros.to_be_bytes());
        bytes.extend_from_slice(position.id.as_bytes());
        let tag = self.tag(scope, &bytes);
        bytes.extend_from_slice(&tag[..TAG_LEN]);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// Where the page after `cursor` starts, or the first page's start (`None`) without one.
    pub fn decode_optional(
        &self,
        scope: &str,
        cursor: Option<&str>,
    ) -> Result<Option<CursorPosition>, InvalidCursor> {
        cursor.map(|cursor| self.decode(scope, cursor)).transpose()
    }

    pub fn decode(&self, scope: &str, cursor: &str) -> Result<CursorPosition, InvalidCursor> {
        if cursor.len() > 64 {
            return Err(InvalidCursor);
        }
        let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| InvalidCursor)?;
        if bytes.len() != BODY_LEN + TAG_LEN || bytes[0] != VERSION {
            return Err(InvalidCursor);
        }
        let (body, tag) = bytes.split_at(BODY_LEN);
        let verifies = |secret: &[u8]| {
            let mut mac = Self::mac(secret, scope);
            mac.update(body);
            mac.verify_truncated_left(tag).is_ok()
        };
        if !(verifies(&self.secret) || self.previous.as_deref().is_some_and(verifies)) {
            return Err(InvalidCursor);
        }
        let micros: [u8; 8] = body[1..9].try_into().map_err(|_| InvalidCursor)?;
        let id: [u8; 16] = body[9..].try_into().map_err(|_| InvalidCursor)?;
        // A valid tag on a time no store holds means a forged cursor (the sandbox's secret is
        // public): as invalid as any other.
        let created_at_micros = i64::from_be_bytes(micros);
        if !(EARLIEST_MICROS..=LATEST_MICROS).contains(&created_at_micros) {
            return Err(InvalidCursor);
        }
        Ok(CursorPosition {
            created_at_micros,
            id: Uuid::from_bytes(id),
        })
    }

    fn mac(secret: &[u8], scope: &str) -> Hmac<Sha256> {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes keys of any length");
        mac.update(&(scope.len() as u64).to_be_bytes());
        mac.update(scope.as_bytes());
        mac
    }

    fn tag(&self, scope: &str, body: &[u8]) -> Vec<u8> {
        let mut mac = Self::mac(&self.secret, scope);
        mac.update(body);
        mac.finalize().into_bytes().to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position() -> CursorPosition {
        CursorPosition {
            created_at_micros: 1_795_000_000_123_456,
            id: Uuid::now_v7(),
        }
    }

    #[test]
    fn a_cursor_decodes_to_its_position_in_its_own_scope() {
        let codec = CursorCodec::new(b"secret");
        let position = position();
        let cursor = codec.encode("intents:a", position);
        assert_eq!(codec.decode("intents:a", &cursor), Ok(position));
        assert_eq!(
            codec.decode_optional("intents:a", Some(&cursor)),
            Ok(Some(position))
        );
        assert_eq!(codec.decode_optional("intents:a", None), Ok(None));
        assert!(cursor
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    }

    #[test]
    fn another_scope_or_secret_refuses_it() {
        let codec = CursorCodec::new(b"secret");
        let cursor = codec.encode("intents:a", position());
        assert_eq!(codec.decode("intents:b", &cursor), Err(InvalidCursor));
        assert_eq!(
            CursorCodec::new(b"other").decode("intents:a", &cursor),
            Err(InvalidCursor)
        );
    }

    #[test]
    fn during_a_rotation_cursors_of_the_previous_secret_still_verify() {
        let old = CursorCodec::new(b"old secret");
        let rotating = CursorCodec::new(b"new secret").also_accepting(b"old secret");
        let position = position();
        let issued_before = old.encode("intents:a", position);
        assert_eq!(rotating.decode("intents:a", &issued_before), Ok(position));
        assert_eq!(
            rotating.decode("intents:b", &issued_before),
            Err(InvalidCursor)
        );
        let issued_during = rotating.encode("intents:a", position);
        assert_eq!(
            CursorCodec::new(b"new secret").decode("intents:a", &issued_during),
            Ok(position),
            "new cursors are signed with the new secret"
        );
        assert_eq!(
            CursorCodec::new(b"new secret").decode("intents:a", &issued_before),
            Err(InvalidCursor),
            "once the previous secret is dropped its cursors are invalid"
        );
    }

    #[test]
    fn tampered_or_garbage_cursors_are_invalid() {
        let codec = CursorCodec::new(b"secret");
        let cursor = codec.encode("s", position());
        let mut bytes = URL_SAFE_NO_PAD.decode(&cursor).expect("base64");
        bytes[5] ^= 1;
        let tampered = URL_SAFE_NO_PAD.encode(&bytes);
        for bad in [
            tampered.as_str(),
            "",
            "abc",
            "!!!!",
            &cursor[1..],
            &format!("{cursor}A"),
            &"A".repeat(500),
        ] {
            assert_eq!(codec.decode("s", bad), Err(InvalidCursor), "{bad:?}");
        }
    }

    #[test]
    fn times_from_year_one_to_9999_survive_and_others_are_invalid() {
        let codec = CursorCodec::new(b"k");
        for micros in [EARLIEST_MICROS, -1, 0, LATEST_MICROS] {
            let position = CursorPosition {
                created_at_micros: micros,
                id: Uuid::nil(),
            };
            assert_eq!(
                codec.decode("s", &codec.encode("s", position)),
                Ok(position)
            );
        }
        for micros in [i64::MIN, EARLIEST_MICROS - 1, LATEST_MICROS + 1, i64::MAX] {
            let forged = codec.encode(
                "s",
                CursorPosition {
                    created_at_micros: micros,
                    id: Uuid::nil(),
                },
            );
            assert_eq!(codec.decode("s", &forged), Err(InvalidCursor), "{micros}");
        }
    }
}
