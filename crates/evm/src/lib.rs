//! EVM adapters of agent-runtime. For now: the key vault that creates wallet keys with alloy and
//! keeps them sealed at rest.

mod key_vault;

pub use key_vault::{LocalKeyVault, MasterKey, SealError};
