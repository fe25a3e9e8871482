//! Typed configuration from the environment. Secrets are wrapped so they never print; a missing
//! or malformed setting is an error naming the variable.

mod chain;
mod cursors;
mod database;
mod email;
mod events;
mod intents;
mod provisioning;
mod services;
mod sms;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use domain::TrustedProxies;
use secrecy::SecretString;

pub use chain::ChainConfig;
pub use cursors::CursorSecrets;
pub use database::DatabaseConfig;
pub use email::{AttachmentStore, EmailConfig, EmailProvider};
pub use events::{EventsConfig, WebhookConfig};
pub use intents::IntentConfig;
pub use provisioning::{ProvisioningConfig, DEFAULT_EMAIL_DOMAIN, DEFAULT_USDC_TOKEN_ADDRESS};
pub use services::ServicesConfig;
use services::{console_trusted_proxies, public_url};
pub use sms::{SmsConfig, SmsProviderConfig};

pub const DEFAULT_BIND_ADDR: &str = "127.0.0.1:8080";
const MIN_METRICS_TOKEN_LEN: usize = 16;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("{0} is not set")]
    Missing(&'static str),
    #[error("{name} is invalid: {reason}")]
    Invalid { name: &'static str, reason: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// The environment as a map, so configuration can be built from a test's own variables.
pub struct Environment(HashMap<String, String>);

impl Environment {
    pub fn from_process() -> Self {
        Self(std::env::vars().collect())
    }

    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Self(
            pairs
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
        )
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())
    }

    fn required(&self, name: &'static str) -> Result<&str, ConfigError> {
        self.get(name).ok_or(ConfigError::Missing(name))
    }

    fn parsed<T: std::str::FromStr>(&self, name: &'static str, default: T) -> Result<T, ConfigError>
    where
        T::Err: std::fmt::Display,
    {
        match self.get(name) {
            None => Ok(default),
            Some(raw) => raw.parse().map_err(|error: T::Err| ConfigError::Invalid {
                name,
                reason: error.to_string(),
            }),
        }
    }

    fn flag(&self, name: &'static str, default: bool) -> Result<bool, ConfigError> {
        match self.get(name).map(str::to_ascii_lowercase).as_deref() {
            None => Ok(default),
            Some("1" | "true" | "yes" | "on") => Ok(true),
            Some("0" | "false" | "no" | "off") => Ok(false),
            Some(other) => Err(ConfigError::Invalid {
                name,
                reason: format!("expected true or false, got {other:?}"),
            }),
        }
    }
}

/// Settings of the HTTP server.
pub struct ServerConfig {
    pub database: DatabaseConfig,
    pub services: ServicesConfig,
    /// When set, `/metrics` requires it as a bearer token; required outside the sandbox (a real
    /// chain or provider configured).
    pub metrics_token: Option<SecretString>,
    pub bind_addr: SocketAddr,
    /// `PUBLIC_BASE_URL`, without its trailing slash: the service's URL as its users reach it
    /// (links to the console start with it); `None`: the address the server listens on.
    pub public_base_url: Option<String>,
    /// `MCP_ALLOWED_HOSTS`: the host names `/mcp` answers under; `None`: the host of the public
    /// URL and the loopback names.
    pub mcp_allowed_hosts: Option<Vec<String>>,
    /// `CONSOLE_TRUSTED_PROXIES` and `CONSOLE_TRUSTED_PROXY_HEADER`: the proxies whose header
    /// names the console's client; `None`: the connection's address.
    pub console_trusted_proxies: Option<TrustedProxies>,
    pub log_format: LogFormat,
    pub shutdown_timeout: Duration,
}

impl ServerConfig {
    pub fn from_env(env: &Environment) -> Result<Self, ConfigError> {
        let log_format = match env
            .get("LOG_FORMAT")
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("text") => LogFormat::Text,
            Some("json") => LogFormat::Json,
            Some(other) => {
                return Err(ConfigError::Invalid {
                    name: "LOG_FORMAT",
                    reason: format!("expected text or json, got {other:?}"),
                })
            }
        };
        let metrics_token = match env.get("METRICS_TOKEN") {
            Some(token) if token.len() < MIN_METRICS_TOKEN_LEN => {
                return Err(ConfigError::Invalid {
                    name: "METRICS_TOKEN",
                    reason: format!("must be at least {MIN_METRICS_TOKEN_LEN} characters"),
                })
            }
            token => token.map(|token| SecretString::from(token.to_owned())),
        };
        let config = Self {
            database: DatabaseConfig::from_env(env)?,
            services: ServicesConfig::from_env(env)?,
            metrics_token,
            bind_addr: env.parsed(
                "BIND_ADDR",
                DEFAULT_BIND_ADDR.parse().expect("valid default"),
            )?,
            public_base_url: public_url(env, "PUBLIC_BASE_URL")?,
            mcp_allowed_hosts: env.get("MCP_ALLOWED_HOSTS").map(|list| {
                list.split(',')
                    .map(str::trim)
                    .filter(|name| !name.is_empty())
                    .map(str::to_owned)
                    .collect()
            }),
            console_trusted_proxies: console_trusted_proxies(env)?,
            log_format,
            shutdown_timeout: Duration::from_secs(env.parsed("SHUTDOWN_TIMEOUT_SECS", 30)?),
        };
        if !config.services.is_sandbox() && config.metrics_token.is_none() {
            // What `/metrics` shows (routes, agents' traffic, the pool) is for operators only.
            return Err(ConfigError::Invalid {
                name: "METRICS_TOKEN",
                reason: "must be set once a real chain or provider is configured: /metrics \
                         would be open to anyone"
                    .into(),
            });
        }
        Ok(config)
    }
}

#[cfg(test)]
mod test_env {
    pub(super) const URL: (&str, &str) = ("DATABASE_URL", "postgres://localhost/db");
}

#[cfg(test)]
mod tests {
    use super::test_env::URL;
    use super::*;
    use domain::CursorCodec;

    #[test]
    fn a_missing_database_url_is_named() {
        let error = ServerConfig::from_env(&Environment::from_pairs([])).err();
        assert_eq!(error, Some(ConfigError::Missing("DATABASE_URL")));
        assert_eq!(
            ConfigError::Missing("DATABASE_URL").to_string(),
            "DATABASE_URL is not set"
        );
    }

    #[test]
    fn a_metrics_token_is_required_once_anything_real_is_configured() {
        let without = |extra: &[(&'static str, &'static str)]| {
            let pairs: Vec<(&str, &str)> = [URL].into_iter().chain(extra.iter().copied()).collect();
            ServerConfig::from_env(&Environment::from_pairs(pairs)).err()
        };
        assert_eq!(without(&[]), None, "the sandbox serves /metrics openly");
        for real in [
            &[("EMAIL_PROVIDER", "resend"), ("RESEND_API_KEY", "re_key")][..],
            &[
                ("SMS_PROVIDER", "twilio"),
                ("TWILIO_ACCOUNT_SID", "AC0123456789abcdef0123456789abcdef"),
                ("TWILIO_AUTH_TOKEN", "token"),
                ("SMS_PUBLIC_BASE_URL", "https://agents.example.com"),
            ],
        ] {
            assert!(
                matches!(
                    without(real),
                    Some(ConfigError::Invalid {
                        name: "METRICS_TOKEN",
                        ..
                    })
                ),
                "{real:?}"
            );
        }
    }

    #[test]
    fn defaults_apply_when_only_the_database_is_given() {
        let config = ServerConfig::from_env(&Environment::from_pairs([URL])).expect("valid");
        assert_eq!(config.bind_addr.to_string(), DEFAULT_BIND_ADDR);
        assert_eq!(config.log_format, LogFormat::Text);
        assert!(config.database.migrate_on_start);
        assert_eq!(
            config.services.intents.pending_ttl,
            Duration::from_secs(86_400)
        );
    }

    #[test]
    fn malformed_values_are_named() {
        for (name, value) in [
            ("BIND_ADDR", "nowhere"),
            ("LOG_FORMAT", "xml"),
            ("MIGRATE_ON_START", "maybe"),
            ("DATABASE_POOL_SIZE", "0"),
            ("INTENT_PENDING_TTL_SECS", "-5"),
            ("INTENT_EXPIRY_INTERVAL_SECS", "0"),
            ("EXECUTOR_ENABLED", "sometimes"),
        ] {
            let error =
                ServerConfig::from_env(&Environment::from_pairs([URL, (name, value)])).err();
            assert!(
                matches!(error, Some(ConfigError::Invalid { name: n, .. }) if n == name),
                "{name}"
            );
        }
        let error =
            ServerConfig::from_env(&Environment::from_pairs([("DATABASE_URL", "mysql://x")])).err();
        assert!(matches!(
            error,
            Some(ConfigError::Invalid {
                name: "DATABASE_URL",
                ..
            })
        ));
    }

    #[test]
    fn rotations_take_the_previous_secrets_beside_new_ones() {
        let new_key = "ab".repeat(32);
        let old_key = "cd".repeat(32);
        let rotating = ProvisioningConfig::from_env(&Environment::from_pairs([
            ("WALLET_MASTER_KEY", new_key.as_str()),
            ("WALLET_MASTER_KEY_PREVIOUS", old_key.as_str()),
        ]))
        .expect("valid");
        assert!(rotating.previous_wallet_master_key.is_some());
        for (pairs, name) in [
            (
                vec![("WALLET_MASTER_KEY_PREVIOUS", old_key.as_str())],
                "WALLET_MASTER_KEY_PREVIOUS",
            ),
            (
                vec![
                    ("WALLET_MASTER_KEY", new_key.as_str()),
                    ("WALLET_MASTER_KEY_PREVIOUS", "short"),
                ],
                "WALLET_MASTER_KEY_PREVIOUS",
            ),
        ] {
            let error = ProvisioningConfig::from_env(&Environment::from_pairs(pairs)).err();
            assert!(
                matches!(error, Some(ConfigError::Invalid { name: n, .. }) if n == name),
                "{error:?}"
            );
        }

        let old_secret = "o".repeat(32);
        let new_secret = "n".repeat(32);
        let rotating = ServerConfig::from_env(&Environment::from_pairs([
            URL,
            ("CURSOR_SECRET", new_secret.as_str()),
            ("CURSOR_SECRET_PREVIOUS", old_secret.as_str()),
        ]))
        .expect("valid");
        let position = domain::CursorPosition {
            created_at_micros: 1,
            id: uuid::Uuid::nil(),
        };
        let issued_before = CursorCodec::new(old_secret.as_bytes()).encode("s", position);
        assert_eq!(
            rotating
                .services
                .cursors
                .codec()
                .decode("s", &issued_before),
            Ok(position)
        );
        for pairs in [
            vec![URL, ("CURSOR_SECRET_PREVIOUS", old_secret.as_str())],
            vec![
                URL,
                ("CURSOR_SECRET", new_secret.as_str()),
                ("CURSOR_SECRET_PREVIOUS", "short"),
            ],
        ] {
            let error = ServerConfig::from_env(&Environment::from_pairs(pairs)).err();
            assert!(
                matches!(
                    error,
                    Some(ConfigError::Invalid {
                        name: "CURSOR_SECRET_PREVIOUS",
                        ..
                    })
                ),
                "{error:?}"
            );
        }
    }

    /// `.env.example` as (name, value) pairs; `# NAME=` lines document a variable left unset.
    fn env_example() -> (Vec<(String, String)>, Vec<String>) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.env.example");
        let text = std::fs::read_to_string(path).expect(".env.example");
        let mut set = Vec::new();
        let mut documented = Vec::new();
        for line in text.lines() {
            let (commented, line) = match line.strip_prefix("# ") {
                Some(rest) => (true, rest),
                None => (false, line),
            };
            let Some((name, value)) = line.split_once('=') else {
                continue;
            };
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') {
                continue;
            }
            documented.push(name.to_owned());
            if !commented {
                set.push((name.to_owned(), value.to_owned()));
            }
        }
        (set, documented)
    }

    #[test]
    fn the_public_url_and_the_mcp_hosts_are_read_as_given() {
        let config = |extra: &[(&'static str, &'static str)]| {
            let pairs: Vec<(&str, &str)> = [URL].into_iter().chain(extra.iter().copied()).collect();
            ServerConfig::from_env(&Environment::from_pairs(pairs))
        };
        let unset = config(&[]).expect("valid");
        assert_eq!(
            (unset.public_base_url, unset.mcp_allowed_hosts),
            (None, None)
        );
        let set = config(&[
            ("PUBLIC_BASE_URL", "https://agents.example.com/"),
            ("MCP_ALLOWED_HOSTS", " agents.example.com, localhost ,"),
        ])
        .expect("valid");
        assert_eq!(
            set.public_base_url.as_deref(),
            Some("https://agents.example.com")
        );
        assert_eq!(
            set.mcp_allowed_hosts,
            Some(vec!["agents.example.com".into(), "localhost".into()])
        );
        for wrong in [
            "agents.example.com",
            "ftp://agents.example.com",
            "https://a.example?x=1",
        ] {
            assert!(
                matches!(
                    config(&[("PUBLIC_BASE_URL", wrong)]),
                    Err(ConfigError::Invalid {
                        name: "PUBLIC_BASE_URL",
                        ..
                    })
                ),
                "{wrong}"
            );
        }
    }

    #[test]
    fn the_example_environment_is_valid_and_names_every_variable() {
        let (set, mut documented) = env_example();
        let env = Environment::from_pairs(set.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        assert!(
            ServerConfig::from_env(&env).is_ok(),
            "{:?}",
            ServerConfig::from_env(&env).err()
        );
        // Every file of the configuration, each read above its tests (if it has any).
        let sources = [
            ("chain.rs", include_str!("chain.rs")),
            ("cursors.rs", include_str!("cursors.rs")),
            ("database.rs", include_str!("database.rs")),
            ("email.rs", include_str!("email.rs")),
            ("events.rs", include_str!("events.rs")),
            ("intents.rs", include_str!("intents.rs")),
            ("mod.rs", include_str!("mod.rs")),
            ("provisioning.rs", include_str!("provisioning.rs")),
            ("services.rs", include_str!("services.rs")),
            ("sms.rs", include_str!("sms.rs")),
        ];
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/config");
        let mut files: Vec<String> = std::fs::read_dir(folder)
            .expect("src/config")
            .map(|entry| {
                entry
                    .expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        files.sort();
        assert_eq!(
            files,
            sources.map(|(file, _)| file),
            "every file of the configuration is read"
        );
        let mut read: Vec<String> = sources
            .iter()
            .flat_map(|(_, source)| {
                let configuration = source
                    .split_once("#[cfg(test)]")
                    .map_or(*source, |(configuration, _tests)| configuration);
                configuration.split('"').skip(1).step_by(2)
            })
            .filter(|word| {
                word.len() > 2 && word.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
            })
            .map(str::to_owned)
            .collect();
        read.push("RUST_LOG".to_owned());
        read.sort();
        read.dedup();
        documented.sort();
        assert_eq!(
            documented, read,
            ".env.example documents exactly what the configuration reads"
        );
    }
}
