//! Email: the provider and its settings, the inbound webhook, send rates, the outbox and where
//! attachments live.

use std::sync::Arc;
use std::time::Duration;

use app::{QueueSettings, SendRates};
use domain::{DeliveryRetry, RateLimit, RetryRule, RetrySchedule};
use email::{InvalidSmtpSettings, MailWebhook, ResendSettings, SmtpSecurity, SmtpSettings};
use s3_store::S3AttachmentStore;
use secrecy::SecretString;

use super::{ConfigError, Environment};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
