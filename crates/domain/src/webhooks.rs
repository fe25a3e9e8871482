//! The rules of an agent's webhook endpoints: where one may point, how many an agent keeps, how
//! long a failing one lives (decision 0058).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use time::OffsetDateTime;
use url::{Host, Url};
use uuid::Uuid;

use crate::{
    AgentId, EventId, EventType, EventTypes, RateLimit, WebhookDeliveryId, WebhookEndpointId,
};

/// At most this many endpoints per agent.
pub const MAX_WEBHOOK_ENDPOINTS: usize = 10;
/// The longest URL an endpoint may have.
pub const MAX_WEBHOOK_URL_CHARS: usize = 2048;
/// The longest description.
pub const MAX_WEBHOOK_DESCRIPTION_CHARS: usize = 512;
/// An endpoint whose deliveries have all failed for this long is disabled.
pub const DISABLE_FAILING_AFTER: Duration = Duration::from_secs(5 * 24 * 3600);
/// After a rotation, the old secret keeps signing this long.
pub const OLD_SECRET_SIGNS_FOR: Duration = Duration::from_secs(24 * 3600);
/// An agent's replays of one endpoint: three at once, then one a minute. Each may queue every
/// event the log keeps.
pub const REPLAY_RATE: RateLimit = RateLimit {
    per_minute: 1,
    burst: 3,
};
/// Why an endpoint stopped when its agent's key was rotated: the key that made it is gone.
pub const ROTATED_KEY_REASON: &str = "the agent key that created it was rotated";
/// Why an endpoint stopped when the key that made it was revoked.
pub const REVOKED_KEY_REASON: &str = "the agent key that created it was revoked";
/// Why an endpoint stopped when its agent was deactivated.
pub const DEACTIVATED_AGENT_REASON: &str = "the agent was deactivated";

/// An agent's webhook endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookEndpointRecord {
    pub id: WebhookEndpointId,
    pub agent_id: AgentId,
    pub url: String,
    /// `None`: every type.
    pub types: Option<EventTypes>,
    pub description: Option<String>,
    pub enabled: bool,
    pub disabled_reason: Option<String>,
    pub created_at: OffsetDateTime,
}

/// One attempt at a delivery, as the deliveries log shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookAttemptRecord {
    /// Orders attempts made at the same instant.
    pub attempt_id: Uuid,
    pub delivery_id: WebhookDeliveryId,
    pub event_id: EventId,
    pub event_type: EventType,
    /// 1 for the first attempt at the delivery.
    pub attempt: u32,
    pub status_code: Option<u16>,
    pub error: Option<String>,
    pub duration: Duration,
    pub attempted_at: OffsetDateTime,
}

/// Why an attempt at a delivery failed, in the fixed words its agent reads in the deliveries
/// log. What the resolver found, an error's text and what the receiver wrote back are the
/// server's log's alone: they show the inside of the network the deliveries leave from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptFailure {
    /// The host is, or resolves to, an address deliveries may not go to.
    NotPubliclyRoutable,
    /// Plain `http` to a public address.
    PublicNeedsHttps,
    TimedOut,
    /// No connection, or one that broke before an answer (the name not resolved, refused, TLS).
    ConnectionFailed,
    /// No secret of the endpoint could sign: nothing was sent.
    Unsigned,
    /// The receiver answered with this status, not a 2xx.
    Answered(u16),
}

impl std::fmt::Display for AttemptFailure {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotPubliclyRoutable => formatter.write_str("refused: not publicly routable"),
            Self::PublicNeedsHttps => formatter.write_str("refused: a public address needs https"),
            Self::TimedOut => formatter.write_str("timed out"),
            Self::ConnectionFailed => formatter.write_str("connection failed"),
            Self::Unsigned => formatter.write_str("refused: no secret of the endpoint can sign"),
            Self::Answered(status) => write!(formatter, "HTTP {status}"),
        }
    }
}

/// Whether deliveries may go to addresses that are not globally routable (tests, private
/// networks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Targets {
    PublicOnly,
    PrivateAllowed,
}

/// An endpoint's URL: absolute, `https` (or `http` to a private address, where those are
/// allowed: a name is checked at each attempt), a host, no credentials, no fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookUrl(Url);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookUrlError {
    #[error("URL should have at most {MAX_WEBHOOK_URL_CHARS} characters")]
    TooLong,
    #[error("not an absolute URL")]
    NotAbsolute,
    #[error("URL must use https")]
    NotHttps,
    #[error("URL must name a host")]
    NoHost,
    #[error("URL must not carry credentials")]
    Credentials,
    #[error("URL must not carry a fragment")]
    Fragment,
    #[error("URL points to an address that is not publicly routable")]
    PrivateAddress,
    #[error("URL must use https unless it points to a private address")]
    HttpToPublic,
}

impl WebhookUrl {
    pub fn parse(text: &str, targets: Targets) -> Result<Self, WebhookUrlError> {
        if text.chars().count() > MAX_WEBHOOK_URL_CHARS {
            return Err(WebhookUrlError::TooLong);
        }
        let url = Url::parse(text).map_err(|_| WebhookUrlError::NotAbsolute)?;
        match (url.scheme(), targets) {
            ("https", _) | ("http", Targets::PrivateAllowed) => {}
            _ => return Err(WebhookUrlError::NotHttps),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(WebhookUrlError::Credentials);
        }
        if url.fragment().is_some() {
            return Err(WebhookUrlError::Fragment);
        }
        // The URL as written names its host after `//`: the parser would also read `https:h`,
        // `https:/h` or `https:///h` as `https://h/`, a URL the caller never wrote.
        let names_authority = text
            .split_once("://")
            .is_some_and(|(_, rest)| !rest.starts_with(['/', '\\']));
        if !names_authority {
            return Err(WebhookUrlError::NoHost);
        }
        let literal = match url.host() {
            None => return Err(WebhookUrlError::NoHost),
            Some(Host::Domain(_)) => None,
            Some(Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
        };
        if let Some(ip) = literal {
            if !target_allowed(ip, targets) {
                return Err(WebhookUrlError::PrivateAddress);
            }
            if url.scheme() == "http" && is_globally_routable(ip) {
                return Err(WebhookUrlError::HttpToPublic);
            }
        }
        Ok(Self(url))
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    pub fn url(&self) -> &Url {
        &self.0
    }
}

/// Whether a delivery may be sent to `ip`.
pub fn target_allowed(ip: IpAddr, targets: Targets) -> bool {
    targets == Targets::PrivateAllowed || is_globally_routable(ip)
}

/// Whether `ip` is reachable on the public internet: not loopback, private (RFC 1918, IPv6 ULA),
/// link-local (cloud metadata lives there), shared (CGNAT), documentation, benchmarking,
/// multicast, reserved or unspecified. An IPv6 address is global only inside global unicast
/// (2000::/3) and outside its special blocks (Teredo, benchmarking, ORCHID, documentation);
/// those forms that carry an IPv4 address and reach it (IPv4-mapped, NAT64's well-known prefix,
/// 6to4) are judged by the address they carry. Every other form is refused whatever it carries
/// (IPv4-compatible, IPv4-translated, NAT64's local-use prefix, the rest of ::/8): a list of what
/// to refuse let through each form it did not name.
pub fn is_globally_routable(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => ipv4_global(ip),
        IpAddr::V6(ip) => ipv6_global(ip),
    }
}

fn ipv4_global(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let refused = a == 0
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b))
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 192 && b == 0 && c == 2)
        || (a == 192 && b == 88 && c == 99)
        || (a == 192 && b == 168)
        || (a == 198 && (18..20).contains(&b))
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
        || a >= 224;
    !refused
}

fn ipv6_global(ip: Ipv6Addr) -> bool {
    let segments = ip.segments();
    let embedded_v4 = |high: usize| {
        let [a, b] = segments[high].to_be_bytes();
        let [c, d] = segments[high + 1].to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    if let Some(mapped) = ip.to_ipv4_mapped() {
        return ipv4_global(mapped);
    }
    match segments {
        // NAT64's well-known prefix: what it embeds.
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => ipv4_global(embedded_v4(6)),
        // 6to4: what it embeds.
        [0x2002, ..] => ipv4_global(embedded_v4(1)),
        // Teredo, benchmarking, ORCHID and documentation.
        [0x2001, 0, ..]
        | [0x2001, 2, 0, ..]
        | [0x2001, 0x10..=0x2f, ..]
        | [0x2001, 0xdb8, ..]
        | [0x3fff, 0..=0x0fff, ..] => false,
        // Global unicast, 2000::/3; all else (::/8 with its IPv4 forms, discard-only, unique-
        // local, link-local, site-local, multicast, unassigned space) is not routed there.
        [first, ..] => first & 0xe000 == 0x2000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn global(text: &str) -> bool {
        is_globally_routable(text.parse().expect("an address"))
    }

    #[test]
    fn public_addresses_are_routable() {
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.216.34",
            "2606:4700::1111",
            "2a00:1450::1",
        ] {
            assert!(global(ip), "{ip}");
        }
    }

    #[test]
    fn private_and_special_addresses_are_refused() {
        for ip in [
            "127.0.0.1",
            "127.1.2.3",
            "0.0.0.0",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.100.100.200",
            "192.0.0.1",
            "192.0.2.1",
            "198.18.0.1",
            "198.51.100.1",
            "203.0.113.1",
            "224.0.0.1",
            "255.255.255.255",
            "240.0.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd00:ec2::254",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::10.0.0.1",
            "2002:7f00:1::",
            "2002:a9fe:a9fe::",
            "2001:db8::1",
            "2001::1",
            "100::1",
        ] {
            assert!(!global(ip), "{ip}");
        }
    }

    /// Every IPv6 form that carries an IPv4 address, each carrying a private one: the address
    /// it embeds decides, and a form that is not routed on the internet is refused whatever it
    /// embeds.
    #[test]
    fn ipv6_forms_embedding_a_private_ipv4_address_are_refused() {
        for ip in [
            // IPv4-mapped, ::ffff:0:0/96.
            "::ffff:10.0.0.1",
            "::ffff:192.168.1.1",
            // IPv4-translated (SIIT), ::ffff:0:0:0/96.
            "::ffff:0:10.0.0.1",
            "::ffff:0:127.0.0.1",
            "::ffff:0:169.254.169.254",
            "::ffff:0:8.8.8.8",
            // IPv4-compatible, deprecated, ::/96.
            "::10.0.0.1",
            "::169.254.169.254",
            // NAT64, the well-known prefix 64:ff9b::/96 and the local-use 64:ff9b:1::/48.
            "64:ff9b::10.0.0.1",
            "64:ff9b::127.0.0.1",
            "64:ff9b:1::a00:1",
            "64:ff9b:1:ffff::808:808",
            // 6to4, 2002::/16, the IPv4 address in the next 32 bits.
            "2002:a00:1::1",
            "2002:c0a8:101::",
            "2002:a9fe:a9fe::1",
            // Teredo, 2001::/32: the server's IPv4 address, then the client's inverted.
            "2001:0:a00:1::f5ff:fffe",
            "2001:0:808:808:8000:ffff:f5ff:fffe",
            // The rest of ::/8 and what lies outside 2000::/3: not routed on the internet.
            "::1:0:0:0",
            "0:0:1::10.0.0.1",
            "4000::1",
            "e000::1",
        ] {
            assert!(!global(ip), "{ip}");
        }
    }

    #[test]
    fn embedded_public_addresses_stay_routable() {
        assert!(global("::ffff:8.8.8.8"));
        assert!(global("64:ff9b::808:808"));
        assert!(global("2002:808:808::"));
    }

    #[test]
    fn an_agent_reads_a_failed_attempt_in_fixed_words() {
        let shown: Vec<String> = [
            AttemptFailure::NotPubliclyRoutable,
            AttemptFailure::PublicNeedsHttps,
            AttemptFailure::TimedOut,
            AttemptFailure::ConnectionFailed,
            AttemptFailure::Unsigned,
            AttemptFailure::Answered(500),
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(
            shown,
            [
                "refused: not publicly routable",
                "refused: a public address needs https",
                "timed out",
                "connection failed",
                "refused: no secret of the endpoint can sign",
                "HTTP 500",
            ]
        );
    }

    #[test]
    fn urls_must_be_https_to_a_host_without_credentials() {
        let public = Targets::PublicOnly;
        assert!(WebhookUrl::parse("https://hooks.example.com/in?x=1", public).is_ok());
        assert_eq!(
            WebhookUrl::parse("http://hooks.example.com/", public),
            Err(WebhookUrlError::NotHttps)
        );
        assert_eq!(
            WebhookUrl::parse("ftp://hooks.example.com/", Targets::PrivateAllowed),
            Err(WebhookUrlError::NotHttps)
        );
        assert_eq!(
            WebhookUrl::parse("/relative", public),
            Err(WebhookUrlError::NotAbsolute)
        );
        assert_eq!(
            WebhookUrl::parse("https://user:pw@example.com/", public),
            Err(WebhookUrlError::Credentials)
        );
        assert_eq!(
            WebhookUrl::parse("https://example.com/#part", public),
            Err(WebhookUrlError::Fragment)
        );
        for unwritten in ["https:///h", "https:/h", "https:h", "https:\\\\h/"] {
            assert_eq!(
                WebhookUrl::parse(unwritten, public),
                Err(WebhookUrlError::NoHost),
                "{unwritten}"
            );
        }
        let long = format!("https://example.com/{}", "a".repeat(MAX_WEBHOOK_URL_CHARS));
        assert_eq!(
            WebhookUrl::parse(&long, public),
            Err(WebhookUrlError::TooLong)
        );
    }

    #[test]
    fn literal_private_addresses_are_refused_unless_allowed() {
        for url in [
            "https://127.0.0.1/",
            "https://[::1]:8443/",
            "https://169.254.169.254/latest",
        ] {
            assert_eq!(
                WebhookUrl::parse(url, Targets::PublicOnly),
                Err(WebhookUrlError::PrivateAddress),
                "{url}"
            );
        }
        assert!(WebhookUrl::parse("http://127.0.0.1:9000/hook", Targets::PrivateAllowed).is_ok());
        assert_eq!(
            WebhookUrl::parse("http://8.8.8.8/hook", Targets::PrivateAllowed),
            Err(WebhookUrlError::HttpToPublic)
        );
    }
}
