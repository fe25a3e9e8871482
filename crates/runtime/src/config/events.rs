//! The event log, its streams and the webhooks that carry it.

use std::time::Duration;

use domain::{RetryOffsets, Targets};

use super::{ConfigError, Environment};

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
    pub(super) fn from_env(env: &Environment) -> Result<Self, ConfigError> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
