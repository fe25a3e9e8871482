//! The database: where it is, its pool and whether migrations run at start.

use std::time::Duration;

use postgres_store::{Connector, PoolSettings};

use super::{ConfigError, Environment};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
