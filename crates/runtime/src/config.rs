//! Typed configuration from the environment. Secrets are wrapped so they never print; a missing
//! or malformed setting is an error naming the variable.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use api_types::TWILIO_SMS_WEBHOOK_PATH;
use app::{ExecutorSettings, LongLivedCaps, QueueSettings, SendLimits, SendRates};
use domain::{
    CursorCodec, DeliveryRetry, EvmAddress, ProxyNetwork, RateLimit, RetryOffsets, RetryRule,
    RetrySchedule, Targets, TrustedProxies, TrustedProxiesError,
};
use email::{InvalidSmtpSettings, MailWebhook, ResendSettings, SmtpSecurity, SmtpSettings};
use evm::MasterKey;
use postgres_store::{Connector, PoolSettings};
use rand::RngCore;
use s3_store::S3AttachmentStore;
use secrecy::{ExposeSecret, SecretString};
use sha2::{Digest, Sha256};
use sms::{InvalidTwilioSettings, TwilioSettings};
use url::Url;

pub const DEFAULT_BIND_ADDR: &str = "127.0.0.1:8080";
/// USDC on Base mainnet.
pub const DEFAULT_USDC_TOKEN_ADDRESS: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
pub const DEFAULT_EMAIL_DOMAIN: &str = "inbox.agent-runtime.test";

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

/// Settings every process that touches the database needs.
pub struct DatabaseConfig {
    /// `DATABASE_URL` read, with the files its TLS settings name.
    pub connector: Connector,
    pub pool: PoolSettings,
    pub migrate_on_start: bool,
}

impl DatabaseConfig {
    pub fn from_env(env: &Environment) -> Result<Self, ConfigError> {
        let url = env.required("DATABASE_URL")?;
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(ConfigError::Invalid {
                name: "DATABASE_URL",
                reason: "must be a postgres:// or postgresql:// URL".into(),
            });
        }
        let connector = Connector::from_url(url).map_err(|error| ConfigError::Invalid {
            name: "DATABASE_URL",
            reason: error.to_string(),
        })?;
        let defaults = PoolSettings::default();
        let millis = |name: &'static str, default: Duration| -> Result<Duration, ConfigError> {
            let default = u64::try_from(default.as_millis()).unwrap_or(u64::MAX);
            Ok(Duration::from_millis(
                env.parsed::<u64>(name, default)?.max(1),
            ))
        };
        let max_size: usize = env.parsed("DATABASE_POOL_SIZE", defaults.max_size)?;
        if max_size == 0 {
            return Err(ConfigError::Invalid {
                name: "DATABASE_POOL_SIZE",
                reason: "must be at least 1".into(),
            });
        }
        let timeout_secs: u64 =
            env.parsed("DATABASE_TIMEOUT_SECS", defaults.acquire_timeout.as_secs())?;
        Ok(Self {
            connector,
            pool: PoolSettings {
                max_size,
                acquire_timeout: Duration::from_secs(timeout_secs.max(1)),
                statement_timeout: millis(
                    "DATABASE_STATEMENT_TIMEOUT_MS",
                    defaults.statement_timeout,
                )?,
                lock_timeout: millis("DATABASE_LOCK_TIMEOUT_MS", defaults.lock_timeout)?,
                shards: defaults.shards,
                max_connection_age: defaults.max_connection_age,
            },
            migrate_on_start: env.flag("MIGRATE_ON_START", true)?,
        })
    }
}

/// Settings of the providers that provision an agent's resources.
pub struct ProvisioningConfig {
    pub wallet_master_key: MasterKey,
    /// The master key being rotated out: wallet keys sealed under it still open until
    /// `agentctl wallets reseal` has sealed them all under `wallet_master_key`.
    pub previous_wallet_master_key: Option<MasterKey>,
    pub usdc_token_address: EvmAddress,
    pub email_domain: String,
}

/// Derivation input of the sandbox master key: public on purpose, it guards sandbox money only.
const SANDBOX_MASTER_KEY_SEED: &[u8] = b"agent-runtime sandbox wallet master key v1";

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
        Ok(Self {
            wallet_master_key,
            previous_wallet_master_key,
            usdc_token_address,
            email_domain,
        })
    }
}

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

/// How long a transfer intent may wait for an operator before it expires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntentConfig {
    pub pending_ttl: Duration,
    /// How often the server looks for intents to expire.
    pub expiry_interval: Duration,
    /// How often the executor looks for confirmed intents and follows submitted ones.
    pub executor_interval: Duration,
    /// Whether this instance executes confirmed intents at all.
    pub executor_enabled: bool,
    /// How the executor follows what it sent.
    pub execution: ExecutorSettings,
    /// How much one agent may send.
    pub send_limits: SendLimits,
}

impl IntentConfig {
    pub fn from_env(env: &Environment) -> Result<Self, ConfigError> {
        let ttl: u64 = env.parsed("INTENT_PENDING_TTL_SECS", 24 * 60 * 60)?;
        let interval: u64 = env.parsed("INTENT_EXPIRY_INTERVAL_SECS", 60)?;
        if interval == 0 {
            return Err(ConfigError::Invalid {
                name: "INTENT_EXPIRY_INTERVAL_SECS",
                reason: "must be at least 1".into(),
            });
        }
        let executor_millis: u64 = env.parsed("EXECUTOR_INTERVAL_MS", 500)?;
        let defaults = ExecutorSettings::default();
        let seconds = |name: &'static str, default: Duration| -> Result<Duration, ConfigError> {
            Ok(Duration::from_secs(env.parsed(name, default.as_secs())?))
        };
        let execution = ExecutorSettings {
            retry: RetrySchedule {
                base: Duration::from_millis(
                    env.parsed::<u64>(
                        "EXECUTOR_RETRY_BASE_MS",
                        u64::try_from(defaults.retry.base.as_millis()).unwrap_or(u64::MAX),
                    )?
                    .max(1),
                ),
                cap: seconds("EXECUTOR_RETRY_CAP_SECS", defaults.retry.cap)?,
            },
            replace_after: seconds("EXECUTOR_REPLACE_AFTER_SECS", defaults.replace_after)?,
            nonce_grace: seconds("EXECUTOR_NONCE_GRACE_SECS", defaults.nonce_grace)?,
            lease: seconds("EXECUTOR_LEASE_SECS", defaults.lease)?.max(Duration::from_secs(1)),
            ..defaults
        };
        let per_minute: u32 = env.parsed("SEND_RATE_PER_MINUTE", 600)?;
        let burst: u32 = env.parsed("SEND_BURST", 60)?;
        let concurrent_per_agent: usize = env.parsed("SEND_CONCURRENCY_PER_AGENT", 4)?;
        if burst == 0 || concurrent_per_agent == 0 {
            return Err(ConfigError::Invalid {
                name: if burst == 0 {
                    "SEND_BURST"
                } else {
                    "SEND_CONCURRENCY_PER_AGENT"
                },
                reason: "must be at least 1".into(),
            });
        }
        Ok(Self {
            pending_ttl: Duration::from_secs(ttl),
            expiry_interval: Duration::from_secs(interval),
            executor_interval: Duration::from_millis(executor_millis.max(10)),
            executor_enabled: env.flag("EXECUTOR_ENABLED", true)?,
            execution,
            send_limits: SendLimits {
                rate: RateLimit { per_minute, burst },
                concurrent_per_agent,
            },
        })
    }
}

/// Which provider delivers outbound mail, with its validated settings.
#[derive(Debug, Clone)]
pub enum EmailProvider {
    /// Kept in PostgreSQL, readable with `agentctl sandbox outbox`: the default of `make run`.
    Sandbox,
    Smtp(SmtpSettings),
    Resend(ResendSettings),
}

/// Settings of email: the provider, the inbound webhook's secrets, the sponsor-wide send rate,
/// and how the outbox retries.
pub struct EmailConfig {
    pub provider: EmailProvider,
    /// The Standard Webhooks secrets inbound mail is signed with; several during a rotation.
    /// Empty: the inbound webhook refuses everything.
    pub webhook_secrets: Vec<SecretString>,
    /// The send rate every sponsor's agents share.
    /// Sends per sponsor, and each agent's share of them.
    pub send_rates: SendRates,
    /// Whether this instance hands queued mail to the provider at all.
    pub outbox_enabled: bool,
    /// How often the outbox looks for due mail.
    pub outbox_interval: Duration,
    pub outbox: QueueSettings,
    /// The largest inbound attachment whose bytes are kept (`EMAIL_ATTACHMENT_MAX_BYTES`).
    pub attachment_max_bytes: u64,
    /// Where the bytes of kept attachments live (`EMAIL_ATTACHMENT_STORE`).
    pub attachment_store: AttachmentStore,
    /// The longest an inbox search's statements may run (`EMAIL_SEARCH_TIMEOUT_MS`, 3000).
    pub search_timeout: Duration,
}

/// Where the bytes of kept attachments live.
#[derive(Clone)]
pub enum AttachmentStore {
    /// In PostgreSQL, in pieces beside their message: the default, nothing to configure.
    Database,
    /// In S3 or an S3-compatible store, reached with the usual AWS variables.
    S3 {
        store: Arc<S3AttachmentStore>,
        /// How long bytes put ahead of their message may wait for it before the sweep takes
        /// them for a message never stored (`EMAIL_ATTACHMENT_SWEEP_AFTER_SECS`).
        sweep_after: Duration,
        /// How often the sweep looks (`EMAIL_ATTACHMENT_SWEEP_INTERVAL_SECS`).
        sweep_interval: Duration,
    },
}

impl AttachmentStore {
    fn from_env(
        env: &Environment,
        seconds: impl Fn(&'static str, u64) -> Result<Duration, ConfigError>,
    ) -> Result<Self, ConfigError> {
        let Some(location) = env
            .get("EMAIL_ATTACHMENT_STORE")
            .filter(|l| *l != "postgres")
        else {
            return Ok(Self::Database);
        };
        let store =
            S3AttachmentStore::from_env(location).map_err(|error| ConfigError::Invalid {
                name: "EMAIL_ATTACHMENT_STORE",
                reason: error.to_string(),
            })?;
        Ok(Self::S3 {
            store: Arc::new(store),
            sweep_after: seconds("EMAIL_ATTACHMENT_SWEEP_AFTER_SECS", 3_600)?,
            sweep_interval: seconds("EMAIL_ATTACHMENT_SWEEP_INTERVAL_SECS", 60)?,
        })
    }
}

impl EmailConfig {
    pub fn from_env(env: &Environment) -> Result<Self, ConfigError> {
        let millis = |name: &'static str, default: u64| -> Result<Duration, ConfigError> {
            Ok(Duration::from_millis(
                env.parsed::<u64>(name, default)?.max(1),
            ))
        };
        let provider = match env.get("EMAIL_PROVIDER").unwrap_or("sandbox") {
            "sandbox" => EmailProvider::Sandbox,
            "smtp" => EmailProvider::Smtp(smtp_settings(
                env,
                millis("EMAIL_SMTP_TIMEOUT_MS", 30_000)?,
            )?),
            "resend" => {
                let invalid = |reason: String| ConfigError::Invalid {
                    name: "RESEND_API_KEY",
                    reason,
                };
                let key = SecretString::from(env.required("RESEND_API_KEY")?.to_owned());
                let settings = ResendSettings::new(key, millis("RESEND_TIMEOUT_MS", 30_000)?)
                    .map_err(|error| invalid(error.to_string()))?;
                let settings = match env.get("RESEND_BASE_URL") {
                    None => settings,
                    Some(url) => {
                        settings
                            .with_base_url(url)
                            .map_err(|error| ConfigError::Invalid {
                                name: "RESEND_BASE_URL",
                                reason: error.to_string(),
                            })?
                    }
                };
                EmailProvider::Resend(settings)
            }
            other => {
                return Err(ConfigError::Invalid {
                    name: "EMAIL_PROVIDER",
                    reason: format!("expected sandbox, smtp or resend, got {other:?}"),
                })
            }
        };
        let webhook_secrets: Vec<SecretString> = env
            .get("EMAIL_WEBHOOK_SECRETS")
            .unwrap_or_default()
            .split([',', ' '])
            .filter(|secret| !secret.is_empty())
            .map(|secret| SecretString::from(secret.to_owned()))
            .collect();
        if !webhook_secrets.is_empty() {
            MailWebhook::new(webhook_secrets.iter().cloned()).map_err(|error| {
                ConfigError::Invalid {
                    name: "EMAIL_WEBHOOK_SECRETS",
                    reason: error.to_string(),
                }
            })?;
        }
        let rate = |per_minute: (&'static str, u32), burst: (&'static str, u32)| {
            let limit = RateLimit {
                per_minute: env.parsed(per_minute.0, per_minute.1)?,
                burst: env.parsed(burst.0, burst.1)?,
            };
            if limit.burst == 0 {
                return Err(ConfigError::Invalid {
                    name: burst.0,
                    reason: "must be at least 1".into(),
                });
            }
            Ok(limit)
        };
        let send_rates = SendRates {
            sponsor: rate(
                ("EMAIL_SEND_RATE_PER_MINUTE", 120),
                ("EMAIL_SEND_BURST", 20),
            )?,
            agent: rate(
                ("EMAIL_AGENT_SEND_RATE_PER_MINUTE", 60),
                ("EMAIL_AGENT_SEND_BURST", 10),
            )?,
        };
        let seconds = |name: &'static str, default: u64| -> Result<Duration, ConfigError> {
            Ok(Duration::from_secs(
                env.parsed::<u64>(name, default)?.max(1),
            ))
        };
        Ok(Self {
            provider,
            webhook_secrets,
            send_rates,
            outbox_enabled: env.flag("EMAIL_OUTBOX_ENABLED", true)?,
            outbox_interval: millis("EMAIL_OUTBOX_INTERVAL_MS", 500)?,
            outbox: QueueSettings {
                lease: seconds("EMAIL_OUTBOX_LEASE_SECS", 120)?,
                retry: RetryRule::Doubling(DeliveryRetry {
                    schedule: RetrySchedule {
                        base: millis("EMAIL_RETRY_BASE_MS", 2_000)?,
                        cap: seconds("EMAIL_RETRY_CAP_SECS", 300)?,
                    },
                    give_up_after: seconds("EMAIL_GIVE_UP_AFTER_SECS", 3 * 24 * 60 * 60)?,
                }),
                places_per_owner: None,
            },
            attachment_max_bytes: env.parsed(
                "EMAIL_ATTACHMENT_MAX_BYTES",
                domain::DEFAULT_ATTACHMENT_MAX_BYTES,
            )?,
            attachment_store: AttachmentStore::from_env(env, seconds)?,
            search_timeout: millis("EMAIL_SEARCH_TIMEOUT_MS", 3_000)?,
        })
    }

    /// What the start-up banner says of the provider; never a credential.
    pub fn describe(&self) -> &'static str {
        match self.provider {
            EmailProvider::Sandbox => "sandbox (agentctl sandbox outbox)",
            EmailProvider::Smtp(_) => "SMTP relay (EMAIL_SMTP_HOST)",
            EmailProvider::Resend(_) => "Resend API",
        }
    }
}

fn smtp_settings(env: &Environment, timeout: Duration) -> Result<SmtpSettings, ConfigError> {
    // Each refusal of the settings names the variable that carries the fault.
    let invalid = |error: InvalidSmtpSettings| ConfigError::Invalid {
        name: match error {
            InvalidSmtpSettings::Host(_) | InvalidSmtpSettings::Tls(_) => "EMAIL_SMTP_HOST",
            InvalidSmtpSettings::Port => "EMAIL_SMTP_PORT",
            InvalidSmtpSettings::Security(_) | InvalidSmtpSettings::CredentialsInClear => {
                "EMAIL_SMTP_SECURITY"
            }
            InvalidSmtpSettings::Timeout => "EMAIL_SMTP_TIMEOUT_MS",
            InvalidSmtpSettings::Username => "EMAIL_SMTP_USERNAME",
        },
        reason: error.to_string(),
    };
    let host = env.required("EMAIL_SMTP_HOST")?;
    let security: SmtpSecurity = env
        .get("EMAIL_SMTP_SECURITY")
        .unwrap_or("starttls")
        .parse()
        .map_err(invalid)?;
    let default_port = match security {
        SmtpSecurity::Tls => 465,
        SmtpSecurity::StartTls => 587,
        SmtpSecurity::None => 25,
    };
    let port: u16 = env.parsed("EMAIL_SMTP_PORT", default_port)?;
    let credentials = match (
        env.get("EMAIL_SMTP_USERNAME"),
        env.get("EMAIL_SMTP_PASSWORD"),
    ) {
        (None, None) => None,
        (Some(username), Some(password)) => {
            Some((username.to_owned(), SecretString::from(password.to_owned())))
        }
        (Some(_), None) => return Err(ConfigError::Missing("EMAIL_SMTP_PASSWORD")),
        (None, Some(_)) => return Err(ConfigError::Missing("EMAIL_SMTP_USERNAME")),
    };
    SmtpSettings::new(host, port, security, credentials, timeout).map_err(invalid)
}

/// Which provider holds the agents' numbers and their messages.
#[derive(Debug, Clone)]
pub enum SmsProviderConfig {
    /// Kept in PostgreSQL; `agentctl sandbox sms` delivers to it. The default of `make run`.
    Sandbox,
    /// Twilio, with the credentials that also check its webhook's signatures.
    Twilio {
        settings: Box<TwilioSettings>,
        auth_token: SecretString,
    },
}

/// Settings of SMS: the provider and the public URL its webhook is reached at.
pub struct SmsConfig {
    pub provider: SmsProviderConfig,
    /// The service's public base URL, `https://agents.example.com`: Twilio signs the URL it posts
    /// to, and numbers bought for agents point their webhook there.
    pub public_base_url: Option<String>,
    /// How long a sync with the provider stands before a history read or a wait syncs again:
    /// what arrives meanwhile comes by webhook. Zero syncs every time.
    pub sync_fresh_for: Duration,
}

impl SmsConfig {
    pub fn from_env(env: &Environment) -> Result<Self, ConfigError> {
        let public_base_url = public_url(env, "SMS_PUBLIC_BASE_URL")?;
        let provider = match env.get("SMS_PROVIDER").unwrap_or("sandbox") {
            "sandbox" => SmsProviderConfig::Sandbox,
            "twilio" => {
                let base = public_base_url
                    .as_deref()
                    .ok_or(ConfigError::Missing("SMS_PUBLIC_BASE_URL"))?;
                twilio_settings(env, base)?
            }
            other => {
                return Err(ConfigError::Invalid {
                    name: "SMS_PROVIDER",
                    reason: format!("expected sandbox or twilio, got {other:?}"),
                })
            }
        };
        Ok(Self {
            provider,
            public_base_url,
            sync_fresh_for: Duration::from_secs(env.parsed("SMS_SYNC_FRESH_SECS", 10)?),
        })
    }

    /// What the start-up banner says of the provider; never a credential.
    pub fn describe(&self) -> &'static str {
        match self.provider {
            SmsProviderConfig::Sandbox => "sandbox (agentctl sandbox sms)",
            SmsProviderConfig::Twilio { .. } => "Twilio",
        }
    }
}

fn twilio_settings(
    env: &Environment,
    public_base_url: &str,
) -> Result<SmsProviderConfig, ConfigError> {
    let invalid = |error: InvalidTwilioSettings| ConfigError::Invalid {
        name: match error {
            InvalidTwilioSettings::AccountSid(_) => "TWILIO_ACCOUNT_SID",
            InvalidTwilioSettings::AuthToken => "TWILIO_AUTH_TOKEN",
            InvalidTwilioSettings::Country(_) => "TWILIO_NUMBER_COUNTRY",
            InvalidTwilioSettings::Timeout => "TWILIO_TIMEOUT_MS",
            InvalidTwilioSettings::SmsWebhookUrl(_) => "SMS_PUBLIC_BASE_URL",
            _ => "TWILIO_BASE_URL",
        },
        reason: error.to_string(),
    };
    let account_sid = env.required("TWILIO_ACCOUNT_SID")?.to_owned();
    let auth_token = SecretString::from(env.required("TWILIO_AUTH_TOKEN")?.to_owned());
    let webhook =
        Url::parse(&format!("{public_base_url}{TWILIO_SMS_WEBHOOK_PATH}")).map_err(|error| {
            ConfigError::Invalid {
                name: "SMS_PUBLIC_BASE_URL",
                reason: error.to_string(),
            }
        })?;
    let timeout = Duration::from_millis(env.parsed::<u64>("TWILIO_TIMEOUT_MS", 10_000)?.max(1));
    let mut settings =
        TwilioSettings::new(account_sid, auth_token.clone(), webhook, timeout).map_err(invalid)?;
    if let Some(url) = env.get("TWILIO_BASE_URL") {
        settings = settings.with_base_url(url).map_err(invalid)?;
    }
    if let Some(country) = env.get("TWILIO_NUMBER_COUNTRY") {
        settings = settings.with_country(country).map_err(invalid)?;
    }
    Ok(SmsProviderConfig::Twilio {
        settings: Box::new(settings),
        auth_token,
    })
}

/// Derivation input of the sandbox cursor secret: cursors are tamper-evident, not confidential,
/// and every query is scoped to the caller, so a well-known secret is acceptable on the sandbox.
const SANDBOX_CURSOR_SECRET_SEED: &[u8] = b"agent-runtime sandbox cursor secret v1";
const MIN_CURSOR_SECRET_LEN: usize = 32;
const MIN_METRICS_TOKEN_LEN: usize = 16;

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

/// Settings of the use cases every way in holds (`app::Services`): the server's and
/// `agentctl`'s alike.
pub struct ServicesConfig {
    pub provisioning: ProvisioningConfig,
    pub intents: IntentConfig,
    pub chain: ChainConfig,
    pub email: EmailConfig,
    pub sms: SmsConfig,
    pub cursors: CursorSecrets,
    /// How many long-lived requests of each kind one agent may hold at once per instance.
    pub long_lived: LongLivedCaps,
    pub events: EventsConfig,
    /// Where the operator console is reached: `PUBLIC_BASE_URL`, else `http://localhost` on the
    /// port of `BIND_ADDR` (the server puts the port it took there). Its enrollment links start
    /// with it, and its passkeys are bound to its host, which must be a name (decision 0065).
    pub console_url: String,
}

/// The event log, its streams and the webhooks that carry it (decision 0058).
#[derive(Debug, Clone, Copy)]
pub struct EventsConfig {
    /// How long events are kept (`EVENT_RETENTION_DAYS`, 30).
    pub retention: Duration,
    /// The longest a stream goes without a comment line (`EVENT_STREAM_KEEPALIVE_SECS`, 10).
    pub keep_alive: Duration,
    /// How many bytes a stream holds for its reader (`EVENT_STREAM_BUFFER_BYTES`, 262144) ...
    pub stream_buffer_bytes: usize,
    /// ... and how long the next item may wait for room before the reader is cut
    /// (`EVENT_STREAM_STALL_SECS`, 30).
    pub stream_stall: Duration,
    /// How long a stream lives before it ends and its client reconnects (`EVENT_STREAM_MAX_SECS`,
    /// 3600): no connection is held for good.
    pub stream_lifetime: Duration,
    pub webhooks: WebhookConfig,
}

#[derive(Debug, Clone, Copy)]
pub struct WebhookConfig {
    /// Attempt times after the first try (`WEBHOOK_RETRY_SCHEDULE`).
    pub schedule: RetryOffsets,
    /// Each attempt's whole time (`WEBHOOK_TIMEOUT_MS`, 15000).
    pub timeout: Duration,
    /// `WEBHOOK_ALLOW_PRIVATE_TARGETS`: deliveries to addresses that are not public.
    pub targets: Targets,
    /// Deliveries one instance makes at once (`WEBHOOK_CONCURRENCY`, 32).
    pub concurrency: usize,
    /// How many of those one agent's deliveries may hold (`WEBHOOK_PLACES_PER_AGENT`, a quarter
    /// of `WEBHOOK_CONCURRENCY`, at least 1): receivers that hang hold no more, and the other
    /// places serve every other agent.
    pub places_per_agent: usize,
    /// `WEBHOOK_DELIVERY_ENABLED` (true): whether this instance delivers.
    pub enabled: bool,
}

/// The spec's schedule: seconds after the first try.
const DEFAULT_WEBHOOK_SCHEDULE: &str = "0,5,300,1800,7200,18000,36000,36000";

impl EventsConfig {
    fn from_env(env: &Environment) -> Result<Self, ConfigError> {
        let positive = |name: &'static str, value: u64| match value {
            0 => Err(ConfigError::Invalid {
                name,
                reason: "must be at least 1".into(),
            }),
            _ => Ok(value),
        };
        let days = positive(
            "EVENT_RETENTION_DAYS",
            env.parsed("EVENT_RETENTION_DAYS", 30)?,
        )?;
        let keep_alive = positive(
            "EVENT_STREAM_KEEPALIVE_SECS",
            env.parsed("EVENT_STREAM_KEEPALIVE_SECS", 10)?,
        )?;
        let stream_buffer_bytes = positive(
            "EVENT_STREAM_BUFFER_BYTES",
            env.parsed("EVENT_STREAM_BUFFER_BYTES", 256 * 1024)?,
        )?;
        let stall = positive(
            "EVENT_STREAM_STALL_SECS",
            env.parsed("EVENT_STREAM_STALL_SECS", 30)?,
        )?;
        let lifetime = positive(
            "EVENT_STREAM_MAX_SECS",
            env.parsed("EVENT_STREAM_MAX_SECS", 3600)?,
        )?;
        let schedule = RetryOffsets::parse(
            env.get("WEBHOOK_RETRY_SCHEDULE")
                .unwrap_or(DEFAULT_WEBHOOK_SCHEDULE),
        )
        .map_err(|error| ConfigError::Invalid {
            name: "WEBHOOK_RETRY_SCHEDULE",
            reason: error.to_string(),
        })?;
        let timeout = positive(
            "WEBHOOK_TIMEOUT_MS",
            env.parsed("WEBHOOK_TIMEOUT_MS", 15_000)?,
        )?;
        let concurrency = positive(
            "WEBHOOK_CONCURRENCY",
            env.parsed("WEBHOOK_CONCURRENCY", 32)?,
        )?;
        let places_per_agent = positive(
            "WEBHOOK_PLACES_PER_AGENT",
            env.parsed("WEBHOOK_PLACES_PER_AGENT", (concurrency / 4).max(1))?,
        )?;
        if places_per_agent > concurrency {
            return Err(ConfigError::Invalid {
                name: "WEBHOOK_PLACES_PER_AGENT",
                reason: format!("must be at most WEBHOOK_CONCURRENCY ({concurrency})"),
            });
        }
        Ok(Self {
            retention: Duration::from_secs(days.saturating_mul(86_400)),
            keep_alive: Duration::from_secs(keep_alive),
            stream_buffer_bytes: usize::try_from(stream_buffer_bytes).unwrap_or(usize::MAX),
            stream_stall: Duration::from_secs(stall),
            stream_lifetime: Duration::from_secs(lifetime),
            webhooks: WebhookConfig {
                schedule,
                timeout: Duration::from_millis(timeout),
                targets: match env.flag("WEBHOOK_ALLOW_PRIVATE_TARGETS", false)? {
                    true => Targets::PrivateAllowed,
                    false => Targets::PublicOnly,
                },
                concurrency: usize::try_from(concurrency).unwrap_or(usize::MAX),
                places_per_agent: usize::try_from(places_per_agent).unwrap_or(usize::MAX),
                enabled: env.flag("WEBHOOK_DELIVERY_ENABLED", true)?,
            },
        })
    }
}

impl ServicesConfig {
    /// The server's: it hands out page cursors, so off the sandbox `CURSOR_SECRET` is required.
    pub fn from_env(env: &Environment) -> Result<Self, ConfigError> {
        Self::read(env, CursorSecrets::from_env)
    }

    /// The control plane's (`agentctl`): it hands out no cursor, so it needs no `CURSOR_SECRET`.
    pub fn for_control_plane(env: &Environment) -> Result<Self, ConfigError> {
        Self::read(env, CursorSecrets::from_env_or_process_only)
    }

    fn read(
        env: &Environment,
        cursor_secrets: fn(&Environment, bool) -> Result<CursorSecrets, ConfigError>,
    ) -> Result<Self, ConfigError> {
        let chain = ChainConfig::from_env(env)?;
        let cursors = cursor_secrets(env, chain.is_sandbox())?;
        Ok(Self {
            provisioning: ProvisioningConfig::from_env(env)?,
            intents: IntentConfig::from_env(env)?,
            cursors,
            chain,
            email: EmailConfig::from_env(env)?,
            sms: SmsConfig::from_env(env)?,
            long_lived: long_lived_caps(env)?,
            events: EventsConfig::from_env(env)?,
            console_url: console_url(env)?,
        })
    }

    /// Whether everything is the sandbox's: its chain, its mail and its SMS providers.
    pub fn is_sandbox(&self) -> bool {
        self.chain.is_sandbox()
            && matches!(self.email.provider, EmailProvider::Sandbox)
            && matches!(self.sms.provider, SmsProviderConfig::Sandbox)
    }
}

/// `PUBLIC_BASE_URL`, else the local name on the port the server binds.
fn console_url(env: &Environment) -> Result<String, ConfigError> {
    if let Some(public) = public_url(env, "PUBLIC_BASE_URL")? {
        return Ok(public);
    }
    let bind: SocketAddr = env.parsed(
        "BIND_ADDR",
        DEFAULT_BIND_ADDR.parse().expect("valid default"),
    )?;
    Ok(format!("http://localhost:{}", bind.port()))
}

/// A public URL of the service from `name`: http or https, with a host, without a query; kept
/// without its trailing slash.
fn public_url(env: &Environment, name: &'static str) -> Result<Option<String>, ConfigError> {
    let Some(raw) = env.get(name) else {
        return Ok(None);
    };
    let parsed = Url::parse(raw).ok().filter(|url| {
        matches!(url.scheme(), "http" | "https") && url.has_host() && url.query().is_none()
    });
    if parsed.is_none() {
        return Err(ConfigError::Invalid {
            name,
            reason: "must be an http:// or https:// URL without a query".into(),
        });
    }
    Ok(Some(raw.trim_end_matches('/').to_owned()))
}

/// The proxies whose header names the console's client: both settings or neither, since a
/// header is believed only from the proxies that write it.
fn console_trusted_proxies(env: &Environment) -> Result<Option<TrustedProxies>, ConfigError> {
    const PROXIES: &str = "CONSOLE_TRUSTED_PROXIES";
    const HEADER: &str = "CONSOLE_TRUSTED_PROXY_HEADER";
    let (proxies, header) = match (env.get(PROXIES), env.get(HEADER)) {
        (None, None) => return Ok(None),
        (Some(_), None) => return Err(ConfigError::Missing(HEADER)),
        (None, Some(_)) => return Err(ConfigError::Missing(PROXIES)),
        (Some(proxies), Some(header)) => (proxies, header),
    };
    let networks = proxies
        .split(',')
        .map(str::trim)
        .filter(|network| !network.is_empty())
        .map(str::parse::<ProxyNetwork>)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| ConfigError::Invalid {
            name: PROXIES,
            reason: error.to_string(),
        })?;
    TrustedProxies::new(header, networks)
        .map(Some)
        .map_err(|error| ConfigError::Invalid {
            name: match error {
                TrustedProxiesError::Header(_) => HEADER,
                TrustedProxiesError::NoProxy => PROXIES,
            },
            reason: error.to_string(),
        })
}

fn long_lived_caps(env: &Environment) -> Result<LongLivedCaps, ConfigError> {
    // Named for SMS since its waits came first; it caps waits for a code on every channel.
    let code_waits: usize = env.parsed("SMS_WAITERS_PER_AGENT", 20)?;
    if code_waits == 0 {
        return Err(ConfigError::Invalid {
            name: "SMS_WAITERS_PER_AGENT",
            reason: "must be at least 1".into(),
        });
    }
    let event_streams: usize = env.parsed("EVENT_STREAMS_PER_AGENT", 8)?;
    if event_streams == 0 {
        return Err(ConfigError::Invalid {
            name: "EVENT_STREAMS_PER_AGENT",
            reason: "must be at least 1".into(),
        });
    }
    let decision_waits: usize = env.parsed("DECISION_WAITS_PER_AGENT", 20)?;
    if decision_waits == 0 {
        return Err(ConfigError::Invalid {
            name: "DECISION_WAITS_PER_AGENT",
            reason: "must be at least 1".into(),
        });
    }
    let attachment_downloads: usize = env.parsed("EMAIL_ATTACHMENT_DOWNLOADS_PER_AGENT", 8)?;
    if attachment_downloads == 0 {
        return Err(ConfigError::Invalid {
            name: "EMAIL_ATTACHMENT_DOWNLOADS_PER_AGENT",
            reason: "must be at least 1".into(),
        });
    }
    let searches: usize = env.parsed("EMAIL_SEARCHES_PER_AGENT", 4)?;
    if searches == 0 {
        return Err(ConfigError::Invalid {
            name: "EMAIL_SEARCHES_PER_AGENT",
            reason: "must be at least 1".into(),
        });
    }
    // Two of the largest sends at once: a body past the cap could never be read.
    let request_body_bytes: usize = env.parsed("REQUEST_BODY_BYTES_PER_AGENT", 32 * 1024 * 1024)?;
    if request_body_bytes < domain::MAX_REQUEST_BODY_BYTES {
        return Err(ConfigError::Invalid {
            name: "REQUEST_BODY_BYTES_PER_AGENT",
            reason: format!(
                "must be at least {}, the largest body a request may have",
                domain::MAX_REQUEST_BODY_BYTES
            ),
        });
    }
    // A browser tab each; an operator rarely keeps more open.
    let live_lists: usize = env.parsed("CONSOLE_LIVE_LISTS_PER_OPERATOR", 16)?;
    if live_lists == 0 {
        return Err(ConfigError::Invalid {
            name: "CONSOLE_LIVE_LISTS_PER_OPERATOR",
            reason: "must be at least 1".into(),
        });
    }
    Ok(LongLivedCaps {
        code_waits,
        event_streams,
        decision_waits,
        attachment_downloads,
        searches,
        request_body_bytes,
        live_lists,
    })
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
mod tests {
    use super::*;

    const URL: (&str, &str) = ("DATABASE_URL", "postgres://localhost/db");

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

    #[test]
    fn the_control_plane_needs_no_cursor_secret_on_a_real_chain() {
        let rpc = ("EVM_RPC_URL", "http://127.0.0.1:8545");
        let master_key = "ab".repeat(32);
        let master = ("WALLET_MASTER_KEY", master_key.as_str());
        let without_master =
            ServicesConfig::for_control_plane(&Environment::from_pairs([rpc])).err();
        assert_eq!(
            without_master,
            Some(ConfigError::Missing("WALLET_MASTER_KEY"))
        );
        let server = ServicesConfig::from_env(&Environment::from_pairs([rpc, master])).err();
        assert_eq!(server, Some(ConfigError::Missing("CURSOR_SECRET")));
        let control_plane =
            ServicesConfig::for_control_plane(&Environment::from_pairs([rpc, master]))
                .expect("no cursor secret needed");
        let other = ServicesConfig::for_control_plane(&Environment::from_pairs([rpc, master]))
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
    fn attachments_stay_in_the_database_unless_an_s3_location_is_given() {
        let email = |pairs: &[(&'static str, &'static str)]| {
            EmailConfig::from_env(&Environment::from_pairs(pairs.iter().copied()))
        };
        for database in [&[][..], &[("EMAIL_ATTACHMENT_STORE", "postgres")][..]] {
            assert!(matches!(
                email(database).expect("valid").attachment_store,
                AttachmentStore::Database
            ));
        }
        let s3 = email(&[
            ("EMAIL_ATTACHMENT_STORE", "s3://mail-bytes/agents"),
            ("EMAIL_ATTACHMENT_SWEEP_AFTER_SECS", "5"),
        ])
        .expect("valid");
        let AttachmentStore::S3 {
            sweep_after,
            sweep_interval,
            ..
        } = s3.attachment_store
        else {
            panic!("an object store")
        };
        assert_eq!(
            (sweep_after, sweep_interval),
            (Duration::from_secs(5), Duration::from_secs(60))
        );
        for wrong in ["mail-bytes", "s3://", "https://mail-bytes.s3.amazonaws.com"] {
            assert!(
                matches!(
                    email(&[("EMAIL_ATTACHMENT_STORE", wrong)]),
                    Err(ConfigError::Invalid {
                        name: "EMAIL_ATTACHMENT_STORE",
                        ..
                    })
                ),
                "{wrong}"
            );
        }
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
    fn the_consoles_trusted_proxies_come_with_their_header_or_not_at_all() {
        let config = |extra: &[(&'static str, &'static str)]| {
            let pairs: Vec<(&str, &str)> = [URL].into_iter().chain(extra.iter().copied()).collect();
            ServerConfig::from_env(&Environment::from_pairs(pairs))
        };
        assert_eq!(config(&[]).expect("valid").console_trusted_proxies, None);
        let set = config(&[
            ("CONSOLE_TRUSTED_PROXIES", " 10.0.0.0/8, 192.0.2.7 ,"),
            ("CONSOLE_TRUSTED_PROXY_HEADER", "X-Forwarded-For"),
        ])
        .expect("valid")
        .console_trusted_proxies
        .expect("proxies");
        assert_eq!(set.header(), "x-forwarded-for");
        assert_eq!(
            set.client_address("10.1.1.1".parse().expect("ip"), &["198.51.100.3"]),
            "198.51.100.3".parse::<std::net::IpAddr>().expect("ip")
        );
        for (extra, named) in [
            (
                &[("CONSOLE_TRUSTED_PROXY_HEADER", "X-Forwarded-For")][..],
                "CONSOLE_TRUSTED_PROXIES",
            ),
            (
                &[("CONSOLE_TRUSTED_PROXIES", "10.0.0.1")][..],
                "CONSOLE_TRUSTED_PROXY_HEADER",
            ),
            (
                &[
                    ("CONSOLE_TRUSTED_PROXIES", "proxy.internal"),
                    ("CONSOLE_TRUSTED_PROXY_HEADER", "X-Forwarded-For"),
                ][..],
                "CONSOLE_TRUSTED_PROXIES",
            ),
            (
                &[
                    ("CONSOLE_TRUSTED_PROXIES", " , "),
                    ("CONSOLE_TRUSTED_PROXY_HEADER", "X-Forwarded-For"),
                ][..],
                "CONSOLE_TRUSTED_PROXIES",
            ),
            (
                &[
                    ("CONSOLE_TRUSTED_PROXIES", "10.0.0.1"),
                    ("CONSOLE_TRUSTED_PROXY_HEADER", "X Forwarded"),
                ][..],
                "CONSOLE_TRUSTED_PROXY_HEADER",
            ),
        ] {
            let refused = config(extra).err();
            assert!(
                matches!(
                    refused,
                    Some(ConfigError::Missing(name) | ConfigError::Invalid { name, .. }) if name == named
                ),
                "{extra:?}: {refused:?}"
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
        let source = include_str!("config.rs");
        let (configuration, _tests) = source
            .split_once("#[cfg(test)]")
            .expect("the tests are below the configuration");
        let mut read: Vec<String> = configuration
            .split('"')
            .skip(1)
            .step_by(2)
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

    #[test]
    fn an_agents_webhook_places_are_a_quarter_of_the_instances_unless_set_within_them() {
        let webhooks = |pairs: &[(&str, &str)]| {
            EventsConfig::from_env(&Environment::from_pairs(pairs.iter().copied())).map(|config| {
                (
                    config.webhooks.concurrency,
                    config.webhooks.places_per_agent,
                )
            })
        };
        assert_eq!(webhooks(&[]).expect("defaults"), (32, 8));
        assert_eq!(
            webhooks(&[("WEBHOOK_CONCURRENCY", "3")]).expect("valid"),
            (3, 1)
        );
        assert_eq!(
            webhooks(&[("WEBHOOK_PLACES_PER_AGENT", "32")]).expect("valid"),
            (32, 32)
        );
        for refused in ["0", "33"] {
            let error = webhooks(&[("WEBHOOK_PLACES_PER_AGENT", refused)]).err();
            assert!(
                matches!(
                    error,
                    Some(ConfigError::Invalid {
                        name: "WEBHOOK_PLACES_PER_AGENT",
                        ..
                    })
                ),
                "{refused}: {error:?}"
            );
        }
    }

    #[test]
    fn each_email_provider_needs_its_own_settings_and_names_a_bad_one() {
        let email = |pairs: &[(&str, &str)]| {
            EmailConfig::from_env(&Environment::from_pairs(pairs.iter().copied()))
        };
        assert!(matches!(
            email(&[]).map(|config| config.provider),
            Ok(EmailProvider::Sandbox)
        ));
        assert!(matches!(
            email(&[
                ("EMAIL_PROVIDER", "smtp"),
                ("EMAIL_SMTP_HOST", "smtp.example.com")
            ])
            .map(|config| config.provider),
            Ok(EmailProvider::Smtp(_))
        ));
        assert!(matches!(
            email(&[("EMAIL_PROVIDER", "resend"), ("RESEND_API_KEY", "re_123")])
                .map(|config| config.provider),
            Ok(EmailProvider::Resend(_))
        ));
        let smtp = ("EMAIL_PROVIDER", "smtp");
        let host = ("EMAIL_SMTP_HOST", "smtp.example.com");
        for (pairs, named) in [
            (vec![("EMAIL_PROVIDER", "carrier-pigeon")], "EMAIL_PROVIDER"),
            (
                vec![smtp, host, ("EMAIL_SMTP_SECURITY", "maybe")],
                "EMAIL_SMTP_SECURITY",
            ),
            (
                vec![smtp, host, ("EMAIL_SMTP_PORT", "0")],
                "EMAIL_SMTP_PORT",
            ),
            (
                vec![
                    smtp,
                    host,
                    ("EMAIL_SMTP_SECURITY", "none"),
                    ("EMAIL_SMTP_USERNAME", "u"),
                    ("EMAIL_SMTP_PASSWORD", "p"),
                ],
                "EMAIL_SMTP_SECURITY",
            ),
            (
                vec![
                    ("EMAIL_PROVIDER", "resend"),
                    ("RESEND_API_KEY", "re_1"),
                    ("RESEND_BASE_URL", "ftp://x"),
                ],
                "RESEND_BASE_URL",
            ),
            (
                vec![("EMAIL_WEBHOOK_SECRETS", "whsec_!!!")],
                "EMAIL_WEBHOOK_SECRETS",
            ),
            (vec![("EMAIL_SEND_BURST", "0")], "EMAIL_SEND_BURST"),
        ] {
            let error = email(&pairs).err();
            assert!(
                matches!(error, Some(ConfigError::Invalid { name, .. }) if name == named),
                "{named}: {error:?}"
            );
        }
        for (pairs, missing) in [
            (vec![smtp], "EMAIL_SMTP_HOST"),
            (vec![("EMAIL_PROVIDER", "resend")], "RESEND_API_KEY"),
            (
                vec![smtp, host, ("EMAIL_SMTP_USERNAME", "u")],
                "EMAIL_SMTP_PASSWORD",
            ),
        ] {
            assert_eq!(email(&pairs).err(), Some(ConfigError::Missing(missing)));
        }
    }

    #[test]
    fn a_bad_tls_setting_is_named_and_the_password_never_printed() {
        for (url, setting) in [
            (
                "postgres://u:hunter2@h/d?sslmode=verify-everything",
                "sslmode",
            ),
            (
                "postgres://u:hunter2@h/d?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
                "sslrootcert /nonexistent/ca.pem",
            ),
            ("postgres://u:hunter2@h/d?sslmode=verify-ca", "sslrootcert"),
            ("postgres://u:hunter2@h/d?sslcert=client.pem", "sslcert"),
        ] {
            let error = DatabaseConfig::from_env(&Environment::from_pairs([("DATABASE_URL", url)]))
                .err()
                .unwrap_or_else(|| panic!("{url} was accepted"));
            let message = error.to_string();
            assert!(
                message.starts_with("DATABASE_URL is invalid: ") && message.contains(setting),
                "{message}"
            );
            assert!(!message.contains("hunter2"), "{message}");
        }
    }

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
}
