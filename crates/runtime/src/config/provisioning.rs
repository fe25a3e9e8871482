//! The providers that provision an agent's resources: its wallet's keys and its inbox's domain.

use domain::EvmAddress;
use evm::MasterKey;
use sha2::{Digest, Sha256};

use super::{ConfigError, Environment};

/// USDC on Base mainnet.
pub const DEFAULT_USDC_TOKEN_ADDRESS: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
pub const DEFAULT_EMAIL_DOMAIN: &str = "inbox.agent-runtime.test";

/// Settings of the providers that provision an agent's resources.
pub struct ProvisioningConfig {
    pub wallet_master_key: MasterKey,
    /// The master key being rotated out: wallet keys sealed under it still open until
    /// `agentctl wallets reseal` has sealed them all under `wallet_master_key`.
    pub previous_wallet_master_key: Option<MasterKey>,
    pub usdc_token_address: EvmAddress,
    pub email_domain: String,
    /// The seed of the Ed25519 key receipts are signed with (`RECEIPT_SIGNING_KEY`).
    pub receipt_signing_key: [u8; 32],
    /// The seeds of the keys it replaced (`RECEIPT_SIGNING_KEYS_PREVIOUS`, comma-separated):
    /// still listed, so the receipts they signed stay verifiable.
    pub previous_receipt_signing_keys: Vec<[u8; 32]>,
}

/// Derivation input of the sandbox master key: public on purpose, it guards sandbox money only.
const SANDBOX_MASTER_KEY_SEED: &[u8] = b"agent-runtime sandbox wallet master key v1";
/// Derivation input of the sandbox receipt key: public on purpose, it signs sandbox receipts only.
const SANDBOX_RECEIPT_KEY_SEED: &[u8] = b"agent-runtime sandbox receipt key v1";

/// A 32-byte key written as 64 hex digits.
fn key_seed(name: &'static str, hex_key: &str) -> Result<[u8; 32], ConfigError> {
    hex::decode(hex_key.trim())
        .ok()
        .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
        .ok_or(ConfigError::Invalid {
            name,
            reason: "must be 64 hex digits (32 bytes)".into(),
        })
}

impl ProvisioningConfig {
    pub fn from_env(env: &Environment) -> Result<Self, ConfigError> {
        // Without an RPC endpoint every wallet lives on the sandbox chain, so a well-known key is
        // acceptable there; against a real chain the operator's own key is required.
        let sandbox_chain = env.get("EVM_RPC_URL").is_none();
        let master_key = |name: &'static str, hex_key: &str| {
            MasterKey::from_hex(hex_key).map_err(|error| ConfigError::Invalid {
                name,
                reason: error.to_string(),
            })
        };
        let own_key = env.get("WALLET_MASTER_KEY");
        let wallet_master_key = match own_key {
            Some(hex_key) => master_key("WALLET_MASTER_KEY", hex_key)?,
            None if sandbox_chain => {
                let derived = hex::encode(Sha256::digest(SANDBOX_MASTER_KEY_SEED));
                MasterKey::from_hex(&derived).expect("a SHA-256 digest is 32 bytes")
            }
            None => return Err(ConfigError::Missing("WALLET_MASTER_KEY")),
        };
        let previous_wallet_master_key = match env.get("WALLET_MASTER_KEY_PREVIOUS") {
            None => None,
            Some(_) if own_key.is_none() => {
                return Err(ConfigError::Invalid {
                    name: "WALLET_MASTER_KEY_PREVIOUS",
                    reason: "set only while rotating to a new WALLET_MASTER_KEY".into(),
                })
            }
            Some(hex_key) => Some(master_key("WALLET_MASTER_KEY_PREVIOUS", hex_key)?),
        };
        let usdc = env
            .get("USDC_TOKEN_ADDRESS")
            .unwrap_or(DEFAULT_USDC_TOKEN_ADDRESS);
        let usdc_token_address = EvmAddress::parse(usdc).map_err(|error| ConfigError::Invalid {
            name: "USDC_TOKEN_ADDRESS",
            reason: error.to_string(),
        })?;
        let email_domain = env
            .get("EMAIL_DOMAIN")
            .unwrap_or(DEFAULT_EMAIL_DOMAIN)
            .to_owned();
        domain::EmailAddress::parse(&format!("probe@{email_domain}")).map_err(|error| {
            ConfigError::Invalid {
                name: "EMAIL_DOMAIN",
                reason: error.to_string(),
            }
        })?;
        let receipt_signing_key = match env.get("RECEIPT_SIGNING_KEY") {
            Some(hex_key) => key_seed("RECEIPT_SIGNING_KEY", hex_key)?,
            None if sandbox_chain => Sha256::digest(SANDBOX_RECEIPT_KEY_SEED).into(),
            None => return Err(ConfigError::Missing("RECEIPT_SIGNING_KEY")),
        };
        let previous_receipt_signing_keys = env
            .get("RECEIPT_SIGNING_KEYS_PREVIOUS")
            .map(|keys| {
                keys.split(',')
                    .filter(|key| !key.trim().is_empty())
                    .map(|key| key_seed("RECEIPT_SIGNING_KEYS_PREVIOUS", key))
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?
            .unwrap_or_default();
        Ok(Self {
            wallet_master_key,
            previous_wallet_master_key,
            usdc_token_address,
            email_domain,
            receipt_signing_key,
            previous_receipt_signing_keys,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sandbox_master_key_is_only_used_without_a_real_chain() {
        assert!(ProvisioningConfig::from_env(&Environment::from_pairs([])).is_ok());
        let real_chain = ProvisioningConfig::from_env(&Environment::from_pairs([(
            "EVM_RPC_URL",
            "http://127.0.0.1:8545",
        )]))
        .err();
        assert_eq!(real_chain, Some(ConfigError::Missing("WALLET_MASTER_KEY")));
        let own_key = "ab".repeat(32);
        let own = ProvisioningConfig::from_env(&Environment::from_pairs([(
            "WALLET_MASTER_KEY",
            own_key.as_str(),
        )]))
        .expect("valid");
        assert!(own.previous_wallet_master_key.is_none());
        let bad = ProvisioningConfig::from_env(&Environment::from_pairs([(
            "WALLET_MASTER_KEY",
            "short",
        )]))
        .err();
        assert!(matches!(
            bad,
            Some(ConfigError::Invalid {
                name: "WALLET_MASTER_KEY",
                ..
            })
        ));
    }

    #[test]
    fn a_real_chain_needs_its_own_receipt_key_and_old_keys_are_read_in_a_list() {
        let rpc = ("EVM_RPC_URL", "http://127.0.0.1:8545");
        let master_key = "ab".repeat(32);
        let master = ("WALLET_MASTER_KEY", master_key.as_str());
        let missing = ProvisioningConfig::from_env(&Environment::from_pairs([rpc, master])).err();
        assert_eq!(missing, Some(ConfigError::Missing("RECEIPT_SIGNING_KEY")));
        let (current, old) = (
            "01".repeat(32),
            format!("{},{}", "02".repeat(32), "03".repeat(32)),
        );
        let config = ProvisioningConfig::from_env(&Environment::from_pairs([
            rpc,
            master,
            ("RECEIPT_SIGNING_KEY", current.as_str()),
            ("RECEIPT_SIGNING_KEYS_PREVIOUS", old.as_str()),
        ]))
        .expect("valid");
        assert_eq!(config.receipt_signing_key, [1; 32]);
        assert_eq!(config.previous_receipt_signing_keys, [[2; 32], [3; 32]]);
        let short = ProvisioningConfig::from_env(&Environment::from_pairs([
            rpc,
            master,
            ("RECEIPT_SIGNING_KEY", "abc"),
        ]))
        .err();
        assert!(matches!(
            short,
            Some(ConfigError::Invalid {
                name: "RECEIPT_SIGNING_KEY",
                ..
            })
        ));
        let sandbox = ProvisioningConfig::from_env(&Environment::from_pairs([])).expect("valid");
        assert_ne!(
            sandbox.receipt_signing_key, [0; 32],
            "a sandbox key of its own"
        );
    }
}
