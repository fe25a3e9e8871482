//! The secrets page cursors are signed with.

use domain::CursorCodec;
use rand::RngCore;
use secrecy::{ExposeSecret, SecretString};
use sha2::{Digest, Sha256};

use super::{ConfigError, Environment};

/// Derivation input of the sandbox cursor secret: cursors are tamper-evident, not confidential,
/// and every query is scoped to the caller, so a well-known secret is acceptable on the sandbox.
const SANDBOX_CURSOR_SECRET_SEED: &[u8] = b"agent-runtime sandbox cursor secret v1";
const MIN_CURSOR_SECRET_LEN: usize = 32;

/// HMAC keys of page cursors, shared by every instance so any of them reads any cursor.
pub struct CursorSecrets {
    current: SecretString,
    /// The secret being rotated out: cursors signed with it still verify.
    previous: Option<SecretString>,
}

impl CursorSecrets {
    pub fn from_env(env: &Environment, sandbox_chain: bool) -> Result<Self, ConfigError> {
        let secret = |name: &'static str| match env.get(name) {
            Some(secret) if secret.len() < MIN_CURSOR_SECRET_LEN => Err(ConfigError::Invalid {
                name,
                reason: format!("must be at least {MIN_CURSOR_SECRET_LEN} characters"),
            }),
            other => Ok(other.map(|secret| SecretString::from(secret.to_owned()))),
        };
        let previous = secret("CURSOR_SECRET_PREVIOUS")?;
        let current = match secret("CURSOR_SECRET")? {
            Some(current) => current,
            None if previous.is_some() => {
                return Err(ConfigError::Invalid {
                    name: "CURSOR_SECRET_PREVIOUS",
                    reason: "set only while rotating to a new CURSOR_SECRET".into(),
                })
            }
            None if sandbox_chain => {
                SecretString::from(hex::encode(Sha256::digest(SANDBOX_CURSOR_SECRET_SEED)))
            }
            None => return Err(ConfigError::Missing("CURSOR_SECRET")),
        };
        Ok(Self { current, previous })
    }

    /// For a process that hands no cursor to anyone (`agentctl`): without `CURSOR_SECRET`, a
    /// secret drawn for this process alone, so an operator's command needs no paging secret.
    pub fn from_env_or_process_only(
        env: &Environment,
        sandbox_chain: bool,
    ) -> Result<Self, ConfigError> {
        match Self::from_env(env, sandbox_chain) {
            Err(ConfigError::Missing("CURSOR_SECRET")) => {
                let mut secret = [0u8; 32];
                rand::rngs::OsRng.fill_bytes(&mut secret);
                Ok(Self {
                    current: SecretString::from(hex::encode(secret)),
                    previous: None,
                })
            }
            read => read,
        }
    }

    pub fn codec(&self) -> CursorCodec {
        let codec = CursorCodec::new(self.current.expose_secret().as_bytes());
        match &self.previous {
            Some(previous) => codec.also_accepting(previous.expose_secret().as_bytes()),
            None => codec,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ServicesConfig;

    #[test]
    fn the_control_plane_needs_no_cursor_secret_on_a_real_chain() {
        let rpc = ("EVM_RPC_URL", "http://127.0.0.1:8545");
        let master_key = "ab".repeat(32);
        let master = ("WALLET_MASTER_KEY", master_key.as_str());
        let receipt_key = "cd".repeat(32);
        let receipts = ("RECEIPT_SIGNING_KEY", receipt_key.as_str());
        let without_master =
            ServicesConfig::for_control_plane(&Environment::from_pairs([rpc])).err();
        assert_eq!(
            without_master,
            Some(ConfigError::Missing("WALLET_MASTER_KEY"))
        );
        let server =
            ServicesConfig::from_env(&Environment::from_pairs([rpc, master, receipts])).err();
        assert_eq!(server, Some(ConfigError::Missing("CURSOR_SECRET")));
        let control_plane =
            ServicesConfig::for_control_plane(&Environment::from_pairs([rpc, master, receipts]))
                .expect("no cursor secret needed");
        let other =
            ServicesConfig::for_control_plane(&Environment::from_pairs([rpc, master, receipts]))
                .expect("no cursor secret needed");
        assert_ne!(
            control_plane.cursors.current.expose_secret(),
            other.cursors.current.expose_secret(),
            "each process draws its own"
        );
        let short = ServicesConfig::for_control_plane(&Environment::from_pairs([
            rpc,
            master,
            ("CURSOR_SECRET", "short"),
        ]))
        .err();
        assert!(matches!(
            short,
            Some(ConfigError::Invalid {
                name: "CURSOR_SECRET",
                ..
            })
        ));
    }
}
