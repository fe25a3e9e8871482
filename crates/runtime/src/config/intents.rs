//! Transfer intents: how long they wait, and how the executor sends them.

use std::time::Duration;

use app::{ExecutorSettings, SendLimits, WatchSettings};
use domain::Targets;
use domain::{RateLimit, RetrySchedule};

use super::{ConfigError, Environment};

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
    /// How often x402 authorizations handed out are looked for on chain.
    pub authorization_watch_interval: Duration,
    /// How the settlement watch searches the chain.
    pub authorization_watch: WatchSettings,
    /// `X402_ALLOW_PRIVATE_TARGETS`: x402 fetches to addresses that are not public.
    pub fetch_targets: Targets,
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
        let watch_millis: u64 = env.parsed("X402_WATCH_INTERVAL_MS", 2_000)?;
        let watch_defaults = WatchSettings::default();
        let max_blocks: u64 = env.parsed("X402_WATCH_MAX_BLOCKS", watch_defaults.max_blocks)?;
        if max_blocks == 0 {
            return Err(ConfigError::Invalid {
                name: "X402_WATCH_MAX_BLOCKS",
                reason: "must be at least 1".into(),
            });
        }
        Ok(Self {
            fetch_targets: match env.flag("X402_ALLOW_PRIVATE_TARGETS", false)? {
                true => Targets::PrivateAllowed,
                false => Targets::PublicOnly,
            },
            authorization_watch_interval: Duration::from_millis(watch_millis.max(10)),
            authorization_watch: WatchSettings {
                max_blocks,
                ..watch_defaults
            },
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
