//! EVM adapters of agent-runtime: the key vault that creates wallet keys with alloy, keeps them
//! sealed at rest and signs ERC-20 transfers with them; the JSON-RPC chain client; and the
//! Ed25519 key that signs receipts of the money that moved.

mod key_vault;
mod receipt_signer;
mod rpc;
mod transfer;

pub use key_vault::{LocalKeyVault, MasterKey, SealError};
pub use receipt_signer::LocalReceiptSigner;
pub use rpc::{InvalidRpcUrl, RpcChain};
