//! Agent identity: the bearer key format, its stored hash and the operator-chosen label.

use std::fmt;

use alloy_primitives::U256;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;

use crate::{AgentId, EmailInboxRecord, PhoneNumberRecord, SponsorId, WalletRecord};

const KEY_PREFIX: &str = "ark_";
/// 43 base62 digits hold 256 bits: 62^43 > 2^256.
const KEY_BODY_LEN: usize = 43;
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A well-formed agent key: `ark_` followed by 43 base62 characters.
///
/// The secret never leaves this type except through [`AgentKey::expose`], and `Debug` redacts it,
/// so a key cannot end up in a log line by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct AgentKey(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentKeyError {
    #[error("agent key must start with `{KEY_PREFIX}`")]
    MissingPrefix,
    #[error("agent key must have {KEY_BODY_LEN} characters after the prefix")]
    WrongLength,
    #[error("agent key may only contain base62 characters")]
    InvalidCharacter,
}

impl AgentKey {
    /// Encodes 256 random bits as a key. The caller supplies the randomness so this stays pure.
    pub fn from_random_bytes(bytes: [u8; 32]) -> Self {
        let mut value = U256::from_be_bytes(bytes);
        let base = U256::from(62u8);
        let mut body = [b'0'; KEY_BODY_LEN];
        for slot in body.iter_mut().rev() {
            let (quotient, digit) = value.div_rem(base);
            *slot = BASE62[digit.to::<usize>()];
            value = quotient;
        }
        let body = std::str::from_utf8(&body).expect("base62 alphabet is ASCII");
        Self(format!("{KEY_PREFIX}{body}"))
    }

    /// The key made from `presented` under an idempotency key with `salt` (decision 0095): the
    /// same two give the same key, so a retry with the key that asked answers the same secret,
    /// which the server never stores. Only the holder of `presented` can derive it, and only while
    /// the salt is kept (24 hours); the salt alone, a stolen database, yields nothing.
    pub fn derived(presented: &AgentKey, salt: &[u8; 32]) -> Self {
        let mut mac = Hmac::<Sha256>::new_from_slice(presented.0.as_bytes())
            .expect("HMAC takes a key of any length");
        mac.update(b"agent-runtime: a key made under an idempotency key\0");
        mac.update(salt);
        Self::from_random_bytes(mac.finalize().into_bytes().into())
    }

    pub fn parse(candidate: &str) -> Result<Self, AgentKeyError> {
        let body = candidate
            .strip_prefix(KEY_PREFIX)
            .ok_or(AgentKeyError::MissingPrefix)?;
        if body.len() != KEY_BODY_LEN {
            return Err(AgentKeyError::WrongLength);
        }
        if !body.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(AgentKeyError::InvalidCharacter);
        }
        Ok(Self(candidate.to_owned()))
    }

    pub fn hash(&self) -> AgentKeyHash {
        AgentKeyHash(Sha256::digest(self.0.as_bytes()).into())
    }

    /// The secret itself, for the single moment it is shown to the operator.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for AgentKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AgentKey(<redacted>)")
    }
}

/// SHA-256 of an agent key: the only form in which keys are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AgentKeyHash(pub [u8; 32]);

/// Hex characters of the hash shown to the key's owner as `agent_key_hash`.
const DISPLAYED_HASH_HEX_CHARS: usize = 16;

impl AgentKeyHash {
    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok().map(Self)
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The truncated hash shown as `agent_key_hash`: enough to tell keys apart, useless to forge one.
    pub fn display_prefix(&self) -> String {
        hex::encode(&self.0[..DISPLAYED_HASH_HEX_CHARS / 2])
    }
}

/// An operator-chosen name for an agent: trimmed, 1 to 200 characters, no control characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label(String);

pub const MAX_LABEL_CHARS: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelError {
    #[error("label must not be empty")]
    Empty,
    #[error("label must be at most {MAX_LABEL_CHARS} characters")]
    TooLong,
    #[error("label must not contain control characters")]
    ControlCharacter,
}

impl Label {
    pub fn parse(candidate: &str) -> Result<Self, LabelError> {
        let trimmed = candidate.trim();
        if trimmed.is_empty() {
            return Err(LabelError::Empty);
        }
        if trimmed.chars().count() > MAX_LABEL_CHARS {
            return Err(LabelError::TooLong);
        }
        if trimmed.chars().any(char::is_control) {
            return Err(LabelError::ControlCharacter);
        }
        Ok(Self(trimmed.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An agent as stored: its identity; its keys are records of their own (`keys::AgentKeyRecord`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRecord {
    pub id: AgentId,
    pub sponsor_id: SponsorId,
    pub label: Option<Label>,
    pub is_active: bool,
    pub created_at: OffsetDateTime,
}

/// An agent with every resource provisioned for it (`None` where provisioning was skipped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentProfile {
    pub agent: AgentRecord,
    pub phone_number: Option<PhoneNumberRecord>,
    pub email_inbox: Option<EmailInboxRecord>,
    pub wallet: Option<WalletRecord>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    fn random_key() -> AgentKey {
        let mut bytes = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut bytes);
        AgentKey::from_random_bytes(bytes)
    }

    #[test]
    fn generated_keys_have_the_documented_format_and_parse_back() {
        for _ in 0..200 {
            let key = random_key();
            assert_eq!(key.expose().len(), 4 + 43);
            assert!(key.expose().starts_with("ark_"));
            assert_eq!(AgentKey::parse(key.expose()), Ok(key));
        }
    }

    #[test]
    fn extreme_byte_values_encode_to_fixed_width_keys() {
        let zero = AgentKey::from_random_bytes([0; 32]);
        assert_eq!(zero.expose(), format!("ark_{}", "0".repeat(43)));
        let max = AgentKey::from_random_bytes([0xff; 32]);
        assert_eq!(max.expose().len(), 47);
        assert_ne!(max.expose(), zero.expose());
    }

    #[test]
    fn distinct_inputs_give_distinct_keys() {
        let mut one = [0u8; 32];
        one[31] = 1;
        assert_ne!(
            AgentKey::from_random_bytes(one),
            AgentKey::from_random_bytes([0; 32])
        );
    }

    #[test]
    fn malformed_keys_are_refused_with_the_reason() {
        let body = "a".repeat(43);
        assert_eq!(
            AgentKey::parse(&format!("sk_{body}")),
            Err(AgentKeyError::MissingPrefix)
        );
        assert_eq!(AgentKey::parse(""), Err(AgentKeyError::MissingPrefix));
        assert_eq!(AgentKey::parse("ark_"), Err(AgentKeyError::WrongLength));
        assert_eq!(
            AgentKey::parse(&format!("ark_{}", "a".repeat(44))),
            Err(AgentKeyError::WrongLength)
        );
        assert_eq!(
            AgentKey::parse(&format!("ark_{}-", "a".repeat(42))),
            Err(AgentKeyError::InvalidCharacter)
        );
        assert_eq!(
            AgentKey::parse(&format!("ark_{}é", "a".repeat(41))),
            Err(AgentKeyError::InvalidCharacter)
        );
        assert_eq!(
            AgentKey::parse(&format!("ARK_{body}")),
            Err(AgentKeyError::MissingPrefix)
        );
    }

    #[test]
    fn debug_output_never_shows_the_secret() {
        let key = random_key();
        assert!(!format!("{key:?}").contains(&key.expose()[4..]));
    }

    #[test]
    fn hash_is_sha256_of_the_whole_key_and_its_prefix_is_sixteen_hex_chars() {
        let key = AgentKey::from_random_bytes([0; 32]);
        let expected: [u8; 32] = Sha256::digest(key.expose().as_bytes()).into();
        assert_eq!(key.hash().0, expected);
        let prefix = key.hash().display_prefix();
        assert_eq!(prefix.len(), 16);
        assert_eq!(prefix, hex::encode(&expected[..8]));
    }

    #[test]
    fn a_derived_key_depends_on_the_presented_key_and_the_salt_and_on_nothing_else() {
        let presented = AgentKey::from_random_bytes([1; 32]);
        let other = AgentKey::from_random_bytes([2; 32]);
        let derived = AgentKey::derived(&presented, &[9; 32]);
        assert_eq!(derived, AgentKey::derived(&presented, &[9; 32]));
        assert!(AgentKey::parse(derived.expose()).is_ok());
        assert_ne!(derived, presented);
        assert_ne!(derived, AgentKey::derived(&other, &[9; 32]));
        assert_ne!(derived, AgentKey::derived(&presented, &[8; 32]));
    }

    /// A vector computed outside Rust (Python's hmac): a change to the derivation would answer a
    /// retry across an upgrade a key other than the one made.
    #[test]
    fn a_derived_key_is_hmac_sha256_of_its_label_and_salt_under_the_presented_key() {
        let presented = AgentKey::from_random_bytes([1; 32]);
        assert_eq!(
            presented.expose(),
            "ark_0El6XFXwsUFD8J2vGxsaboW7rZYnQRBP5d9erwRwd29"
        );
        assert_eq!(
            AgentKey::derived(&presented, &[9; 32]).expose(),
            "ark_tgmrfFvdNQLxDyrsAkWPPkqIPVI9YM83F19s1EFWVUY"
        );
    }

    #[test]
    fn hash_from_slice_requires_exactly_32_bytes() {
        assert!(AgentKeyHash::from_slice(&[0u8; 31]).is_none());
        assert!(AgentKeyHash::from_slice(&[0u8; 32]).is_some());
    }

    #[test]
    fn labels_are_trimmed_and_bounded() {
        assert_eq!(
            Label::parse("  bot  ").map(|l| l.as_str().to_owned()),
            Ok("bot".into())
        );
        assert_eq!(Label::parse("   "), Err(LabelError::Empty));
        assert_eq!(Label::parse(&"x".repeat(201)), Err(LabelError::TooLong));
        assert!(Label::parse(&"é".repeat(200)).is_ok());
        assert_eq!(Label::parse("a\nb"), Err(LabelError::ControlCharacter));
    }
}
