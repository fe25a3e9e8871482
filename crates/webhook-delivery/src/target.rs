//! Where a delivery may connect. A name is resolved by the poster's own resolver at each
//! connection, and every address it resolves to is checked: the connection goes only to an
//! address that was checked, so a name that answers a public address to a check and a private
//! one to the connection (DNS rebinding) gets nowhere.

use std::error::Error;
use std::net::{IpAddr, SocketAddr};

use domain::{target_allowed, Targets};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// A receiver's host names an address deliveries may not go to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("target refused: {host} resolves to {ip}, which is not publicly routable")]
pub struct TargetRefused {
    pub host: String,
    pub ip: IpAddr,
}

impl TargetRefused {
    /// The first of `ips` that `targets` does not allow, as a refusal of `host`.
    pub(crate) fn first_of(
        host: &str,
        ips: impl IntoIterator<Item = IpAddr>,
        targets: Targets,
    ) -> Option<Self> {
        ips.into_iter()
            .find(|ip| !target_allowed(*ip, targets))
            .map(|ip| Self {
                host: host.to_owned(),
                ip,
            })
    }

    /// The refusal somewhere in `error`'s chain of sources (reqwest wraps what the resolver
    /// said in a connect error, itself in its own).
    pub(crate) fn within<'a>(error: &'a (dyn Error + 'static)) -> Option<&'a Self> {
        let mut cause = Some(error);
        while let Some(error) = cause {
            if let Some(refused) = error.downcast_ref::<Self>() {
                return Some(refused);
            }
            cause = error.source();
        }
        None
    }
}

/// Resolves with the system's resolver (through tokio) and fails when any address is refused:
/// picking the allowed ones would still let a host steer deliveries by what it lists.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CheckedResolver {
    pub targets: Targets,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let targets = self.targets;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            // Port 0: reqwest puts the URL's port in.
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if let Some(refused) =
                TargetRefused::first_of(&host, addrs.iter().map(SocketAddr::ip), targets)
            {
                return Err(refused.into());
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(host: &str, targets: Targets) -> Result<Vec<SocketAddr>, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let name: Name = host.parse().expect("a name");
        runtime
            .block_on(CheckedResolver { targets }.resolve(name))
            .map(Iterator::collect)
            .map_err(|error| error.to_string())
    }

    #[test]
    fn a_name_of_a_loopback_address_is_refused_unless_private_targets_are_allowed() {
        let refused = resolve("localhost", Targets::PublicOnly).expect_err("refused");
        assert!(
            refused.starts_with("target refused: localhost resolves to "),
            "{refused}"
        );
        let addrs = resolve("localhost", Targets::PrivateAllowed).expect("resolved");
        assert!(
            addrs.iter().all(|addr| addr.ip().is_loopback()),
            "{addrs:?}"
        );
    }

    #[test]
    fn any_refused_address_refuses_the_host() {
        let ips: [IpAddr; 2] = [
            "8.8.8.8".parse().expect("ip"),
            "10.0.0.1".parse().expect("ip"),
        ];
        assert_eq!(
            TargetRefused::first_of("mixed.example", ips, Targets::PublicOnly),
            Some(TargetRefused {
                host: "mixed.example".into(),
                ip: ips[1]
            })
        );
        assert_eq!(
            TargetRefused::first_of("mixed.example", ips, Targets::PrivateAllowed),
            None
        );
    }

    #[test]
    fn the_refusal_is_found_beneath_wrapping_errors() {
        #[derive(Debug, thiserror::Error)]
        #[error("connect error")]
        struct Wrapper(#[source] Box<dyn Error + Send + Sync>);
        let refused = TargetRefused {
            host: "h".into(),
            ip: "127.0.0.1".parse().expect("ip"),
        };
        let wrapped = Wrapper(Box::new(refused.clone()));
        assert_eq!(TargetRefused::within(&wrapped), Some(&refused));
        assert_eq!(TargetRefused::within(&Wrapper("other".into())), None);
    }
}
