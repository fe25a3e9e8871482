//! `HttpResourceFetcher`: the requests an agent's x402 fetch makes, under the same guard as
//! webhook deliveries (addresses checked at every connection, literal ones before any), with only
//! same-origin redirects followed and the answer read within bounds.

use std::time::Duration;

use async_trait::async_trait;
use domain::x402::{
    FetchMethod, FETCH_FIRST_BYTE, FETCH_TOTAL, MAX_FETCHED_BYTES, MAX_FETCH_REDIRECTS,
};
use domain::{AttemptFailure, Targets};
use ports::{FetchError, ResourceFetcher, ResourceRequest, ResourceResponse};
use reqwest::{redirect, Method, Url};

use crate::poster::{describe, literal_refused, plain_http_to_public};
use crate::target::{CheckedResolver, TargetRefused};

/// How resources are fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchSettings {
    /// Which addresses a fetch may go to. Default `PublicOnly`.
    pub targets: Targets,
    /// Until the answer's head arrives. Default 15 s.
    pub first_byte: Duration,
    /// The whole request, the answer's body read. Default 30 s.
    pub total: Duration,
    /// The most bytes of an answer's body. Default 4 MiB.
    pub max_bytes: usize,
}

impl Default for FetchSettings {
    fn default() -> Self {
        Self {
            targets: Targets::PublicOnly,
            first_byte: FETCH_FIRST_BYTE,
            total: FETCH_TOTAL,
            max_bytes: MAX_FETCHED_BYTES,
        }
    }
}

#[derive(Debug, Clone)]
pub struct HttpResourceFetcher {
    client: reqwest::Client,
    settings: FetchSettings,
}

#[derive(Debug, thiserror::Error)]
#[error("the fetch HTTP client could not be built")]
pub struct InvalidFetchSettings(#[source] reqwest::Error);

impl HttpResourceFetcher {
    pub fn new(settings: FetchSettings) -> Result<Self, InvalidFetchSettings> {
        let client = reqwest::Client::builder()
            .dns_resolver(CheckedResolver {
                targets: settings.targets,
            })
            // A proxy would connect on our behalf to addresses we never checked.
            .no_proxy()
            // Another origin could be anywhere; a redirect there is the answer.
            .redirect(redirect::Policy::custom(|attempt| {
                let same_origin = attempt
                    .previous()
                    .first()
                    .is_some_and(|first| first.origin() == attempt.url().origin());
                match same_origin && attempt.previous().len() <= MAX_FETCH_REDIRECTS {
                    true => attempt.follow(),
                    false => attempt.stop(),
                }
            }))
            // A kept connection would skip the resolution, and the check, of the next request.
            .pool_max_idle_per_host(0)
            .build()
            .map_err(InvalidFetchSettings)?;
        Ok(Self { client, settings })
    }

    async fn request(&self, request: ResourceRequest) -> Result<ResourceResponse, FetchError> {
        let url = Url::parse(&request.url)
            .map_err(|error| FetchError::Refused(format!("invalid URL: {error}")))?;
        // reqwest connects to an address written in the URL without asking the resolver.
        if let Some(refused) = literal_refused(&url, self.settings.targets) {
            return Err(FetchError::Refused(refused.to_string()));
        }
        if let Some((failure, detail)) = plain_http_to_public(&url).await {
            return Err(match failure {
                AttemptFailure::PublicNeedsHttps => FetchError::Refused(detail),
                _ => FetchError::Failed(detail),
            });
        }
        let method = match request.method {
            FetchMethod::Get => Method::GET,
            FetchMethod::Post => Method::POST,
            FetchMethod::Put => Method::PUT,
            FetchMethod::Delete => Method::DELETE,
        };
        let mut sent = self.client.request(method, url);
        for (name, value) in &request.headers {
            sent = sent.header(name.as_str(), value.as_str());
        }
        if let Some(body) = request.body {
            sent = sent.body(body);
        }
        let first_byte = self.settings.first_byte;
        let mut response = match tokio::time::timeout(first_byte, sent.send()).await {
            Err(_) => {
                return Err(FetchError::Failed(format!(
                    "no answer within {} s",
                    first_byte.as_secs()
                )))
            }
            Ok(Err(error)) => {
                return Err(match TargetRefused::within(&error) {
                    Some(refused) => FetchError::Refused(refused.to_string()),
                    None => FetchError::Failed(describe(error)),
                })
            }
            Ok(Ok(response)) => response,
        };
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .filter_map(|(name, value)| {
                value
                    .to_str()
                    .ok()
                    .map(|value| (name.as_str().to_owned(), value.to_owned()))
            })
            .collect();
        let max_bytes = self.settings.max_bytes;
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| FetchError::Failed(describe(error)))?
        {
            if body.len() + chunk.len() > max_bytes {
                return Err(FetchError::TooLarge { max_bytes });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(ResourceResponse {
            status,
            headers,
            body,
        })
    }
}

#[async_trait]
impl ResourceFetcher for HttpResourceFetcher {
    #[tracing::instrument(level = "debug", skip_all, fields(method = request.method.as_str()))]
    async fn fetch(&self, request: ResourceRequest) -> Result<ResourceResponse, FetchError> {
        let total = self.settings.total;
        tokio::time::timeout(total, self.request(request))
            .await
            .unwrap_or_else(|_| {
                Err(FetchError::Failed(format!(
                    "the resource took over {} s",
                    total.as_secs()
                )))
            })
    }
}
