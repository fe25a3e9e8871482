//! EVM adapters of agent-runtime: the key vault that creates wallet keys with alloy, keeps them
//! sealed at rest and signs ERC-20 transfers with them; and the JSON-RPC chain client.

mod key_vault;
mod rpc;
mod transfer;

pub use key_vault::{LocalKeyVault, MasterKey, SealError};
pub use rpc::{InvalidRpcUrl, RpcChain};
