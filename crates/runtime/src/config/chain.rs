//! The chain wallets live on.

use std::time::Duration;

use super::{ConfigError, Environment};

/// Which chain wallets live on: a node's JSON-RPC, or the sandbox chain when none is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainConfig {
    pub rpc_url: Option<String>,
    /// Deadline of every call to the node.
    pub rpc_timeout: Duration,
}

impl ChainConfig {
    /// Whether wallets live on the sandbox chain (no `EVM_RPC_URL`).
    pub fn is_sandbox(&self) -> bool {
        self.rpc_url.is_none()
    }

    /// What the start-up banner says of the chain; never the URL, which may carry an API token.
    pub fn describe(&self) -> &'static str {
        match self.rpc_url {
            Some(_) => "JSON-RPC node (EVM_RPC_URL)",
            None => "sandbox (balances in PostgreSQL)",
        }
    }

    pub fn from_env(env: &Environment) -> Result<Self, ConfigError> {
        let rpc_url = env.get("EVM_RPC_URL").map(str::to_owned);
        if let Some(url) = &rpc_url {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(ConfigError::Invalid {
                    name: "EVM_RPC_URL",
                    reason: "must be an http:// or https:// URL".into(),
                });
            }
        }
        let timeout_ms: u64 = env.parsed("EVM_RPC_TIMEOUT_MS", 5_000)?;
        Ok(Self {
            rpc_url,
            rpc_timeout: Duration::from_millis(timeout_ms.max(1)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::test_env::URL;
    use crate::config::ServerConfig;

    #[test]
    fn a_real_chain_requires_its_secrets_and_a_usable_url() {
        let short =
            ServerConfig::from_env(&Environment::from_pairs([URL, ("CURSOR_SECRET", "short")]))
                .err();
        assert!(matches!(
            short,
            Some(ConfigError::Invalid {
                name: "CURSOR_SECRET",
                ..
            })
        ));
        let rpc = ("EVM_RPC_URL", "http://127.0.0.1:8545");
        let no_cursor = ServerConfig::from_env(&Environment::from_pairs([URL, rpc])).err();
        assert_eq!(no_cursor, Some(ConfigError::Missing("CURSOR_SECRET")));
        let secret = "s".repeat(32);
        let cursor = ("CURSOR_SECRET", secret.as_str());
        let no_master = ServerConfig::from_env(&Environment::from_pairs([URL, rpc, cursor])).err();
        assert_eq!(no_master, Some(ConfigError::Missing("WALLET_MASTER_KEY")));
        let bad =
            ServerConfig::from_env(&Environment::from_pairs([URL, ("EVM_RPC_URL", "ws://x")]))
                .err();
        assert!(matches!(
            bad,
            Some(ConfigError::Invalid {
                name: "EVM_RPC_URL",
                ..
            })
        ));
    }
}
