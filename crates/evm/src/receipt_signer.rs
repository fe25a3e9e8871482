//! `LocalReceiptSigner`: receipts signed with an Ed25519 key configured like the wallet master key
//! (`RECEIPT_SIGNING_KEY`, its 32-byte seed in hex); the keys it replaced stay listed so that the
//! receipts they signed can still be verified.

use alloy_primitives::keccak256;
use ed25519_dalek::{Signer, SigningKey};
use ports::{ReceiptKey, ReceiptSigner};

pub struct LocalReceiptSigner {
    current: SigningKey,
    /// The public keys of the keys it replaced.
    previous: Vec<[u8; 32]>,
}

impl LocalReceiptSigner {
    /// Signs with the key of `seed`; `previous_seeds` are those of the keys it replaced.
    pub fn new(seed: [u8; 32], previous_seeds: &[[u8; 32]]) -> Self {
        Self {
            current: SigningKey::from_bytes(&seed),
            previous: previous_seeds
                .iter()
                .map(|seed| SigningKey::from_bytes(seed).verifying_key().to_bytes())
                .collect(),
        }
    }
}

/// `rk_` and the first 8 bytes of the public key's Keccak-256, in hex.
fn key_id(public_key: &[u8; 32]) -> String {
    format!("rk_{}", hex::encode(&keccak256(public_key)[..8]))
}

impl ReceiptSigner for LocalReceiptSigner {
    fn current_key_id(&self) -> String {
        key_id(&self.current.verifying_key().to_bytes())
    }

    fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.current.sign(message).to_bytes()
    }

    fn keys(&self) -> Vec<ReceiptKey> {
        std::iter::once(self.current.verifying_key().to_bytes())
            .chain(self.previous.iter().copied())
            .map(|public_key| ReceiptKey {
                id: key_id(&public_key),
                public_key,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::{Signature, Verifier, VerifyingKey};

    #[test]
    fn a_signature_verifies_with_the_listed_current_key_and_old_keys_stay_listed() {
        let signer = LocalReceiptSigner::new([7; 32], &[[1; 32]]);
        let keys = signer.keys();
        assert_eq!(keys.len(), 2);
        assert_eq!(keys[0].id, signer.current_key_id());
        assert!(
            keys[0].id.starts_with("rk_") && keys[0].id.len() == 19,
            "{}",
            keys[0].id
        );
        assert_ne!(keys[0].id, keys[1].id);
        let signature = Signature::from_bytes(&signer.sign(b"a receipt"));
        let current = VerifyingKey::from_bytes(&keys[0].public_key).expect("a key");
        assert!(current.verify(b"a receipt", &signature).is_ok());
        assert!(current.verify(b"another receipt", &signature).is_err());
        let old = VerifyingKey::from_bytes(&keys[1].public_key).expect("a key");
        assert!(old.verify(b"a receipt", &signature).is_err());
    }
}
