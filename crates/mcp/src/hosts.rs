//! Which hosts `/mcp` answers under. A page a browser loaded from another site can make it post
//! to a name that resolves to this server (DNS rebinding); its `Host` or `Origin` then names that
//! other site, and the request is refused before anything else is read.

/// Names `/mcp` is served under, on any port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedHosts(Vec<String>);

/// Why a request's `Host` or `Origin` is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostRefusal {
    Host(String),
    Origin(String),
}

impl HostRefusal {
    pub fn detail(&self) -> String {
        match self {
            Self::Host(host) => format!(
                "Host {host:?} is not one this server answers MCP requests under \
                 (MCP_ALLOWED_HOSTS)"
            ),
            Self::Origin(origin) => format!(
                "Origin {origin:?} may not call this server's MCP endpoint (MCP_ALLOWED_HOSTS)"
            ),
        }
    }
}

impl AllowedHosts {
    /// The loopback names, always allowed beside the public host.
    pub const LOOPBACK: [&'static str; 3] = ["localhost", "127.0.0.1", "::1"];

    /// Host names, without scheme or port (an IPv6 address with or without brackets); case does
    /// not matter. `Err` names the first entry that is no host name.
    pub fn new<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Result<Self, String> {
        let mut allowed: Vec<String> = Vec::new();
        for name in names {
            let raw = name.as_ref().trim();
            let host = authority(raw)
                .filter(|(_, port)| !port)
                .map(|(host, _)| host)
                .ok_or_else(|| raw.to_owned())?;
            if !allowed.contains(&host) {
                allowed.push(host);
            }
        }
        Ok(Self(allowed))
    }

    pub fn names(&self) -> &[String] {
        &self.0
    }

    /// Admits a request whose `Host` names an allowed host and whose `Origin`, when it sends
    /// one (a browser does), is an http or https origin of an allowed host.
    pub fn admit(&self, host: Option<&str>, origin: Option<&str>) -> Result<(), HostRefusal> {
        let host = host.unwrap_or_default();
        if !host_of_authority(host).is_some_and(|name| self.allows(&name)) {
            return Err(HostRefusal::Host(host.to_owned()));
        }
        let Some(origin) = origin else {
            return Ok(());
        };
        let allowed = origin
            .parse::<http::Uri>()
            .ok()
            .filter(|uri| matches!(uri.scheme_str(), Some("http" | "https")))
            .filter(|uri| uri.path_and_query().is_none_or(|path| path.as_str() == "/"))
            .and_then(|uri| uri.host().and_then(host_of_authority))
            .is_some_and(|name| self.allows(&name));
        if !allowed {
            return Err(HostRefusal::Origin(origin.to_owned()));
        }
        Ok(())
    }

    fn allows(&self, name: &str) -> bool {
        self.0.iter().any(|allowed| allowed == name)
    }
}

/// The host of `host[:port]` (an IPv6 address in brackets or not), lower-cased and without
/// brackets; `None` when it is no authority or carries credentials.
fn host_of_authority(raw: &str) -> Option<String> {
    authority(raw).map(|(host, _)| host)
}

/// The host of an authority and whether it names a port.
fn authority(raw: &str) -> Option<(String, bool)> {
    let bare_ipv6 = raw.parse::<std::net::Ipv6Addr>().is_ok();
    let parsed = if bare_ipv6 {
        format!("[{raw}]").parse::<http::uri::Authority>()
    } else {
        raw.parse::<http::uri::Authority>()
    };
    let parsed = parsed
        .ok()
        .filter(|parsed| !parsed.as_str().contains('@'))?;
    let host = parsed.host().trim_start_matches('[').trim_end_matches(']');
    let names_port = parsed.port().is_some() || raw.ends_with(':');
    (!host.is_empty()).then(|| (host.to_ascii_lowercase(), names_port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed() -> AllowedHosts {
        AllowedHosts::new(["agents.example.com", "localhost", "127.0.0.1", "::1"]).expect("hosts")
    }

    #[test]
    fn an_allowed_host_is_admitted_on_any_port_and_in_any_case() {
        for host in [
            "agents.example.com",
            "Agents.Example.COM:443",
            "localhost:8080",
            "127.0.0.1:53121",
            "[::1]:8080",
            "[::1]",
        ] {
            assert_eq!(allowed().admit(Some(host), None), Ok(()), "{host}");
        }
    }

    #[test]
    fn another_host_or_none_is_refused() {
        for host in [
            "evil.example",
            "agents.example.com.evil.example",
            "user@localhost",
            "",
        ] {
            assert_eq!(
                allowed().admit(Some(host), None),
                Err(HostRefusal::Host(host.to_owned())),
                "{host}"
            );
        }
        assert!(allowed().admit(None, None).is_err());
    }

    #[test]
    fn a_browsers_origin_must_be_an_allowed_host_too() {
        let host = Some("localhost:8080");
        for origin in [
            "http://localhost:3000",
            "https://agents.example.com",
            "http://[::1]:8080",
        ] {
            assert_eq!(allowed().admit(host, Some(origin)), Ok(()), "{origin}");
        }
        for origin in [
            "http://evil.example",
            "null",
            "file:///etc/passwd",
            "https://evil.example/http://localhost",
            "localhost",
        ] {
            assert_eq!(
                allowed().admit(host, Some(origin)),
                Err(HostRefusal::Origin(origin.to_owned())),
                "{origin}"
            );
        }
    }

    #[test]
    fn hosts_are_names_without_scheme_port_or_path() {
        let hosts =
            AllowedHosts::new(["Agents.Example.com", "::1", "[::1]", "localhost"]).expect("names");
        assert_eq!(hosts.names(), ["agents.example.com", "::1", "localhost"]);
        for wrong in [
            "https://agents.example.com",
            "agents.example.com:443",
            "a/b",
            "",
        ] {
            assert_eq!(AllowedHosts::new([wrong]), Err(wrong.to_owned()), "{wrong}");
        }
    }
}
