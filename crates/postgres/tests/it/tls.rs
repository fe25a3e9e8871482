//! TLS to the test server, whose certificate is signed by the authority of
//! `test_support::server_ca()` (for the project-local cluster: 127.0.0.1 and localhost).

use std::net::ToSocketAddrs;
use std::path::PathBuf;

use diesel::sql_types::Bool;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use ports::DatabaseHealth;
use postgres_store::{Connector, Database, PoolSettings, NOTIFICATION_CHANNEL};
use test_support::{server_ca, TestDatabase};

use crate::agents::listening_hub;
use url::Url;
use uuid::Uuid;

/// The same URL with a host name the server's certificate does not name, reaching the same
/// address through `hostaddr` (which tokio-postgres connects to, checking the certificate
/// against the host name).
fn misnamed(url: &str) -> String {
    let mut url = Url::parse(url).expect("a URL");
    let port = url.port().unwrap_or(5432);
    let address = (url.host_str().expect("a host"), port)
        .to_socket_addrs()
        .expect("the test server's address")
        .next()
        .expect("an address");
    url.set_host(Some("not-the-database.invalid"))
        .expect("a host name");
    url.query_pairs_mut()
        .append_pair("hostaddr", &address.ip().to_string());
    url.into()
}

async fn open(url: &str) -> Result<AsyncPgConnection, String> {
    Connector::from_url(url)
        .map_err(|error| format!("refused at start: {error}"))?
        .open()
        .await
        .map_err(|error| error.to_string())
}

#[derive(diesel::QueryableByName)]
struct Encryption {
    #[diesel(sql_type = Bool)]
    ssl: bool,
}

/// Whether the server sees this connection encrypted.
async fn encrypted(url: &str) -> bool {
    let mut connection = open(url).await.unwrap_or_else(|error| panic!("{error}"));
    diesel::sql_query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        .get_result::<Encryption>(&mut connection)
        .await
        .expect("pg_stat_ssl")
        .ssl
}

/// A certificate authority that signed nothing the server holds, as a PEM file removed on drop.
struct OtherAuthority(PathBuf);

impl OtherAuthority {
    fn new() -> Self {
        let key = rcgen::KeyPair::generate().expect("a key");
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let certificate = params.self_signed(&key).expect("a self-signed authority");
        let path =
            std::env::temp_dir().join(format!("agent-runtime-other-ca-{}.pem", Uuid::new_v4()));
        std::fs::write(&path, certificate.pem()).expect("writing the authority");
        Self(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().expect("a UTF-8 path")
    }
}

impl Drop for OtherAuthority {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn server_ca_path() -> String {
    server_ca().to_str().expect("a UTF-8 path").to_owned()
}

#[tokio::test]
async fn require_encrypts_and_disable_stays_plain() {
    let database = TestDatabase::new().await;
    assert!(encrypted(&database.url_with_tls(&[("sslmode", "require")])).await);
    assert!(!encrypted(&database.url_with_tls(&[("sslmode", "disable")])).await);
}

#[tokio::test]
async fn verify_full_connects_to_the_server_its_authority_signed() {
    let database = TestDatabase::new().await;
    let ca = server_ca_path();
    let url = database.url_with_tls(&[("sslmode", "verify-full"), ("sslrootcert", &ca)]);
    assert!(encrypted(&url).await);
}

#[tokio::test]
async fn verify_full_refuses_a_certificate_another_authority_signed() {
    let database = TestDatabase::new().await;
    let other = OtherAuthority::new();
    for mode in ["verify-full", "verify-ca"] {
        let url = database.url_with_tls(&[("sslmode", mode), ("sslrootcert", other.path())]);
        let error = open(&url).await.err().expect("refused");
        assert!(
            error.contains("invalid peer certificate") && error.contains("UnknownIssuer"),
            "{mode}: {error}"
        );
    }
}

#[tokio::test]
async fn verify_full_refuses_a_host_name_the_certificate_does_not_name() {
    let database = TestDatabase::new().await;
    let ca = server_ca_path();
    let url = misnamed(&database.url_with_tls(&[("sslmode", "verify-full"), ("sslrootcert", &ca)]));
    let error = open(&url).await.err().expect("refused");
    assert!(
        error.contains("not valid for name") && error.contains("not-the-database.invalid"),
        "{error}"
    );
}

#[tokio::test]
async fn verify_ca_and_require_with_a_root_certificate_check_the_chain_but_not_the_name() {
    let database = TestDatabase::new().await;
    let ca = server_ca_path();
    for mode in ["verify-ca", "require"] {
        let url = misnamed(&database.url_with_tls(&[("sslmode", mode), ("sslrootcert", &ca)]));
        assert!(encrypted(&url).await, "{mode}");
    }
}

#[tokio::test]
async fn verify_full_without_a_root_certificate_trusts_only_the_systems_authorities() {
    let database = TestDatabase::new().await;
    let url = database.url_with_tls(&[("sslmode", "verify-full")]);
    assert!(
        open(&url).await.is_err(),
        "a certificate of the test server's own authority passed for the system's"
    );
}

#[tokio::test]
async fn the_pool_the_migrations_and_the_notification_hub_connect_over_verified_tls() {
    let database = TestDatabase::new().await;
    let ca = server_ca_path();
    let url = database.url_with_tls(&[("sslmode", "verify-full"), ("sslrootcert", &ca)]);
    let connector = Connector::from_url(&url).expect("valid TLS settings");

    let applied = postgres_store::run_migrations(&connector)
        .await
        .expect("migrations over TLS");
    assert!(applied.is_empty(), "the template was migrated: {applied:?}");
    let pool = Database::connect(&connector, PoolSettings::default()).expect("pool");
    pool.ping().await.expect("a round trip through the pool");
    // Held until the sessions are read: dropping a hub closes its connection.
    let _hub = listening_hub(connector).await;

    let sessions = database.sessions().await;
    let listen = format!("LISTEN {NOTIFICATION_CHANNEL}");
    assert!(
        sessions
            .iter()
            .any(|session| session.last_query == listen && session.encrypted),
        "{sessions:?}"
    );
    assert!(
        sessions.iter().all(|session| session.encrypted),
        "{sessions:?}"
    );
}
