//! The use cases' settings every way in holds, with the console's URL, the service's public
//! URLs, the console's trusted proxies and the caps on long-lived requests.

use std::net::SocketAddr;

use app::LongLivedCaps;
use domain::{ProxyNetwork, TrustedProxies, TrustedProxiesError};
use url::Url;

use super::{
    ChainConfig, ConfigError, CursorSecrets, EmailConfig, EmailProvider, Environment, EventsConfig,
    IntentConfig, ProvisioningConfig, SmsConfig, SmsProviderConfig, DEFAULT_BIND_ADDR,
};

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
pub(super) fn public_url(
    env: &Environment,
    name: &'static str,
) -> Result<Option<String>, ConfigError> {
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
pub(super) fn console_trusted_proxies(
    env: &Environment,
) -> Result<Option<TrustedProxies>, ConfigError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::test_env::URL;
    use crate::config::ServerConfig;

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
}
