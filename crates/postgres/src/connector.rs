//! The one place a database URL becomes a connection: the pool's, the notification hub's, the
//! migrations' and the tests' connections all open here, with the TLS the URL asks for.
//!
//! A URL may list several hosts (libpq's `host1:port1,host2:port2`), the nodes of a replicated
//! formation, with `target_session_attrs=read-write` to reach whichever is the primary. Each
//! host's attempt (TCP, TLS, startup, authentication and the read-write check) has its own
//! deadline, then the next host is tried: tokio-postgres bounds only the TCP connect, so a node
//! that accepts connections and never answers would hold every attempt (decision 0089). The
//! host that last took a connection is tried first, so a lost node costs one deadline, not one
//! per connection.
//!
//! The connections opened so far end together when their node is found gone from the primary's
//! place: the host that answered last fails an attempt by its deadline (silent) or refuses writes
//! (demoted), or another host answers in its place. A frozen node would hold every query sent on
//! them, and a demoted one refuse every write, for as long as they were reused.

use std::error::Error;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel::ConnectionResult;
use diesel_async::AsyncPgConnection;
use tokio::sync::watch;
use tokio_postgres::config::{Host, SslMode, TargetSessionAttrs};
use tokio_postgres::tls::MakeTlsConnect;
use tokio_postgres::{Client, Config, Connection, Socket};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::tls::{client_config, split_tls_settings, CertificateCheck, Tls};

/// Why a database URL cannot be used. No message holds the URL, so none holds its password.
#[derive(Debug, thiserror::Error)]
pub enum InvalidDatabaseUrl {
    #[error("sslmode {given:?} is not supported: use {offered}")]
    SslMode {
        given: String,
        offered: &'static str,
    },
    #[error(
        "sslmode=verify-ca needs sslrootcert, the PEM file of the authority that signs the \
         server's certificate (with the system's authorities only verify-full is safe)"
    )]
    VerifyCaWithoutRootCertificates,
    #[error("sslrootcert=system needs sslmode=verify-full, not {0:?}")]
    SystemRootsNeedVerifyFull(String),
    #[error("sslrootcert {}: {reason}", path.display())]
    RootCertificates { path: PathBuf, reason: String },
    #[error("sslrootcert (the system's trusted authorities, as no file is given): {0}")]
    SystemRoots(String),
    #[error("{0} is not UTF-8 once percent-decoded")]
    NotUtf8(&'static str),
    #[error("TLS: {0}")]
    Tls(String),
    /// What tokio-postgres found wrong in the rest of the URL, with its cause (which names the
    /// parameter).
    #[error("{0}")]
    Driver(String),
    #[error(
        "the URL gives {ports} ports for {hosts} hosts: give one port, or one per host (a host \
         written without one counts as one on 5432)"
    )]
    PortsPerHost { hosts: usize, ports: usize },
}

/// Why no host gave a connection: each host's failure, with its causes.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConnectError(String);

impl From<tokio_postgres::Error> for ConnectError {
    fn from(error: tokio_postgres::Error) -> Self {
        Self(with_causes(&error))
    }
}

/// A host's attempt at a connection, when the URL gives no `connect_timeout` and lists several
/// hosts: far above a connection's time on a network that works (loopback: a few milliseconds;
/// TLS across a region: a few hundred), and short enough that the next host is reached within
/// seconds.
const ATTEMPT_DEADLINE: Duration = Duration::from_secs(2);

/// The attempt's deadline with one host, where there is no other to try: it only bounds a node
/// that never answers, so it leaves a busy server all the time it may need.
const ONLY_HOST_DEADLINE: Duration = Duration::from_secs(10);

/// TCP keepalives, where the URL sets none: a peer that vanished (its machine, or the network to
/// it) is noticed in about 5 + 3 × 2 s on an idle connection, and in `UNACKNOWLEDGED_DEADLINE`
/// on one whose writes go unanswered. A node that is frozen yet still acknowledges is a matter
/// for the deadlines of the work done on it.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(5);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(2);
const KEEPALIVE_RETRIES: u32 = 3;
const UNACKNOWLEDGED_DEADLINE: Duration = Duration::from_secs(10);

/// tokio-postgres's keepalive idle time when none is set.
const DRIVER_KEEPALIVE_IDLE: Duration = Duration::from_secs(2 * 60 * 60);

/// The stream of a connection, encrypted or not.
pub(crate) type Stream = <MakeRustlsConnect as MakeTlsConnect<Socket>>::Stream;

/// How to reach the database: the URL's settings for tokio-postgres, one configuration per host,
/// and the TLS connector of its `sslmode` and `sslrootcert`. Cheap to clone; clones share which
/// host answered last.
#[derive(Clone)]
pub struct Connector {
    /// The URL's settings, each naming one of its hosts, in its order.
    hosts: Arc<[Config]>,
    /// The index in `hosts` of the host that gave the last connection: tried first.
    answered_last: Arc<AtomicUsize>,
    /// How long one host's attempt may take, from the TCP connect to the read-write check.
    attempt_deadline: Duration,
    /// When the connections opened so far were last ended: each `open` connection ends when
    /// this moves past the moment it was opened.
    last_ending: Arc<watch::Sender<Option<Instant>>>,
    /// Also with `sslmode=disable`, when tokio-postgres never calls it: one connector type keeps
    /// one connection type for every mode.
    tls: MakeRustlsConnect,
}

impl Connector {
    /// Reads the URL and every file its TLS settings name; nothing connects yet.
    pub fn from_url(url: &str) -> Result<Self, InvalidDatabaseUrl> {
        let (driver_url, tls) = split_tls_settings(url)?;
        let mut config: Config = driver_url.parse().map_err(|error: tokio_postgres::Error| {
            InvalidDatabaseUrl::Driver(with_causes(&error))
        })?;
        let (ssl_mode, check) = match tls {
            Tls::Off => (SslMode::Disable, CertificateCheck::None),
            Tls::Preferred(check) => (SslMode::Prefer, check),
            Tls::Required(check) => (SslMode::Require, check),
        };
        config.ssl_mode(ssl_mode);
        keep_alive(&mut config);
        let hosts = one_per_host(&config)?;
        let deadline = match hosts.len() {
            1 => ONLY_HOST_DEADLINE,
            _ => ATTEMPT_DEADLINE,
        };
        Ok(Self {
            attempt_deadline: config.get_connect_timeout().copied().unwrap_or(deadline),
            hosts: hosts.into(),
            answered_last: Arc::default(),
            last_ending: Arc::new(watch::Sender::new(None)),
            tls: MakeRustlsConnect::new(client_config(&check)?),
        })
    }

    /// The same URL's hosts asked for a standby (`target_session_attrs=read-only`), where the URL
    /// lists several and asks for the primary: the reads a formation can serve while it has no
    /// primary (decision 0097). Its connections end apart from this connector's.
    pub(crate) fn to_a_standby(&self) -> Option<Self> {
        let asks_for_the_primary = self
            .hosts
            .iter()
            .all(|host| host.get_target_session_attrs() == TargetSessionAttrs::ReadWrite);
        if self.hosts.len() < 2 || !asks_for_the_primary {
            return None;
        }
        let hosts: Vec<Config> = self
            .hosts
            .iter()
            .map(|host| {
                let mut standby = host.clone();
                standby.target_session_attrs(TargetSessionAttrs::ReadOnly);
                standby
            })
            .collect();
        Some(Self {
            hosts: hosts.into(),
            answered_last: Arc::default(),
            attempt_deadline: self.attempt_deadline,
            last_ending: Arc::new(watch::Sender::new(None)),
            tls: self.tls.clone(),
        })
    }

    /// A diesel connection, which ends by itself when `end_open_connections` is called.
    pub async fn open(&self) -> ConnectionResult<AsyncPgConnection> {
        let (client, connection) = self
            .open_client()
            .await
            .map_err(|error| diesel::ConnectionError::BadConnection(error.to_string()))?;
        let opened_at = Instant::now();
        let mut last_ending = self.last_ending.subscribe();
        tokio::spawn(async move {
            let ended_since_opened = async {
                let ended = last_ending.wait_for(|ending| ending.is_some_and(|at| at >= opened_at));
                if ended.await.is_err() {
                    // Every connector is gone: nothing can end the connection but its client.
                    std::future::pending::<()>().await;
                }
            };
            tokio::select! {
                ended = connection => {
                    if let Err(error) = ended {
                        tracing::debug!(error = %with_causes(&error), "a database connection failed");
                    }
                }
                () = ended_since_opened => {}
            }
        });
        AsyncPgConnection::try_from(client).await
    }

    /// Ends every connection `open` gave so far, through this connector or its clones: their
    /// queries fail at once as on a closed connection, and pools drop them. For a node found
    /// silent or turned standby, whose connections would hold or refuse whatever is sent on them.
    pub fn end_open_connections(&self, why: &str) {
        self.last_ending.send_replace(Some(Instant::now()));
        tracing::warn!(why, "the database connections opened so far are ended");
    }

    /// Whether a connection made at `created` was ended since, though its driving task may not
    /// have run yet: a pool checks this before handing a connection out.
    pub(crate) fn ended_since(&self, created: Instant) -> bool {
        self.last_ending.borrow().is_some_and(|at| at >= created)
    }

    /// A tokio-postgres client and its connection, which the caller must poll: from the first
    /// host, starting with the one that answered last, that connects within the deadline (and,
    /// with `target_session_attrs=read-write`, takes writes).
    pub(crate) async fn open_client(
        &self,
    ) -> Result<(Client, Connection<Socket, Stream>), ConnectError> {
        let first = self.answered_last.load(Ordering::Relaxed) % self.hosts.len();
        let mut failures = Vec::new();
        for index in (first..self.hosts.len()).chain(0..first) {
            let host = &self.hosts[index];
            let attempt =
                tokio::time::timeout(self.attempt_deadline, host.connect(self.tls.clone()));
            let (failure, node_left_its_place) = match attempt.await {
                Ok(Ok(connected)) => {
                    if self.answered_last.swap(index, Ordering::Relaxed) != index {
                        self.end_open_connections("another host answers in the primary's place");
                    }
                    return Ok(connected);
                }
                Ok(Err(error)) => (with_causes(&error), refuses_writes(&error)),
                Err(_) => (
                    format!("no connection within {:?}", self.attempt_deadline),
                    true,
                ),
            };
            // The connections opened so far are on the host that answered last, unless another
            // attempt found the primary elsewhere meanwhile.
            if node_left_its_place && self.answered_last.load(Ordering::Relaxed) == index {
                self.end_open_connections(
                    "the host that answered last is silent or takes no writes",
                );
            }
            failures.push(match self.hosts.len() {
                1 => failure,
                _ => format!("{}: {failure}", host_name(host)),
            });
        }
        Err(ConnectError(failures.join("; ")))
    }
}

/// The URL's settings once per host it lists, each with that host alone (and its port).
fn one_per_host(config: &Config) -> Result<Vec<Config>, InvalidDatabaseUrl> {
    let (hosts, addresses, ports) = (
        config.get_hosts(),
        config.get_hostaddrs(),
        config.get_ports(),
    );
    let count = hosts.len().max(addresses.len());
    if ports.len() > 1 && ports.len() != count {
        return Err(InvalidDatabaseUrl::PortsPerHost {
            hosts: count,
            ports: ports.len(),
        });
    }
    if count <= 1 {
        return Ok(vec![config.clone()]);
    }
    Ok((0..count)
        .map(|index| {
            let mut single = settings_without_hosts(config);
            match hosts.get(index) {
                Some(Host::Tcp(name)) => {
                    single.host(name);
                }
                Some(Host::Unix(path)) => {
                    single.host_path(path);
                }
                None => {}
            }
            if let Some(address) = addresses.get(index) {
                single.hostaddr(*address);
            }
            if let Some(port) = ports.get(index).or(ports.first()) {
                single.port(*port);
            }
            single
        })
        .collect())
}

/// Every setting of `config` but its hosts, addresses and ports.
fn settings_without_hosts(config: &Config) -> Config {
    let mut single = Config::new();
    if let Some(user) = config.get_user() {
        single.user(user);
    }
    if let Some(password) = config.get_password() {
        single.password(password);
    }
    if let Some(dbname) = config.get_dbname() {
        single.dbname(dbname);
    }
    if let Some(options) = config.get_options() {
        single.options(options);
    }
    if let Some(application_name) = config.get_application_name() {
        single.application_name(application_name);
    }
    if let Some(connect_timeout) = config.get_connect_timeout() {
        single.connect_timeout(*connect_timeout);
    }
    if let Some(tcp_user_timeout) = config.get_tcp_user_timeout() {
        single.tcp_user_timeout(*tcp_user_timeout);
    }
    if let Some(interval) = config.get_keepalives_interval() {
        single.keepalives_interval(interval);
    }
    if let Some(retries) = config.get_keepalives_retries() {
        single.keepalives_retries(retries);
    }
    single
        .ssl_mode(config.get_ssl_mode())
        .ssl_negotiation(config.get_ssl_negotiation())
        .keepalives(config.get_keepalives())
        .keepalives_idle(config.get_keepalives_idle())
        .target_session_attrs(config.get_target_session_attrs())
        .channel_binding(config.get_channel_binding());
    single
}

/// Keepalives and a deadline on unacknowledged writes, where the URL sets none.
fn keep_alive(config: &mut Config) {
    if config.get_keepalives_idle() == DRIVER_KEEPALIVE_IDLE {
        config.keepalives_idle(KEEPALIVE_IDLE);
    }
    if config.get_keepalives_interval().is_none() {
        config.keepalives_interval(KEEPALIVE_INTERVAL);
    }
    if config.get_keepalives_retries().is_none() {
        config.keepalives_retries(KEEPALIVE_RETRIES);
    }
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(UNACKNOWLEDGED_DEADLINE);
    }
}

/// Whether a connection was refused because the node takes no writes (`target_session_attrs`).
fn refuses_writes(error: &tokio_postgres::Error) -> bool {
    error
        .source()
        .and_then(|cause| cause.downcast_ref::<std::io::Error>())
        .is_some_and(|cause| cause.kind() == std::io::ErrorKind::PermissionDenied)
}

/// How a failure names its host: `name:port`, or the socket's folder.
fn host_name(config: &Config) -> String {
    let port = config.get_ports().first().copied().unwrap_or(5432);
    match (config.get_hosts().first(), config.get_hostaddrs().first()) {
        (_, Some(address)) => format!("{address}:{port}"),
        (Some(Host::Tcp(name)), None) => format!("{name}:{port}"),
        (Some(Host::Unix(path)), None) => path.display().to_string(),
        (None, None) => "(no host)".to_owned(),
    }
}

/// An error with the chain of its causes: tokio-postgres says "error performing TLS handshake"
/// and leaves why (the certificate's issuer, its names) to its cause.
pub(crate) fn with_causes(error: &dyn Error) -> String {
    let mut described = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        described.push_str(": ");
        described.push_str(&inner.to_string());
        cause = inner.source();
    }
    described
}

#[cfg(test)]
mod tests {
    use super::*;
    use test_support::TestDatabase;
    use tokio::task::JoinHandle;
    use tokio_postgres::config::TargetSessionAttrs;

    /// A port that accepts connections and never answers on them, as a frozen node does; the
    /// count of connections it took.
    async fn frozen_node() -> (u16, Arc<AtomicUsize>, JoinHandle<()>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let port = listener.local_addr().expect("its address").port();
        let taken = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&taken);
        let node = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                held.push(socket);
            }
        });
        (port, taken, node)
    }

    #[tokio::test]
    async fn a_host_that_never_answers_is_left_for_the_next_which_is_then_tried_first() {
        let database = TestDatabase::new().await;
        let (frozen, taken, _node) = frozen_node().await;
        let connector = Connector::from_url(&database.url_behind(frozen).0).expect("a valid URL");
        let (client, connection) = connector
            .open_client()
            .await
            .expect("the second host answers");
        tokio::spawn(connection);
        let writable: String = client
            .query_one("SHOW transaction_read_only", &[])
            .await
            .expect("a session")
            .get(0);
        assert_eq!(writable, "off");
        assert_eq!(
            taken.load(Ordering::SeqCst),
            1,
            "the frozen host was tried once"
        );
        for _ in 0..3 {
            connector.open().await.expect("another connection");
        }
        assert_eq!(
            taken.load(Ordering::SeqCst),
            1,
            "the host that answered last is tried first"
        );
    }

    #[tokio::test]
    async fn when_no_host_answers_each_ones_failure_is_named() {
        let (frozen, _, _node) = frozen_node().await;
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let connector = Connector::from_url(&format!(
            "postgres://u@127.0.0.1:{frozen},127.0.0.1:{closed}/d?connect_timeout=1&sslmode=disable"
        ))
        .expect("a valid URL");
        let failure = connector
            .open_client()
            .await
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(
            failure.contains(&format!("127.0.0.1:{frozen}: no connection within 1s; ")),
            "{failure}"
        );
        assert!(
            failure.contains(&format!("127.0.0.1:{closed}: ")),
            "{failure}"
        );
    }

    #[test]
    fn each_host_keeps_every_setting_of_the_url_with_its_own_port() {
        let connector = Connector::from_url(
            "postgres://alice:secret@db1:5433,db2:5434/app?application_name=svc\
             &target_session_attrs=read-write&options=-c%20work_mem%3D8MB&sslmode=disable",
        )
        .expect("a valid URL");
        assert_eq!(connector.hosts.len(), 2);
        for (config, (host, port)) in connector.hosts.iter().zip([("db1", 5433), ("db2", 5434)]) {
            assert!(
                matches!(config.get_hosts(), [Host::Tcp(name)] if name == host),
                "{:?}",
                config.get_hosts()
            );
            assert_eq!(config.get_ports(), [port]);
            assert_eq!(config.get_user(), Some("alice"));
            assert_eq!(config.get_password(), Some(&b"secret"[..]));
            assert_eq!(config.get_dbname(), Some("app"));
            assert_eq!(config.get_application_name(), Some("svc"));
            assert_eq!(config.get_options(), Some("-c work_mem=8MB"));
            assert_eq!(config.get_ssl_mode(), SslMode::Disable);
            assert_eq!(
                config.get_target_session_attrs(),
                TargetSessionAttrs::ReadWrite
            );
            assert_eq!(config.get_keepalives_idle(), KEEPALIVE_IDLE);
            assert_eq!(config.get_keepalives_interval(), Some(KEEPALIVE_INTERVAL));
            assert_eq!(
                config.get_tcp_user_timeout(),
                Some(&UNACKNOWLEDGED_DEADLINE)
            );
        }
    }

    #[test]
    fn a_url_giving_some_hosts_ports_but_not_all_is_refused() {
        // Each host written without a port counts as one on 5432, then the two of `port`.
        let refused = Connector::from_url("postgres://u@a,b,c/d?port=1,2").err();
        assert!(
            matches!(
                refused,
                Some(InvalidDatabaseUrl::PortsPerHost { hosts: 3, ports: 5 })
            ),
            "{refused:?}"
        );
        let refused = Connector::from_url("postgres://u@a/d?port=1,2").err();
        assert!(
            matches!(
                refused,
                Some(InvalidDatabaseUrl::PortsPerHost { hosts: 1, ports: 3 })
            ),
            "{refused:?}"
        );
    }

    #[test]
    fn a_setting_tokio_postgres_rejects_is_named_without_the_password() {
        let message = Connector::from_url("postgres://u:hunter2@h/d?sslcert=client.pem")
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(message.contains("sslcert"), "{message}");
        assert!(!message.contains("hunter2"), "{message}");
    }

    #[test]
    fn a_url_without_tls_settings_needs_no_file() {
        for url in [
            "postgres://postgres@127.0.0.1:5432/app",
            "postgres://postgres@127.0.0.1:5432/app?sslmode=disable",
            "postgresql://u:p@db.example.com/app?sslmode=require&application_name=agent-runtime",
        ] {
            assert!(Connector::from_url(url).is_ok(), "{url}");
        }
    }
}
