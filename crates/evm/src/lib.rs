//! EVM adapters of agent-runtime: the key vault that creates wallet keys with alloy, keeps them
//! sealed at rest and signs ERC-20 transfers with them.

mod key_vault;
mod transfer;

pub use key_vault::{LocalKeyVault, MasterKey, SealError};
