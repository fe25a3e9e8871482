//! Requests to the resources agents pay for over x402, made on their behalf.

use async_trait::async_trait;
use domain::x402::FetchMethod;

/// One request to a resource, as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRequest {
    pub url: String,
    pub method: FetchMethod,
    /// Names lower-cased; the payment header among them on a paid request.
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
}

/// The resource's answer, read within its bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceResponse {
    pub status: u16,
    /// Every header of the answer, names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl ResourceResponse {
    /// The value of the header `name` (lower-case), if the answer has one.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header == name)
            .map(|(_, value)| value.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The URL's host is an address requests may not go to (private, loopback, link-local,
    /// metadata), or plain http to a public one.
    #[error("{0}")]
    Refused(String),
    /// The answer's body is longer than `max_bytes`.
    #[error("the answer is longer than {max_bytes} bytes")]
    TooLarge { max_bytes: usize },
    /// No answer: the connection failed, or the resource took too long.
    #[error("{0}")]
    Failed(String),
}

/// Makes requests to paid resources: every address checked at each connection, only
/// same-origin redirects followed, bounded in time and size.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait ResourceFetcher: Send + Sync {
    async fn fetch(&self, request: ResourceRequest) -> Result<ResourceResponse, FetchError>;
}
