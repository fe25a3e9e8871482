//! The one place a database URL becomes a connection: the pool's, the notification hub's, the
//! migrations' and the tests' connections all open here, with the TLS the URL asks for.

use std::error::Error;
use std::path::PathBuf;

use diesel::ConnectionResult;
use diesel_async::AsyncPgConnection;
use tokio_postgres::config::SslMode;
use tokio_postgres::tls::MakeTlsConnect;
use tokio_postgres::{Client, Connection, Socket};
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
}

/// The stream of a connection, encrypted or not.
pub(crate) type Stream = <MakeRustlsConnect as MakeTlsConnect<Socket>>::Stream;

/// How to reach the database: the URL's settings for tokio-postgres and the TLS connector of its
/// `sslmode` and `sslrootcert`. Cheap to clone.
#[derive(Clone)]
pub struct Connector {
    config: tokio_postgres::Config,
    /// Also with `sslmode=disable`, when tokio-postgres never calls it: one connector type keeps
    /// one connection type for every mode.
    tls: MakeRustlsConnect,
}

impl Connector {
    /// Reads the URL and every file its TLS settings name; nothing connects yet.
    pub fn from_url(url: &str) -> Result<Self, InvalidDatabaseUrl> {
        let (driver_url, tls) = split_tls_settings(url)?;
        let mut config: tokio_postgres::Config =
            driver_url.parse().map_err(|error: tokio_postgres::Error| {
                InvalidDatabaseUrl::Driver(with_causes(&error))
            })?;
        let (ssl_mode, check) = match tls {
            Tls::Off => (SslMode::Disable, CertificateCheck::None),
            Tls::Preferred(check) => (SslMode::Prefer, check),
            Tls::Required(check) => (SslMode::Require, check),
        };
        config.ssl_mode(ssl_mode);
        Ok(Self {
            config,
            tls: MakeRustlsConnect::new(client_config(&check)?),
        })
    }

    /// A diesel connection.
    pub async fn open(&self) -> ConnectionResult<AsyncPgConnection> {
        let (client, connection) = self
            .open_client()
            .await
            .map_err(|error| diesel::ConnectionError::BadConnection(with_causes(&error)))?;
        AsyncPgConnection::try_from_client_and_connection(client, connection).await
    }

    /// A tokio-postgres client and its connection, which the caller must poll.
    pub(crate) async fn open_client(
        &self,
    ) -> Result<(Client, Connection<Socket, Stream>), tokio_postgres::Error> {
        self.config.connect(self.tls.clone()).await
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
