//! Whose address a request comes from, as the operator console records it in its audit log:
//! the connection's, unless the connection comes from a proxy the configuration trusts, whose
//! header then names the client. A header from anyone else is a text any client can write.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

/// An address or a network (`10.0.0.0/8`, `2001:db8::/32`, `192.0.2.7`) of trusted proxies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyNetwork {
    network: IpAddr,
    prefix: u8,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is no address or network (an address, or an address/prefix length)")]
pub struct InvalidProxyNetwork(pub String);

impl FromStr for ProxyNetwork {
    type Err = InvalidProxyNetwork;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || InvalidProxyNetwork(text.to_owned());
        let (address, prefix) = match text.trim().split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text.trim(), None),
        };
        let network = canonical(address.parse::<IpAddr>().map_err(|_| invalid())?);
        let bits = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(prefix) => prefix
                .parse::<u8>()
                .ok()
                .filter(|prefix| *prefix <= bits)
                .ok_or_else(invalid)?,
            None => bits,
        };
        Ok(Self { network, prefix })
    }
}

impl ProxyNetwork {
    pub fn contains(&self, address: IpAddr) -> bool {
        match (self.network, canonical(address)) {
            (IpAddr::V4(network), IpAddr::V4(address)) => {
                same_prefix(&network.octets(), &address.octets(), self.prefix)
            }
            (IpAddr::V6(network), IpAddr::V6(address)) => {
                same_prefix(&network.octets(), &address.octets(), self.prefix)
            }
            _ => false,
        }
    }
}

impl fmt::Display for ProxyNetwork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

/// An IPv4 address seen through an IPv6 socket (`::ffff:a.b.c.d`) is that IPv4 address.
fn canonical(address: IpAddr) -> IpAddr {
    address.to_canonical()
}

fn same_prefix(left: &[u8], right: &[u8], prefix: u8) -> bool {
    let whole = usize::from(prefix / 8);
    let rest = prefix % 8;
    if left[..whole] != right[..whole] {
        return false;
    }
    rest == 0 || {
        let mask = 0xffu8 << (8 - rest);
        left[whole] & mask == right[whole] & mask
    }
}

/// The proxies whose header names the client, and that header (`X-Forwarded-For`, or one that
/// holds a single address such as `X-Real-IP`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedProxies {
    header: String,
    proxies: Vec<ProxyNetwork>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrustedProxiesError {
    #[error("{0:?} is no header name (letters, digits and hyphens)")]
    Header(String),
    #[error("no trusted proxy is given: a header is believed only from the proxies that write it")]
    NoProxy,
}

impl TrustedProxies {
    pub fn new(header: &str, proxies: Vec<ProxyNetwork>) -> Result<Self, TrustedProxiesError> {
        let header = header.trim();
        let named = !header.is_empty()
            && header
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-');
        if !named {
            return Err(TrustedProxiesError::Header(header.to_owned()));
        }
        if proxies.is_empty() {
            return Err(TrustedProxiesError::NoProxy);
        }
        Ok(Self {
            header: header.to_ascii_lowercase(),
            proxies,
        })
    }

    /// The header's name, in lower case.
    pub fn header(&self) -> &str {
        &self.header
    }

    fn trusts(&self, address: IpAddr) -> bool {
        self.proxies.iter().any(|proxy| proxy.contains(address))
    }

    /// The client behind a connection from `peer` that carries `values`, the header's values
    /// in the order received. Only a trusted peer's header is read: from its end, each trusted
    /// proxy's entry is passed over, and the first other address is the client (every proxy
    /// appends the address it was reached from, so entries before the first untrusted one may
    /// be anyone's writing). An entry that is no address stops the walk at the last proxy that
    /// passed it on.
    pub fn client_address(&self, peer: IpAddr, values: &[&str]) -> IpAddr {
        let peer = canonical(peer);
        if !self.trusts(peer) {
            return peer;
        }
        let mut client = peer;
        for entry in values.iter().flat_map(|value| value.split(',')).rev() {
            let Ok(address) = entry.trim().parse::<IpAddr>() else {
                return client;
            };
            client = canonical(address);
            if !self.trusts(client) {
                return client;
            }
        }
        client
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("an address")
    }

    fn network(text: &str) -> ProxyNetwork {
        text.parse().expect("a network")
    }

    #[test]
    fn networks_hold_the_addresses_under_their_prefix() {
        let private = network("10.0.0.0/8");
        assert!(private.contains(ip("10.1.2.3")));
        assert!(private.contains(ip("::ffff:10.1.2.3")), "IPv4 through IPv6");
        assert!(!private.contains(ip("11.0.0.1")));
        let odd = network("192.0.2.128/25");
        assert!(odd.contains(ip("192.0.2.200")));
        assert!(!odd.contains(ip("192.0.2.127")));
        let one = network("192.0.2.7");
        assert!(one.contains(ip("192.0.2.7")) && !one.contains(ip("192.0.2.8")));
        assert!(network("2001:db8::/32").contains(ip("2001:db8:1::1")));
        assert!(!network("2001:db8::/32").contains(ip("10.0.0.1")));
        assert!(network("0.0.0.0/0").contains(ip("203.0.113.9")));
        for garbage in ["", "10.0.0.0/33", "::/129", "host.example", "10.0.0.0/x"] {
            assert!(garbage.parse::<ProxyNetwork>().is_err(), "{garbage:?}");
        }
    }

    fn proxies() -> TrustedProxies {
        TrustedProxies::new("X-Forwarded-For", vec![network("10.0.0.0/8")]).expect("valid")
    }

    #[test]
    fn only_a_trusted_proxys_header_names_the_client() {
        let proxies = proxies();
        assert_eq!(proxies.header(), "x-forwarded-for");
        assert_eq!(
            proxies.client_address(ip("203.0.113.5"), &["198.51.100.1"]),
            ip("203.0.113.5"),
            "anyone else's header is their own writing"
        );
        assert_eq!(
            proxies.client_address(ip("10.0.0.2"), &["198.51.100.1"]),
            ip("198.51.100.1")
        );
        assert_eq!(
            proxies.client_address(ip("10.0.0.2"), &[]),
            ip("10.0.0.2"),
            "no header: the proxy itself"
        );
    }

    #[test]
    fn entries_a_client_wrote_before_the_proxies_are_passed_over() {
        let proxies = proxies();
        // The client wrote 1.1.1.1; the outer proxy appended 198.51.100.1, the inner 10.0.0.9.
        assert_eq!(
            proxies.client_address(ip("10.0.0.2"), &["1.1.1.1, 198.51.100.1", "10.0.0.9"]),
            ip("198.51.100.1")
        );
        assert_eq!(
            proxies.client_address(ip("10.0.0.2"), &["10.0.0.7, 10.0.0.9"]),
            ip("10.0.0.7"),
            "every entry a proxy: the farthest"
        );
        assert_eq!(
            proxies.client_address(ip("10.0.0.2"), &["garbage, 10.0.0.9"]),
            ip("10.0.0.9"),
            "garbage stops the walk at the proxy that passed it on"
        );
    }

    #[test]
    fn a_header_without_a_trusted_proxy_or_of_no_name_is_refused() {
        assert_eq!(
            TrustedProxies::new("X-Forwarded-For", vec![]),
            Err(TrustedProxiesError::NoProxy)
        );
        assert!(matches!(
            TrustedProxies::new("X Forwarded", vec![network("10.0.0.1")]),
            Err(TrustedProxiesError::Header(_))
        ));
    }
}
