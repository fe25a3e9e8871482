//! The key that signs receipts, held by its adapter: callers get signatures and public keys.

/// A key receipts are (or were) signed with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptKey {
    /// `rk_` and 16 hex digits of the public key's hash.
    pub id: String,
    /// The 32 raw bytes of the Ed25519 public key.
    pub public_key: [u8; 32],
}

#[cfg_attr(feature = "mock", mockall::automock)]
pub trait ReceiptSigner: Send + Sync {
    /// The id of the key new receipts are signed with.
    fn current_key_id(&self) -> String;

    /// The Ed25519 signature of `message` by the current key.
    fn sign(&self, message: &[u8]) -> [u8; 64];

    /// Every key receipts were signed with, the current one first: old receipts stay verifiable.
    fn keys(&self) -> Vec<ReceiptKey>;
}
