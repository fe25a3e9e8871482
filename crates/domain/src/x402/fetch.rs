//! A paid resource fetched on the agent's behalf (`POST /v1/wallet/x402/fetch`): the methods and
//! headers an agent may send, the bounds of what is sent and read, and what of the answer is
//! shown.

use std::time::Duration;

/// The most bytes of a request body the agent may send.
pub const MAX_FETCH_BODY_BYTES: usize = 1024 * 1024;
/// The most bytes of an answer's body read; a longer one is a failure.
pub const MAX_FETCHED_BYTES: usize = 4 * 1024 * 1024;
/// How long the resource may take to start answering.
pub const FETCH_FIRST_BYTE: Duration = Duration::from_secs(15);
/// How long one request to the resource may take in all.
pub const FETCH_TOTAL: Duration = Duration::from_secs(30);
/// The most headers the agent may send.
pub const MAX_FETCH_HEADERS: usize = 32;
/// The most bytes of one header's value.
pub const MAX_FETCH_HEADER_VALUE_BYTES: usize = 8 * 1024;
/// The most same-origin redirects followed.
pub const MAX_FETCH_REDIRECTS: usize = 5;

/// The headers of an answer that are shown to the agent; no other is.
pub const SHOWN_RESPONSE_HEADERS: [&str; 5] = [
    "content-type",
    "content-length",
    "payment-response",
    "etag",
    "cache-control",
];

/// Headers the agent may not set: credentials and the resource's identity are not the agent's to
/// send through this service, hop-by-hop headers belong to the connection, and the payment
/// headers and the body's length are this service's.
const REFUSED_HEADERS: [&str; 15] = [
    "authorization",
    "cookie",
    "host",
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
    "payment-signature",
    "x-payment",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchMethod {
    Get,
    Post,
    Put,
    Delete,
}

impl FetchMethod {
    /// GET, POST, PUT or DELETE, as HTTP writes them.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "GET" => Some(Self::Get),
            "POST" => Some(Self::Post),
            "PUT" => Some(Self::Put),
            "DELETE" => Some(Self::Delete),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Put => "PUT",
            Self::Delete => "DELETE",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchHeaderError {
    #[error("at most {MAX_FETCH_HEADERS} headers")]
    TooMany,
    #[error("{0:?} is not a header name")]
    BadName(String),
    #[error("the header {0} may not be set: credentials, the host, hop-by-hop and payment headers are not sent for the agent")]
    Refused(String),
    #[error("the header {0} has a value with a line break or control character, or over {MAX_FETCH_HEADER_VALUE_BYTES} bytes")]
    BadValue(String),
}

/// `headers` as they may be sent, names lower-cased; the first header that may not is the error.
pub fn check_fetch_headers(
    headers: impl IntoIterator<Item = (String, String)>,
) -> Result<Vec<(String, String)>, FetchHeaderError> {
    let mut checked = Vec::new();
    for (name, value) in headers {
        if checked.len() == MAX_FETCH_HEADERS {
            return Err(FetchHeaderError::TooMany);
        }
        let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if name.is_empty() || !name.chars().all(tchar) {
            return Err(FetchHeaderError::BadName(name));
        }
        let name = name.to_ascii_lowercase();
        if REFUSED_HEADERS.contains(&name.as_str()) || name.starts_with("proxy-") {
            return Err(FetchHeaderError::Refused(name));
        }
        let printable = |c: char| c == '\t' || !c.is_control();
        if value.len() > MAX_FETCH_HEADER_VALUE_BYTES || !value.chars().all(printable) {
            return Err(FetchHeaderError::BadValue(name));
        }
        checked.push((name, value));
    }
    Ok(checked)
}

/// Whether an answer after payment means the resource failed: it asked for payment again, or
/// failed on its side. The payment stays recorded either way.
pub fn failed_after_payment(status: u16) -> bool {
    status == 402 || status >= 500
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(name: &str, value: &str) -> (String, String) {
        (name.to_owned(), value.to_owned())
    }

    #[test]
    fn ordinary_headers_pass_with_their_names_lower_cased() {
        let checked = check_fetch_headers([
            header("Accept", "application/json"),
            header("X-Request-Id", "abc\tdef"),
        ]);
        assert_eq!(
            checked,
            Ok(vec![
                header("accept", "application/json"),
                header("x-request-id", "abc\tdef")
            ])
        );
    }

    #[test]
    fn credentials_the_host_hop_by_hop_and_payment_headers_are_refused_in_any_case() {
        for name in [
            "Authorization",
            "COOKIE",
            "Host",
            "Connection",
            "Transfer-Encoding",
            "Proxy-Anything",
            "PAYMENT-SIGNATURE",
            "X-Payment",
            "Content-Length",
        ] {
            assert_eq!(
                check_fetch_headers([header(name, "x")]),
                Err(FetchHeaderError::Refused(name.to_ascii_lowercase())),
                "{name}"
            );
        }
    }

    #[test]
    fn a_bad_name_a_line_break_a_long_value_or_too_many_headers_are_refused() {
        assert!(matches!(
            check_fetch_headers([header("Bad Name", "x")]),
            Err(FetchHeaderError::BadName(_))
        ));
        assert!(matches!(
            check_fetch_headers([header("X-Split", "a\r\nInjected: yes")]),
            Err(FetchHeaderError::BadValue(_))
        ));
        assert!(matches!(
            check_fetch_headers([header(
                "X-Long",
                &"a".repeat(MAX_FETCH_HEADER_VALUE_BYTES + 1)
            )]),
            Err(FetchHeaderError::BadValue(_))
        ));
        let many = (0..=MAX_FETCH_HEADERS).map(|n| header(&format!("x-{n}"), "v"));
        assert_eq!(check_fetch_headers(many), Err(FetchHeaderError::TooMany));
    }

    #[test]
    fn only_get_post_put_and_delete_are_methods_of_a_fetch() {
        for method in ["GET", "POST", "PUT", "DELETE"] {
            assert_eq!(
                FetchMethod::parse(method).map(FetchMethod::as_str),
                Some(method)
            );
        }
        for method in ["get", "PATCH", "CONNECT", "TRACE", ""] {
            assert_eq!(FetchMethod::parse(method), None, "{method}");
        }
    }

    #[test]
    fn a_second_402_or_a_server_error_after_payment_is_a_failure() {
        assert!(failed_after_payment(402));
        assert!(failed_after_payment(503));
        assert!(!failed_after_payment(200));
        assert!(!failed_after_payment(404));
    }
}
