//! SMS: the provider and the public URL its webhook is reached at.

use std::time::Duration;

use api_types::TWILIO_SMS_WEBHOOK_PATH;
use secrecy::SecretString;
use sms::{InvalidTwilioSettings, TwilioSettings};
use url::Url;

use super::services::public_url;
use super::{ConfigError, Environment};

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
