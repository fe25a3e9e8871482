//! TLS to PostgreSQL as libpq's `sslmode` and `sslrootcert` describe it (decision 0034), on the
//! rustls with aws-lc-rs that the service's other TLS clients use. tokio-postgres knows only
//! `disable`, `prefer` and `require`, and no `sslrootcert`: both are read here and taken out of
//! the URL before tokio-postgres reads the rest.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use percent_encoding::percent_decode_str;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{verify_server_cert_signed_by_trust_anchor, WebPkiServerVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::connector::InvalidDatabaseUrl;

/// The `sslmode` values offered, as libpq spells them. libpq's `allow` (plain first, encrypted if
/// the server insists) is not: tokio-postgres cannot start plain and then encrypt.
const SSL_MODES: &str = "disable, prefer, require, verify-ca or verify-full";

/// The `sslrootcert` value that names the system's trusted authorities rather than a file.
const SYSTEM_ROOTS: &str = "system";

/// What the URL asks of TLS.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Tls {
    /// `disable`: never encrypted.
    Off,
    /// `prefer` (libpq's default): encrypted when the server offers it, plain otherwise.
    Preferred(CertificateCheck),
    /// `require`, `verify-ca`, `verify-full`: encrypted or no connection.
    Required(CertificateCheck),
}

/// How the server's certificate is checked on an encrypted connection.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum CertificateCheck {
    /// Not at all (`prefer` and `require` without `sslrootcert`): the traffic is encrypted, but
    /// whoever sits on the path could stand in for the server.
    None,
    /// Its chain to the authorities in this PEM file, whatever host it names (`verify-ca`, and
    /// `prefer` or `require` with `sslrootcert`, as in libpq).
    Chain(PathBuf),
    /// Its chain and the host name of the URL (`verify-full`).
    ChainAndHostName(TrustedRoots),
}

/// The authorities a `verify-full` connection trusts.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum TrustedRoots {
    /// The system's, through the platform verifier: no `sslrootcert`, or `sslrootcert=system`.
    System,
    /// Those of a PEM file.
    File(PathBuf),
}

/// Takes `sslmode` and `sslrootcert` out of a database URL: returns the URL without them, for
/// tokio-postgres, and the TLS they ask for. Pure: nothing is read yet.
pub(crate) fn split_tls_settings(url: &str) -> Result<(String, Tls), InvalidDatabaseUrl> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), Tls::Preferred(CertificateCheck::None)));
    };
    let mut ssl_mode = None;
    let mut root_certificates = None;
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (raw_key, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
        // As in libpq, the last occurrence wins.
        match percent_decode_str(raw_key).decode_utf8_lossy().as_ref() {
            "sslmode" => ssl_mode = Some(decoded(raw_value, "sslmode")?),
            "sslrootcert" => root_certificates = Some(decoded(raw_value, "sslrootcert")?),
            _ => kept.push(pair),
        }
    }
    let url = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    // An empty value is no value, as in libpq.
    let given = |value: Option<String>| value.filter(|value| !value.is_empty());
    Ok((
        url,
        tls(given(ssl_mode).as_deref(), given(root_certificates))?,
    ))
}

fn decoded(raw: &str, parameter: &'static str) -> Result<String, InvalidDatabaseUrl> {
    percent_decode_str(raw)
        .decode_utf8()
        .map(|text| text.into_owned())
        .map_err(|_| InvalidDatabaseUrl::NotUtf8(parameter))
}

/// libpq's rules: `sslrootcert` makes `prefer` and `require` check the chain; the system's roots
/// are trusted only with the host name checked too (any certificate an authority of the system
/// ever signed would pass a check of the chain alone), so `verify-ca` needs a file.
fn tls(
    ssl_mode: Option<&str>,
    root_certificates: Option<String>,
) -> Result<Tls, InvalidDatabaseUrl> {
    let system_roots = root_certificates.as_deref() == Some(SYSTEM_ROOTS);
    let ssl_mode = match ssl_mode {
        // libpq's default, made verify-full by sslrootcert=system.
        None if system_roots => "verify-full",
        None => "prefer",
        Some(mode) => mode,
    };
    if system_roots && ssl_mode != "verify-full" {
        return Err(InvalidDatabaseUrl::SystemRootsNeedVerifyFull(
            ssl_mode.to_owned(),
        ));
    }
    let file = root_certificates
        .filter(|value| value != SYSTEM_ROOTS)
        .map(PathBuf::from);
    Ok(match ssl_mode {
        "disable" => Tls::Off,
        "prefer" => Tls::Preferred(chain_if_given(file)),
        "require" => Tls::Required(chain_if_given(file)),
        "verify-ca" => Tls::Required(CertificateCheck::Chain(
            file.ok_or(InvalidDatabaseUrl::VerifyCaWithoutRootCertificates)?,
        )),
        "verify-full" => Tls::Required(CertificateCheck::ChainAndHostName(
            file.map_or(TrustedRoots::System, TrustedRoots::File),
        )),
        other => {
            return Err(InvalidDatabaseUrl::SslMode {
                given: other.to_owned(),
                offered: SSL_MODES,
            })
        }
    })
}

fn chain_if_given(file: Option<PathBuf>) -> CertificateCheck {
    file.map_or(CertificateCheck::None, CertificateCheck::Chain)
}

/// The rustls configuration that checks the server's certificate as `check` says, reading the
/// roots it names now, so that an unreadable file stops start-up.
pub(crate) fn client_config(check: &CertificateCheck) -> Result<ClientConfig, InvalidDatabaseUrl> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let verifier: Arc<dyn ServerCertVerifier> = match check {
        CertificateCheck::None => Arc::new(WithoutHostName {
            roots: None,
            algorithms: provider.signature_verification_algorithms,
        }),
        CertificateCheck::Chain(path) => Arc::new(WithoutHostName {
            roots: Some(roots_of(path)?),
            algorithms: provider.signature_verification_algorithms,
        }),
        CertificateCheck::ChainAndHostName(TrustedRoots::File(path)) => {
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots_of(path)?), provider.clone())
                .build()
                .map_err(|error| InvalidDatabaseUrl::Tls(error.to_string()))?
        }
        CertificateCheck::ChainAndHostName(TrustedRoots::System) => Arc::new(
            rustls_platform_verifier::Verifier::new(provider.clone())
                .map_err(|error| InvalidDatabaseUrl::SystemRoots(error.to_string()))?,
        ),
    };
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| InvalidDatabaseUrl::Tls(error.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    // PostgreSQL 17 requires this ALPN name on a direct TLS connection (sslnegotiation=direct);
    // older servers ignore it.
    config.alpn_protocols = vec![b"postgresql".to_vec()];
    Ok(config)
}

fn roots_of(path: &Path) -> Result<RootCertStore, InvalidDatabaseUrl> {
    let unreadable = |reason: String| InvalidDatabaseUrl::RootCertificates {
        path: path.to_owned(),
        reason,
    };
    let mut roots = RootCertStore::empty();
    for certificate in
        CertificateDer::pem_file_iter(path).map_err(|error| unreadable(error.to_string()))?
    {
        let certificate = certificate.map_err(|error| unreadable(error.to_string()))?;
        roots
            .add(certificate)
            .map_err(|error| unreadable(error.to_string()))?;
    }
    if roots.is_empty() {
        return Err(unreadable("it holds no PEM certificate".into()));
    }
    Ok(roots)
}

/// The checks of libpq's modes below `verify-full`: the chain to `roots` when there are roots,
/// no check of the certificate without; never its host name. The handshake's signatures are
/// checked either way, so the server holds the key of the certificate it shows.
#[derive(Debug)]
struct WithoutHostName {
    roots: Option<RootCertStore>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for WithoutHostName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(roots) = &self.roots {
            let certificate = ParsedCertificate::try_from(end_entity)?;
            verify_server_cert_signed_by_trust_anchor(
                &certificate,
                roots,
                intermediates,
                now,
                self.algorithms.all,
            )?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, certificate, signature, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, certificate, signature, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(url: &str) -> (String, Tls) {
        split_tls_settings(url).unwrap_or_else(|error| panic!("{url}: {error}"))
    }

    fn refused(url: &str) -> String {
        match split_tls_settings(url) {
            Ok((_, tls)) => panic!("{url} was accepted as {tls:?}"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn without_sslmode_tls_is_preferred_unchecked_as_in_libpq() {
        assert_eq!(
            settings("postgres://u:p@db.example.com/app"),
            (
                "postgres://u:p@db.example.com/app".to_owned(),
                Tls::Preferred(CertificateCheck::None)
            )
        );
    }

    #[test]
    fn each_mode_asks_for_its_check() {
        for (query, expected) in [
            ("sslmode=disable", Tls::Off),
            ("sslmode=prefer", Tls::Preferred(CertificateCheck::None)),
            ("sslmode=require", Tls::Required(CertificateCheck::None)),
            (
                "sslmode=verify-ca&sslrootcert=/etc/ca.pem",
                Tls::Required(CertificateCheck::Chain("/etc/ca.pem".into())),
            ),
            (
                "sslmode=verify-full&sslrootcert=/etc/ca.pem",
                Tls::Required(CertificateCheck::ChainAndHostName(TrustedRoots::File(
                    "/etc/ca.pem".into(),
                ))),
            ),
            (
                "sslmode=verify-full",
                Tls::Required(CertificateCheck::ChainAndHostName(TrustedRoots::System)),
            ),
        ] {
            let (_, tls) = settings(&format!("postgres://h/d?{query}"));
            assert_eq!(tls, expected, "{query}");
        }
    }

    #[test]
    fn a_root_certificate_file_makes_require_and_prefer_check_the_chain() {
        for mode in ["require", "prefer"] {
            let (_, tls) = settings(&format!("postgres://h/d?sslmode={mode}&sslrootcert=ca.pem"));
            let check = match tls {
                Tls::Required(check) | Tls::Preferred(check) => check,
                Tls::Off => panic!("{mode} turned TLS off"),
            };
            assert_eq!(check, CertificateCheck::Chain("ca.pem".into()), "{mode}");
        }
        assert_eq!(
            settings("postgres://h/d?sslmode=disable&sslrootcert=ca.pem").1,
            Tls::Off
        );
    }

    #[test]
    fn the_tls_parameters_leave_the_url_and_the_others_stay_as_written() {
        assert_eq!(
            settings(
                "postgres://u@h:5432/d?application_name=a%20b&sslmode=require&connect_timeout=3&sslrootcert=%2Fca.pem"
            ),
            (
                "postgres://u@h:5432/d?application_name=a%20b&connect_timeout=3".to_owned(),
                Tls::Required(CertificateCheck::Chain("/ca.pem".into()))
            )
        );
        assert_eq!(
            settings("postgres://h/d?sslmode=disable").0,
            "postgres://h/d"
        );
    }

    #[test]
    fn an_empty_parameter_is_no_parameter() {
        assert_eq!(
            settings("postgres://h/d?sslmode=&sslrootcert=").1,
            Tls::Preferred(CertificateCheck::None)
        );
    }

    #[test]
    fn the_last_occurrence_of_a_parameter_wins() {
        assert_eq!(
            settings("postgres://h/d?sslmode=disable&sslmode=require").1,
            Tls::Required(CertificateCheck::None)
        );
    }

    #[test]
    fn system_roots_mean_verify_full() {
        let system = Tls::Required(CertificateCheck::ChainAndHostName(TrustedRoots::System));
        assert_eq!(settings("postgres://h/d?sslrootcert=system").1, system);
        assert_eq!(
            settings("postgres://h/d?sslmode=verify-full&sslrootcert=system").1,
            system
        );
        let message = refused("postgres://h/d?sslmode=require&sslrootcert=system");
        assert!(
            message.contains("sslrootcert=system") && message.contains("verify-full"),
            "{message}"
        );
    }

    #[test]
    fn an_unknown_mode_is_refused_naming_sslmode_and_the_modes_offered() {
        for mode in ["allow", "verify_full", "REQUIRE"] {
            let message = refused(&format!("postgres://u:hunter2@h/d?sslmode={mode}"));
            assert!(message.contains("sslmode"), "{message}");
            assert!(message.contains("verify-full"), "{message}");
            assert!(!message.contains("hunter2"), "{message}");
        }
    }

    #[test]
    fn verify_ca_needs_a_root_certificate_file() {
        let message = refused("postgres://h/d?sslmode=verify-ca");
        assert!(
            message.contains("verify-ca") && message.contains("sslrootcert"),
            "{message}"
        );
    }

    #[test]
    fn a_parameter_that_is_not_utf8_is_refused() {
        let message = refused("postgres://h/d?sslrootcert=%FF");
        assert!(message.contains("sslrootcert"), "{message}");
    }

    #[test]
    fn an_unreadable_root_certificate_file_is_named() {
        let missing = std::env::temp_dir().join("agent-runtime-no-such-ca.pem");
        let message = client_config(&CertificateCheck::Chain(missing.clone()))
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(message.contains("sslrootcert"), "{message}");
        assert!(
            message.contains(&missing.display().to_string()),
            "{message}"
        );
    }

    #[test]
    fn a_file_without_certificates_is_refused() {
        let empty =
            std::env::temp_dir().join(format!("agent-runtime-empty-ca-{}.pem", std::process::id()));
        std::fs::write(&empty, "not a certificate\n").expect("write");
        let message = client_config(&CertificateCheck::ChainAndHostName(TrustedRoots::File(
            empty.clone(),
        )))
        .err()
        .map(|error| error.to_string())
        .unwrap_or_default();
        std::fs::remove_file(&empty).expect("remove");
        assert!(message.contains("no PEM certificate"), "{message}");
    }
}
