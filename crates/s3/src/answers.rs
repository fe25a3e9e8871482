//! The store's error answers, told to the adapter by their status alone.
//!
//! object_store keeps the status of an error answer in a private type and shows it only in its
//! error's text, beside the answer's body, which may echo the request's signed headers (a session
//! token among them). So the adapter's HTTP client turns each error answer the adapter must tell
//! apart into a transport error carrying its status and nothing of its body: a server error to
//! report as unavailability, a range past the end to read as no piece.

use async_trait::async_trait;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse, HttpService,
    ReqwestConnector,
};
use object_store::ClientOptions;

/// An error answer, by its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the store answered {0}")]
pub(crate) struct ErrorAnswer(pub u16);

impl ErrorAnswer {
    /// A range starting at or past the object's end.
    pub const RANGE_NOT_SATISFIABLE: u16 = 416;

    /// Whether a later try may be answered otherwise: the store's own failure or its asking to
    /// slow down.
    pub fn transient(self) -> bool {
        self.0 >= 500 || matches!(self.0, 408 | 429)
    }

    /// The answer in `error`'s chain of sources, if it was one.
    pub fn of(error: &(dyn std::error::Error + 'static)) -> Option<Self> {
        sources(error).find_map(|source| source.downcast_ref::<Self>().copied())
    }
}

/// `error` and each of its sources in turn.
pub(crate) fn sources<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(error), |error| error.source())
}

/// object_store's reqwest client behind `ErrorStatuses`.
#[derive(Debug, Default)]
pub(crate) struct ErrorStatusConnector;

impl HttpConnector for ErrorStatusConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let client = ReqwestConnector::default().connect(options)?;
        Ok(HttpClient::new(ErrorStatuses(client)))
    }
}

/// Hands on every answer but the error answers the library acts on itself: 403 (the fallback of
/// an instance's credentials) and 404 (an object not found).
#[derive(Debug)]
struct ErrorStatuses(HttpClient);

#[async_trait]
impl HttpService for ErrorStatuses {
    async fn call(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let response = self.0.execute(request).await?;
        let status = response.status().as_u16();
        if status < 400 || matches!(status, 403 | 404) {
            return Ok(response);
        }
        let answer = ErrorAnswer(status);
        // The library tries a request again after a failure of kind `Request`, as it does after a
        // transient status, and never after one of kind `Unknown`.
        let kind = if answer.transient() {
            HttpErrorKind::Request
        } else {
            HttpErrorKind::Unknown
        };
        Err(HttpError::new(kind, answer))
    }
}
